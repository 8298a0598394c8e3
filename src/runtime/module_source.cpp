#include "runtime/module_source.hpp"

#include <algorithm>
#include <bit>

#include "ir/serialize.hpp"
#include "lang/parser.hpp"
#include "runtime/module_state.hpp"

namespace tack::detail {
namespace {

// Removes the indentation common to every non-blank line (a method or a nested definition), and
// returns how much was removed.
int dedent(std::string& text) {
  int common = -1;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    size_t first = text.find_first_not_of(" \t\r", pos);
    if (first < end && text[first] != '#') {
      int indent = static_cast<int>(first - pos);
      common = common < 0 ? indent : std::min(common, indent);
    }
    pos = end + 1;
  }
  if (common <= 0) return 0;
  std::string out;
  pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    size_t drop = std::min<size_t>(common, end - pos);
    out.append(text, pos + drop, end - pos - drop);
    if (end < text.size()) out += '\n';
    pos = end + 1;
  }
  text = std::move(out);
  return common;
}

}  // namespace

std::shared_ptr<const SourceFile> function_source(std::string source, const std::string& filename,
                                                  int first_line) {
  int removed = dedent(source);
  source.insert(0, static_cast<size_t>(std::max(first_line - 1, 0)), '\n');
  return std::make_shared<const SourceFile>(filename, std::move(source), removed);
}

lang::ExternalSymbol to_external(const ExternalName& n) {
  lang::ExternalSymbol x;
  using K = ExternalName::Kind;
  using SK = lang::Symbol::Kind;
  switch (n.kind) {
    case K::Unknown:
      x.symbol.kind = SK::Unknown;
      break;
    case K::HostValue:
      x.symbol.kind = SK::HostValue;
      break;
    case K::TackModule:
      x.symbol.kind = SK::TackModule;
      break;
    case K::MathModule:
      x.symbol.kind = SK::MathModule;
      break;
    case K::TackMember:
      x.symbol.kind = SK::TackMember;
      x.symbol.member = n.member;
      break;
    case K::ForeignModule:
      x.symbol.kind = SK::ForeignModule;
      x.symbol.member = n.member;
      break;
    case K::Constant:
      x.symbol.kind = SK::Constant;
      x.constant = detail::to_constant(n, "");
      break;
    case K::Function:
      x.symbol.kind = SK::Function;
      x.function_module = std::make_unique<ast::Module>(
          lang::parse_module(function_source(n.source, n.filename, n.first_line)));
      break;
  }
  return x;
}

std::string answer_text(const ExternalName& n) {
  std::string out;
  ir::ByteWriter w(out);
  w.u8(static_cast<uint8_t>(n.kind));
  w.u8(n.is_float);
  w.u8(n.is_bool);
  w.u8(n.is_big);
  w.u64(static_cast<uint64_t>(n.int_value));
  w.u64(n.uint_value);
  w.u64(std::bit_cast<uint64_t>(n.float_value));
  w.str(n.dtype);
  w.u32(static_cast<uint32_t>(n.components.size()));
  for (const ExternalName& c : n.components) w.str(answer_text(c));
  w.str(n.source);
  w.str(n.filename);
  w.u32(static_cast<uint32_t>(n.first_line));
  w.str(n.member);
  return out;
}

ModuleSource::ModuleSource(std::shared_ptr<const SourceFile> file,
                           std::shared_ptr<const lang::ResolvedModule> module)
    : file_(std::move(file)), module_(std::move(module)) {}

ModuleSource::ModuleSource(std::shared_ptr<const SourceFile> file, NameResolver resolve)
    : file_(std::move(file)), resolve_(std::move(resolve)), answers_(std::make_shared<Answers>()) {}

std::shared_ptr<const lang::ResolvedModule> ModuleSource::module() const {
  std::lock_guard lock(mutex_);
  if (module_) return module_;
  // Each answer is noted in the order asked, for the records of the variants specialized from it.
  lang::ExternalResolver external = [resolve = resolve_,
                                     answers = answers_](const std::string& name) {
    ExternalName n = resolve(name);
    {
      std::lock_guard lock(answers->mutex);
      answers->list.emplace_back(name, answer_text(n));
    }
    return to_external(n);
  };
  module_ =
      std::make_shared<const lang::ResolvedModule>(lang::parse_module(file_), std::move(external));
  return module_;
}

std::vector<std::pair<std::string, std::string>> ModuleSource::answers() const {
  if (!answers_) return {};
  std::lock_guard lock(answers_->mutex);
  return answers_->list;
}

std::string ModuleSource::ask(const std::string& name) const {
  return answer_text(resolve_(name));
}

}  // namespace tack::detail
