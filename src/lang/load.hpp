// Loading a whole kernels file (Module::from_source, from_file) the way a first call needs it:
// the top level at once, each function only when a kernel being compiled reaches it.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lang/resolve.hpp"
#include "lang/source.hpp"

namespace tack::lang {

// A statement at the top level of a file: its bytes [begin, end), which take whole lines, and for
// a function definition (its decorators included) the function's name.
struct TopLevelStatement {
  size_t begin = 0, end = 0;
  int first_line = 1;
  std::string function;  // empty: not a `def`
};

// Splits `text` into its top-level statements without tokenizing it: only strings, comments,
// brackets and line continuations are followed, to tell where each statement ends. Returns an
// empty list for text it cannot split (an unterminated string or bracket, a decorator without a
// definition); the full parser then reports what is wrong.
std::vector<TopLevelStatement> split_top_level(std::string_view text);

// The text of the statement that starts at line `first_line` of `text`, at whatever indentation:
// for a function, its decorators, definition and body (what Python's inspect.getsourcelines finds,
// without tokenizing), read up to where the next statement begins. nullopt when no statement
// starts there or it cannot be split (an unterminated string or bracket).
std::optional<std::string_view> statement_at(std::string_view text, int first_line);

// The module of `file`, resolved. Its imports, constants and other top-level statements are parsed
// now, and so are its errors there; each function is parsed when first looked up, so that a call
// of one kernel of a large file parses that kernel and what it calls. A file whose names do not
// allow it (a function name bound twice) is parsed whole, as parse_module does.
std::shared_ptr<const ResolvedModule> load_module(std::shared_ptr<const SourceFile> file);

}  // namespace tack::lang
