#include "lang/diagnostics.hpp"

#include <fmt/format.h>

namespace tack {
namespace {

std::string format_report(const std::string& file, const std::string& kernel, int line, int col,
                          const std::string& message, const std::string& hint,
                          const std::string& source_line, const char* what) {
  std::string where = kernel.empty() || kernel == "<module>"
                          ? std::string()
                          : fmt::format(" in {} '{}'", what, kernel);
  std::string out = fmt::format("{}:{}:{}: error{}: {}", file, line, col, where, message);
  if (!source_line.empty()) {
    out += fmt::format("\n    {}\n    {}^", source_line, std::string(col > 1 ? col - 1 : 0, ' '));
  }
  if (!hint.empty()) out += fmt::format("\n  hint: {}", hint);
  return out;
}

}  // namespace

CompileError::CompileError(std::string file, std::string kernel, int line, int col,
                           std::string message, std::string hint, std::string source_line,
                           const char* what)
    : Error(format_report(file, kernel, line, col, message, hint, source_line, what)),
      file_(std::move(file)),
      kernel_(std::move(kernel)),
      line_(line),
      col_(col),
      message_(std::move(message)),
      hint_(std::move(hint)) {}

void throw_compile_error(const SourceFile& file, const std::string& kernel, SourceLoc loc,
                         const std::string& message, const std::string& hint, const char* what) {
  std::string line(file.line(loc.line));
  if (!line.empty()) line.insert(0, static_cast<size_t>(file.column_offset()), ' ');
  throw CompileError(file.name(), kernel, loc.line, loc.col + file.column_offset(), message, hint,
                     line, what);
}

}  // namespace tack
