#include "lang/load.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>

#include "lang/parser.hpp"
#include "tack/error.hpp"

namespace tack::lang {
namespace {

// A character of a name as the lexer reads names: bytes past ASCII included (the parser then says
// what it thinks of them).
bool is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}

// The name `def` introduces on the line at `text`, or "" when the line is not a definition.
std::string_view defined_name(std::string_view text) {
  if (text.substr(0, 3) != "def" || text.size() < 4 || (text[3] != ' ' && text[3] != '\t'))
    return {};
  size_t i = 4;
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
  const size_t start = i;
  while (i < text.size() && is_word_char(text[i])) ++i;
  if (i == start || (text[start] >= '0' && text[start] <= '9')) return {};
  return text.substr(start, i - start);
}

std::shared_ptr<const ResolvedModule> parse_whole(std::shared_ptr<const SourceFile> file) {
  return std::make_shared<const ResolvedModule>(parse_module(std::move(file)));
}

// The names a module's imports, assignments and classes bind (as ResolvedModule binds them).
std::set<std::string> bound_names(const ast::Module& m) {
  std::set<std::string> out;
  for (const ast::Import& imp : m.imports) {
    if (!imp.is_from) {
      out.insert(imp.alias.empty() ? imp.module.substr(0, imp.module.find('.')) : imp.alias);
      continue;
    }
    for (const auto& [name, alias] : imp.names) out.insert(alias.empty() ? name : alias);
  }
  for (const ast::GlobalAssign& g : m.globals) out.insert(g.name);
  for (const auto& c : m.classes) out.insert(c->name);
  return out;
}

// Where the indentation of the line at `pos` ends, and its width in characters. A form feed resets
// the width, as Python's tokenizer (and lang/lexer.cpp) reset it: "\f@tack.kernel" is at column 0.
struct Indentation {
  size_t end = 0;
  size_t width = 0;
};
Indentation indentation(std::string_view text, size_t pos) {
  Indentation out{pos, 0};
  for (; out.end < text.size(); ++out.end) {
    const char c = text[out.end];
    if (c == '\f') {
      out.width = 0;
    } else if (c == ' ' || c == '\t') {
      ++out.width;
    } else {
      break;
    }
  }
  return out;
}

// A carriage return that does not end a line is blank space inside a line to the lexer, and it
// does not count as indentation there: "\r@dec" is a decorator at column 0. The scanner reads lines
// by their indentation only, so it leaves such text to the whole parse.
bool has_lone_carriage_return(std::string_view text) {
  for (size_t i = text.find('\r'); i != std::string_view::npos; i = text.find('\r', i + 1))
    if (i + 1 == text.size() || text[i + 1] != '\n') return true;
  return false;
}

// The statements of a block whose lines are indented by `indent` characters, from the line at
// `pos` (number `line`) to the first line indented less (or the end of the text); only the first
// `count` of them, whose ends are then known without reading the rest of the block.
std::vector<TopLevelStatement> split_block(std::string_view text, size_t pos, int line,
                                           size_t indent, size_t count = SIZE_MAX) {
  std::vector<TopLevelStatement> out;
  if (has_lone_carriage_return(text)) return out;
  int depth = 0;           // open brackets
  char quote = 0;          // the quote of the string being read, 0 outside strings
  bool triple = false;     // ... a triple-quoted one
  bool continued = false;  // the last line ended with a backslash
  bool decorated = false;  // the last statement is decorators still waiting for their `def`
  while (pos < text.size()) {
    // A line outside strings, brackets and continuations that is neither blank nor a comment
    // starts a statement at the block's indentation, and ends the block below it.
    if (quote == 0 && depth == 0 && !continued) {
      const auto [i, width] = indentation(text, pos);
      const bool blank = i == text.size() || text[i] == '\n' || text[i] == '\r' || text[i] == '#';
      if (!blank && width < indent) break;
      if (!blank && width == indent) {
        const std::string_view rest = text.substr(i);
        const std::string name(defined_name(rest));
        if (decorated) {
          // After decorators: more of them, or what they decorate (a `class` is no function).
          if (rest[0] != '@') {
            decorated = false;
            out.back().function = name;
          }
        } else {
          if (!out.empty()) out.back().end = pos;
          if (out.size() == count) return out;
          out.push_back({pos, text.size(), line, name});
          decorated = rest[0] == '@';
        }
      }
    }
    continued = false;
    // The rest of the physical line.
    while (pos < text.size()) {
      const char c = text[pos];
      if (quote != 0) {
        if (c == '\\') {
          if (pos + 1 < text.size() && text[pos + 1] == '\n') ++line;
          pos += 2;
          continue;
        }
        if (c == quote && (!triple || text.substr(pos, 3) == std::string(3, quote))) {
          pos += triple ? 3 : 1;
          quote = 0;
          continue;
        }
        if (c == '\n') {
          if (!triple) return {};  // an unterminated string
          ++line;
          ++pos;
          continue;
        }
        ++pos;
        continue;
      }
      if (c == '\n') {
        ++line;
        ++pos;
        break;
      }
      if (c == '#') {
        while (pos < text.size() && text[pos] != '\n') ++pos;
        continue;
      }
      if (c == '\'' || c == '"') {
        quote = c;
        triple = text.substr(pos, 3) == std::string(3, c);
        pos += triple ? 3 : 1;
        continue;
      }
      if (c == '(' || c == '[' || c == '{') ++depth;
      if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
      if (c == '\\') {
        size_t next = pos + 1;
        if (next < text.size() && text[next] == '\r') ++next;
        if (next < text.size() && text[next] == '\n') continued = true;
      }
      ++pos;
    }
  }
  if (quote != 0 || depth != 0 || decorated) return {};
  if (!out.empty()) out.back().end = std::min(out.back().end, pos);
  return out;
}

// The clauses after `if __name__ == "__main__":` are skipped by the parser up to the ':' of their
// header, across lines, so what follows `elif` may hide a definition from it.
bool starts_a_clause(std::string_view statement) {
  const std::string_view word = statement.substr(indentation(statement, 0).end, 5);
  return (word.substr(0, 4) == "elif" || word.substr(0, 4) == "else") &&
         (word.size() == 4 || !is_word_char(word[4]));
}

// The function `name` of the whole parse of `file`, alone at the front of its module; nullptr when
// the whole parse has no such function. Its errors are the whole parse's.
std::unique_ptr<ast::Module> definition_in_whole_parse(std::shared_ptr<const SourceFile> file,
                                                       const std::string& name) {
  auto whole = std::make_unique<ast::Module>(parse_module(std::move(file)));
  for (auto& f : whole->functions) {
    if (f->name != name) continue;
    std::swap(f, whole->functions.front());
    return whole;
  }
  return nullptr;
}

// The module of the function `statement` defines, parsed from its own lines placed where they are
// in the file. The lines must hold that definition and nothing else; where they do not (text the
// scanner read otherwise than the lexer), the definition is the whole parse's, as it is where they
// fail to parse but the whole file does not (a function's own error is reported as its own).
std::unique_ptr<ast::Module> parse_definition(const std::shared_ptr<const SourceFile>& file,
                                              const TopLevelStatement& statement) {
  const std::string& name = statement.function;
  std::string definition(static_cast<size_t>(statement.first_line - 1), '\n');
  definition.append(file->text(), statement.begin, statement.end - statement.begin);
  std::unique_ptr<ast::Module> alone;
  try {
    alone = std::make_unique<ast::Module>(parse_module(std::make_shared<const SourceFile>(
        file->name(), std::move(definition), file->column_offset())));
  } catch (const CompileError&) {
    std::unique_ptr<ast::Module> whole;
    try {
      whole = definition_in_whole_parse(file, name);
    } catch (const CompileError&) {
    }
    if (whole) return whole;
    throw;
  }
  if (alone->functions.size() == 1 && alone->functions.front()->name == name &&
      alone->classes.empty() && alone->globals.empty() && alone->imports.empty())
    return alone;
  return definition_in_whole_parse(file, name);
}

}  // namespace

