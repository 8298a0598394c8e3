// Splitting a kernels file into tokens, with Python's rules for indentation and line joining.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lang/source.hpp"

namespace tack::lang {

enum class TokenKind {
  Name,  // an identifier that is not a keyword (it may hold non-ASCII letters; the parser refuses
         // those, so that Python code the compiler skips still tokenizes)
  Keyword,  // one of Python's hard keywords, True/False/None included
  Int,
  Float,
  String,   // adjacent literals are separate tokens; the parser joins them
  Op,       // an operator or delimiter, by its spelling
  Newline,  // the end of a logical line (never emitted for blank or comment-only lines)
  Indent,
  Dedent,
  EndOfFile,
};

struct Token {
  TokenKind kind = TokenKind::EndOfFile;
  // Name/Keyword: the identifier. Op: the spelling. Int/Float: the source spelling.
  // String: the value with escapes decoded.
  std::string text;
  // String: the prefix in lower case ("", "r", "u", "b", "f", "rb", "fr"...). The lexer accepts
  // every Python prefix so that code under `if __name__ == "__main__":` tokenizes; the parser
  // rejects the ones a kernel cannot use.
  std::string prefix;
  uint64_t int_value = 0;  // Int: the exact value
  double float_value = 0;  // Float
  SourceLoc loc;           // of the first character

  bool is_op(std::string_view op) const { return kind == TokenKind::Op && text == op; }
  bool is_keyword(std::string_view kw) const { return kind == TokenKind::Keyword && text == kw; }
};

// True for Python's hard keywords (soft keywords such as `match` and `type` are names).
bool is_keyword(std::string_view word);

// How a token reads in an error message: "name 'x'", "'('", "end of line"...
std::string describe(const Token& token);

// Tokenizes a whole file. The result always ends with EndOfFile, preceded by a Newline after the
// last logical line and a Dedent for every block still open. Throws CompileError on malformed text.
std::vector<Token> tokenize(const SourceFile& file);

}  // namespace tack::lang
