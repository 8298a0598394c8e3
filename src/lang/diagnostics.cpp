#include "lang/diagnostics.hpp"

#include <fmt/format.h>

#include <algorithm>

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
    // A long line (generated code, a sum of thousands of terms) is shown around the column.
    constexpr size_t kWindow = 60;
    std::string shown = source_line;
    size_t caret = col > 1 ? static_cast<size_t>(col - 1) : 0;
    if (shown.size() > 2 * kWindow + 20 && caret < shown.size()) {
      size_t from = caret > kWindow ? caret - kWindow : 0;
      size_t to = std::min(shown.size(), caret + kWindow);
      std::string window = from ? "..." : "";
      window.append(shown, from, to - from);
      if (to < shown.size()) window += "...";
      shown = std::move(window);
      caret = caret - from + (from ? 3 : 0);
    }
    out += fmt::format("\n    {}\n    {}^", shown, std::string(caret, ' '));
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