std::vector<TopLevelStatement> split_top_level(std::string_view text) {
  return split_block(text, 0, 1, 0);
}

std::optional<std::string_view> statement_at(std::string_view text, int first_line) {
  size_t pos = 0;
  for (int line = 1; line < first_line; ++line) {
    pos = text.find('\n', pos);
    if (pos == std::string_view::npos) return std::nullopt;
    ++pos;
  }
  // One statement: a kernel's definition near the top of a long file is found without reading
  // the rest of it.
  const std::vector<TopLevelStatement> block =
      split_block(text, pos, first_line, indentation(text, pos).width, 1);
  if (block.empty() || block.front().begin != pos) return std::nullopt;
  return text.substr(pos, block.front().end - pos);
}

std::shared_ptr<const ResolvedModule> load_module(std::shared_ptr<const SourceFile> file) {
  const std::string& text = file->text();
  const std::vector<TopLevelStatement> statements = split_top_level(text);
  std::map<std::string, const TopLevelStatement*> functions;
  std::vector<std::string> names;  // in the file's order
  for (const TopLevelStatement& s : statements) {
    if (s.function.empty()) {
      if (starts_a_clause(std::string_view(text).substr(s.begin, s.end - s.begin)))
        return parse_whole(file);
      continue;
    }
    if (!functions.emplace(s.function, &s).second) return parse_whole(file);  // defined twice
    names.push_back(s.function);
  }
  if (functions.empty()) return parse_whole(file);

  // The top level without its functions, whose lines are left empty so that positions stay.
  std::string head;
  head.reserve(text.size());
  // The comments and blank lines before the first statement belong to no statement.
  for (char c : std::string_view(text).substr(0, statements.front().begin))
    if (c == '\n') head.push_back('\n');
  for (const TopLevelStatement& s : statements) {
    const std::string_view part = std::string_view(text).substr(s.begin, s.end - s.begin);
    if (s.function.empty()) {
      head.append(part);
    } else {
      for (char c : part)
        if (c == '\n') head.push_back('\n');
    }
  }
  ast::Module top = parse_module(
      std::make_shared<const SourceFile>(file->name(), std::move(head), file->column_offset()));
  // A def the scanner did not read as one ("def\ff()") is in the top level: the whole parse keeps
  // it in the file's order among the others.
  if (!top.functions.empty()) return parse_whole(file);
  // A function whose name the top level also binds: which one wins is the whole parser's call.
  for (const std::string& bound : bound_names(top))
    if (functions.count(bound)) return parse_whole(file);

  // Each function is parsed from its own lines, placed where they are in the file.
  std::map<std::string, TopLevelStatement> definitions;
  for (const auto& [name, s] : functions) definitions[name] = *s;
  ExternalResolver parse_function = [file, definitions =
                                               std::move(definitions)](const std::string& name) {
    ExternalSymbol x;
    auto it = definitions.find(name);
    if (it == definitions.end()) return x;  // not bound in this file
    x.function_module = parse_definition(file, it->second);
    if (!x.function_module) return x;
    x.symbol.kind = Symbol::Kind::Function;
    x.symbol.loc = x.function_module->functions.front()->loc;
    return x;
  };
  return std::make_shared<const ResolvedModule>(std::move(top), std::move(parse_function),
                                                std::move(names));
}

}  // namespace tack::lang
