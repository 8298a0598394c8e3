#include "lang/lexer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <limits>

#include "lang/diagnostics.hpp"

namespace tack::lang {
namespace {

constexpr std::string_view kKeywords[] = {
    "False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
    "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
    "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
    "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield"};
static_assert(std::is_sorted(std::begin(kKeywords), std::end(kKeywords)), "is_keyword bisects");

// Longest first, so that the first match is the longest one. `:=` is a token so that the parser can
// reject the walrus with a precise message (and skipped Python code still tokenizes).
constexpr std::string_view kOperators[] = {
    "**=", "//=", ">>=", "<<=", "...", "**", "//", "<<", ">>", "<=", ">=", "==",
    "!=",  "->",  "+=",  "-=",  "*=",  "/=", "%=", "&=", "|=", "^=", "@=", ":=",
    "+",   "-",   "*",   "/",   "%",   "@",  "&",  "|",  "^",  "~",  "<",  ">",
    "(",   ")",   "[",   "]",   "{",   "}",  ",",  ":",  ".",  ";",  "="};

// kOperators sorted by first character, longest first within each, and where each character's
// run begins: a lookup tries the one to four operators that begin with the next character
// instead of scanning the whole list (some 35 comparisons for each bracket, comma or '=').
struct OperatorTable {
  std::array<std::string_view, std::size(kOperators)> sorted{};
  std::array<uint8_t, 129> start{};  // sorted[start[c], start[c + 1]) begin with c
};

constexpr OperatorTable make_operator_table() {
  OperatorTable t;
  std::copy(std::begin(kOperators), std::end(kOperators), t.sorted.begin());
  std::sort(t.sorted.begin(), t.sorted.end(), [](std::string_view a, std::string_view b) {
    return a[0] != b[0] ? a[0] < b[0] : a.size() > b.size();
  });
  size_t i = 0;
  for (size_t c = 0; c <= 128; ++c) {
    t.start[c] = static_cast<uint8_t>(i);
    while (i < t.sorted.size() && static_cast<unsigned char>(t.sorted[i][0]) == c) ++i;
  }
  return t;
}

constexpr OperatorTable kOperatorTable = make_operator_table();
static_assert(kOperatorTable.start[128] == std::size(kOperators), "every operator is ASCII");

// The longest operator `rest` begins with, or "".
std::string_view operator_at(std::string_view rest) {
  const auto c = static_cast<unsigned char>(rest[0]);
  if (c >= 128) return {};
  for (size_t i = kOperatorTable.start[c]; i < kOperatorTable.start[c + 1]; ++i)
    if (rest.starts_with(kOperatorTable.sorted[i])) return kOperatorTable.sorted[i];
  return {};
}

// Python's own limits; they also bound the parser's recursion on pathological input.
constexpr size_t kMaxIndentLevels = 100;
constexpr size_t kMaxBracketDepth = 200;

bool is_dec(char c) {
  return c >= '0' && c <= '9';
}
// ASCII letters by their codes: std::isalpha is a call into the C library's locale tables for
// every character of every name, and each byte above 0x7F is taken anyway (part of a UTF-8 name).
bool is_ident_start(unsigned char c) {
  return static_cast<unsigned char>((c | 0x20) - 'a') < 26 || c == '_' || c >= 0x80;
}
bool is_ident_char(unsigned char c) {
  return is_ident_start(c) || is_dec(static_cast<char>(c));
}
bool is_hex(char c) {
  return std::isxdigit(static_cast<unsigned char>(c)) != 0;
}
bool is_oct(char c) {
  return c >= '0' && c <= '7';
}
bool is_bin(char c) {
  return c == '0' || c == '1';
}

int digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  return std::tolower(static_cast<unsigned char>(c)) - 'a' + 10;
}

bool is_string_prefix(std::string_view word) {
  std::string lower;
  for (char c : word) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view p : {"r", "u", "b", "f", "br", "rb", "fr", "rf"})
    if (lower == p) return true;
  return false;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

class Lexer {
 public:
  explicit Lexer(const SourceFile& file) : file_(file), text_(file.text()) {}

  std::vector<Token> run();

 private:
  // Indentation widths of one level, measured twice: with tabs to the next multiple of 8 (Python's
  // rule) and with tabs as one column. Levels that compare differently under the two are ambiguous.
  struct Indent {
    int width;
    int alt_width;
  };
  struct OpenDef {
    std::string name;
    size_t depth;  // indents_.size() on the `def` line
  };
  struct OpenBracket {
    char ch;
    SourceLoc loc;
  };

  char peek(size_t k = 0) const { return pos_ + k < text_.size() ? text_[pos_ + k] : '\0'; }
  bool at_end() const { return pos_ >= text_.size(); }
  bool at_newline() const { return peek() == '\n' || (peek() == '\r' && peek(1) == '\n'); }
  SourceLoc loc() const { return {line_, col_}; }
  void advance();
  void skip_newline();

  [[noreturn]] void fail(SourceLoc where, const std::string& message, const std::string& hint) {
    throw_compile_error(file_, defs_.empty() ? "<module>" : defs_.back().name, where, message,
                        hint);
  }

  void emit(TokenKind kind, std::string text, SourceLoc where);
  // Returns false when the line is blank or holds only a comment.
  bool begin_logical_line();
  void indent_to(int width, int alt_width, SourceLoc where);
  void lex_name();
  void lex_number();
  std::string scan_digits(bool (*is_digit)(char), const char* kind);
  void lex_string(std::string prefix, SourceLoc start);
  void lex_escape(std::string& value);
  void lex_operator();

  const SourceFile& file_;
  std::string_view text_;
  size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
  std::vector<Token> tokens_;
  std::vector<Indent> indents_{{0, 0}};
  std::vector<OpenBracket> brackets_;
  std::vector<OpenDef> defs_;
};

void Lexer::advance() {
  char c = text_[pos_++];
  if (c == '\n') {
    ++line_;
    col_ = 1;
  } else if (at_end() || (static_cast<unsigned char>(text_[pos_]) & 0xC0) != 0x80) {
    // Columns count characters: the continuation bytes of a UTF-8 sequence share its column.
    ++col_;
  }
}

void Lexer::skip_newline() {
  if (peek() == '\r') advance();
  advance();
}

void Lexer::emit(TokenKind kind, std::string text, SourceLoc where) {
  // Errors say which def they are in; a def's name is the Name right after the keyword.
  if (kind == TokenKind::Name && !tokens_.empty() && tokens_.back().is_keyword("def"))
    defs_.push_back({text, indents_.size()});
  Token token;
  token.kind = kind;
  token.text = std::move(text);
  token.loc = where;
  tokens_.push_back(std::move(token));
}

std::vector<Token> Lexer::run() {
  // About one token to every three characters of Python: grown from empty instead, the vector
  // reallocates eight times for a 20-line kernel, moving its tokens at each step.
  tokens_.reserve(text_.size() / 3 + 8);
  bool line_start = true;
  while (true) {
    if (line_start && brackets_.empty()) {
      if (!begin_logical_line()) {
        if (at_end()) break;
        skip_newline();
        continue;
      }
      line_start = false;
    }
    while (peek() == ' ' || peek() == '\t' || peek() == '\f' || (peek() == '\r' && peek(1) != '\n'))
      advance();
    if (at_end()) break;
    char c = peek();
    if (c == '#') {
      while (!at_end() && !at_newline()) advance();
    } else if (at_newline()) {
      if (brackets_.empty()) {
        emit(TokenKind::Newline, "", loc());
        line_start = true;
      }
      skip_newline();
    } else if (c == '\\') {
      SourceLoc where = loc();
      advance();
      if (at_end())
        fail(where, "the file ends right after a line-continuation backslash",
             "remove the trailing '\\' or continue the statement on the next line");
      if (!at_newline())
        fail(where, "a backslash outside a string must be the last character of its line",
             "remove the '\\', or put a line break right after it to continue the line");
      skip_newline();
    } else if (is_dec(c) || (c == '.' && is_dec(peek(1)))) {
      lex_number();
    } else if (is_ident_start(static_cast<unsigned char>(c))) {
      lex_name();
    } else if (c == '"' || c == '\'') {
      lex_string("", loc());
    } else {
      lex_operator();
    }
  }

  if (!brackets_.empty()) {
    const OpenBracket& open = brackets_.back();
    fail(open.loc, fmt::format("'{}' was never closed", open.ch),
         fmt::format("add the matching '{}'", open.ch == '('   ? ')'
                                              : open.ch == '[' ? ']'
                                                               : '}'));
  }
  if (!tokens_.empty() && tokens_.back().kind != TokenKind::Newline)
    emit(TokenKind::Newline, "", loc());
  SourceLoc end = loc();
  for (size_t i = 1; i < indents_.size(); ++i) emit(TokenKind::Dedent, "", end);
  indents_.resize(1);
  emit(TokenKind::EndOfFile, "", end);
  return std::move(tokens_);
}

bool Lexer::begin_logical_line() {
  int width = 0;
  int alt_width = 0;
  while (true) {
    char c = peek();
    if (c == ' ') {
      ++width;
      ++alt_width;
    } else if (c == '\t') {
      width = (width / 8 + 1) * 8;
      ++alt_width;
    } else if (c == '\f') {
      width = alt_width = 0;  // Python resets the count at a form feed
    } else {
      break;
    }
    advance();
  }
  if (peek() == '#')
    while (!at_end() && !at_newline()) advance();
  if (at_end() || at_newline()) return false;
  indent_to(width, alt_width, loc());
  return true;
}

void Lexer::indent_to(int width, int alt_width, SourceLoc where) {
  auto inconsistent = [&] {
    fail(where, "inconsistent use of tabs and spaces in indentation",
         "indent with spaces only (4 per level), or with tabs only, throughout the file");
  };
  if (width > indents_.back().width) {
    if (alt_width <= indents_.back().alt_width) inconsistent();
    if (indents_.size() > kMaxIndentLevels)
      fail(where, fmt::format("too many levels of indentation (more than {})", kMaxIndentLevels),
           "move deeply nested code into a separate @tack.func function");
    indents_.push_back({width, alt_width});
    emit(TokenKind::Indent, "", where);
    return;
  }
  // A dedent must return to a column in use (the levels are listed before any is popped).
  if (width < indents_.back().width &&
      std::none_of(indents_.begin(), indents_.end(),
                   [&](const Indent& level) { return level.width == width; })) {
    std::string levels;
    for (const Indent& level : indents_)
      levels += fmt::format("{}{}", levels.empty() ? "" : ", ", level.width);
    fail(where, "this line's indentation does not match any enclosing block",
         fmt::format("indent it to one of the columns in use: {} spaces", levels));
  }
  while (width < indents_.back().width) {
    indents_.pop_back();
    emit(TokenKind::Dedent, "", where);
  }
  if (alt_width != indents_.back().alt_width) inconsistent();
  while (!defs_.empty() && defs_.back().depth >= indents_.size()) defs_.pop_back();
}

void Lexer::lex_name() {
  SourceLoc start = loc();
  size_t begin = pos_;
  while (is_ident_char(static_cast<unsigned char>(peek()))) advance();
  std::string word(text_.substr(begin, pos_ - begin));
  if ((peek() == '"' || peek() == '\'') && is_string_prefix(word)) {
    for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    lex_string(std::move(word), start);
    return;
  }
  TokenKind kind = is_keyword(word) ? TokenKind::Keyword : TokenKind::Name;
  emit(kind, std::move(word), start);
}

// Reads digits with single underscores between them; returns the digits alone.
std::string Lexer::scan_digits(bool (*is_digit)(char), const char* kind) {
  std::string digits;
  while (true) {
    if (is_digit(peek())) {
      digits += peek();
      advance();
    } else if (peek() == '_') {
      SourceLoc where = loc();
      advance();
      if (!is_digit(peek()))
        fail(where, fmt::format("misplaced '_' in {} literal", kind),
             "an underscore may only separate two digits, as in 1_000_000");
    } else {
      return digits;
    }
  }
}

void Lexer::lex_number() {
  SourceLoc start = loc();
  size_t begin = pos_;
  auto spelling = [&] { return std::string(text_.substr(begin, pos_ - begin)); };
  auto check_end = [&](const char* kind) {
    if (peek() == 'j' || peek() == 'J')
      fail(start, "imaginary numbers are not supported in kernels",
           "use real numbers; for complex arithmetic keep real and imaginary parts in a vec2");
    if (is_ident_char(static_cast<unsigned char>(peek())) || peek() == '.')
      fail(start, fmt::format("invalid {} literal '{}{}'", kind, spelling(), peek()),
           "separate the number from the next word with a space or an operator");
  };

  uint64_t value = 0;
  auto accumulate = [&](const std::string& digits, int base) {
    for (char d : digits) {
      uint64_t v = static_cast<uint64_t>(digit_value(d));
      if (value > (std::numeric_limits<uint64_t>::max() - v) / base)
        fail(start, fmt::format("integer literal {} is too large", spelling()),
             "the largest integer literal is 18446744073709551615 (2**64 - 1)");
      value = value * base + v;
    }
  };

  char next = static_cast<char>(std::tolower(static_cast<unsigned char>(peek(1))));
  if (peek() == '0' && (next == 'x' || next == 'o' || next == 'b')) {
    advance();
    advance();
    int base = next == 'x' ? 16 : next == 'o' ? 8 : 2;
    const char* kind = next == 'x' ? "hexadecimal" : next == 'o' ? "octal" : "binary";
    bool (*is_digit)(char) = next == 'x' ? is_hex : next == 'o' ? is_oct : is_bin;
    if (peek() == '_') advance();  // Python allows 0x_ff
    std::string digits = scan_digits(is_digit, kind);
    if (digits.empty() || is_dec(peek()))
      fail(start,
           digits.empty() ? fmt::format("{} literal '{}' has no digits", kind, spelling())
                          : fmt::format("invalid digit '{}' in {} literal", peek(), kind),
           next == 'x'   ? "hexadecimal digits are 0-9 and a-f, as in 0xff"
           : next == 'o' ? "octal digits are 0-7, as in 0o755"
                         : "binary digits are 0 and 1, as in 0b1010");
    check_end(kind);
    accumulate(digits, base);
    emit(TokenKind::Int, spelling(), start);
    tokens_.back().int_value = value;
    return;
  }

  std::string integer = scan_digits(is_dec, "decimal");
  bool is_float = false;
  std::string fraction, exponent;
  if (peek() == '.') {
    is_float = true;
    advance();
    if (is_dec(peek())) fraction = scan_digits(is_dec, "decimal");
  }
  char e = peek();
  if ((e == 'e' || e == 'E') &&
      (is_dec(peek(1)) || ((peek(1) == '+' || peek(1) == '-') && is_dec(peek(2))))) {
    is_float = true;
    advance();
    if (peek() == '+' || peek() == '-') {
      exponent += peek();
      advance();
    }
    exponent += scan_digits(is_dec, "decimal");
  }
  check_end(is_float ? "float" : "decimal");

  if (!is_float) {
    if (integer.size() > 1 && integer[0] == '0' &&
        integer.find_first_not_of('0') != std::string::npos)
      fail(start,
           fmt::format("leading zeros are not allowed in the decimal literal '{}'", spelling()),
           "drop the leading zeros, or write 0o... for an octal number");
    accumulate(integer, 10);
    emit(TokenKind::Int, spelling(), start);
    tokens_.back().int_value = value;
    return;
  }

  std::string clean = (integer.empty() ? "0" : integer) + "." + (fraction.empty() ? "0" : fraction);
  if (!exponent.empty()) clean += "e" + exponent;
  double result = 0;
  auto [end, ec] = std::from_chars(clean.data(), clean.data() + clean.size(), result);
  if (ec == std::errc::result_out_of_range) {
    // Decide overflow from underflow by the decimal magnitude: Python rounds tiny values to zero
    // and would give inf for huge ones, which a kernel should spell as math.inf instead.
    size_t first = (integer + fraction).find_first_not_of('0');
    // strtol saturates an exponent of many digits at LONG_MAX: clamped far beyond any double's
    // range, the sum below cannot overflow (the fuzzer found 1e9223372036854775807 + 1).
    long magnitude = exponent.empty() ? 0 : std::strtol(exponent.c_str(), nullptr, 10);
    magnitude = std::clamp(magnitude, -1000000L, 1000000L);
    if (first != std::string::npos)
      magnitude += static_cast<long>(integer.size()) - static_cast<long>(first);
    if (first != std::string::npos && magnitude > 0)
      fail(start, fmt::format("float literal {} is too large for a double", spelling()),
           "the largest double is about 1.8e308; write math.inf for infinity");
    result = 0.0;
  }
  emit(TokenKind::Float, spelling(), start);
  tokens_.back().float_value = result;
}

void Lexer::lex_string(std::string prefix, SourceLoc start) {
  char quote = peek();
  bool triple = peek(1) == quote && peek(2) == quote;
  for (int i = 0; i < (triple ? 3 : 1); ++i) advance();
  bool raw = prefix.find('r') != std::string::npos;
  std::string value;
  while (true) {
    if (at_end() || (!triple && at_newline()))
      fail(start, triple ? "unterminated triple-quoted string" : "unterminated string literal",
           triple ? fmt::format("close the string with {0}{0}{0}", quote)
                  : fmt::format("close the string with {} on the same line, or use triple quotes "
                                "for text that spans lines",
                                quote));
    char c = peek();
    if (c == quote && (!triple || (peek(1) == quote && peek(2) == quote))) {
      for (int i = 0; i < (triple ? 3 : 1); ++i) advance();
      break;
    }
    if (c == '\\') {
      if (raw) {
        // In a raw string a backslash keeps itself and the next character, quote included.
        value += c;
        advance();
        if (!at_end()) {
          value += peek();
          advance();
        }
      } else {
        lex_escape(value);
      }
      continue;
    }
    if (c == '\r' && peek(1) == '\n') advance();  // normalize CRLF inside triple-quoted strings
    value += peek();
    advance();
  }
  emit(TokenKind::String, std::move(value), start);
  tokens_.back().prefix = std::move(prefix);
}

void Lexer::lex_escape(std::string& value) {
  SourceLoc where = loc();
  advance();  // the backslash
  if (at_end()) return;
  if (at_newline()) {  // a backslash-newline inside a string joins the lines
    skip_newline();
    return;
  }
  char c = peek();
  auto hex_escape = [&](int count) {
    uint32_t cp = 0;
    for (int i = 0; i < count; ++i) {
      if (!is_hex(peek()))
        fail(where, fmt::format("truncated \\{} escape: it needs {} hexadecimal digits", c, count),
             fmt::format("write exactly {} hexadecimal digits after \\{}", count, c));
      cp = cp * 16 + static_cast<uint32_t>(digit_value(peek()));
      advance();
    }
    return cp;
  };
  switch (c) {
    case 'n':
      value += '\n';
      break;
    case 't':
      value += '\t';
      break;
    case 'r':
      value += '\r';
      break;
    case '\\':
      value += '\\';
      break;
    case '\'':
      value += '\'';
      break;
    case '"':
      value += '"';
      break;
    case 'a':
      value += '\a';
      break;
    case 'b':
      value += '\b';
      break;
    case 'f':
      value += '\f';
      break;
    case 'v':
      value += '\v';
      break;
    case 'x':
      advance();
      value += static_cast<char>(hex_escape(2));
      return;
    case 'u':
    case 'U': {
      advance();
      uint32_t cp = hex_escape(c == 'u' ? 4 : 8);
      if (cp > 0x10FFFF)
        fail(where, "\\U escape out of the Unicode range", "the largest code point is \\U0010FFFF");
      append_utf8(value, cp);
      return;
    }
    case 'N':
      fail(where, "named Unicode escapes (\\N{...}) are not supported",
           "write the character itself, or its \\uXXXX escape");
    default:
      if (is_oct(c)) {
        uint32_t v = 0;
        for (int i = 0; i < 3 && is_oct(peek()); ++i) {
          v = v * 8 + static_cast<uint32_t>(peek() - '0');
          advance();
        }
        value += static_cast<char>(v & 0xFF);
        return;
      }
      // Like Python, an unknown escape keeps its backslash.
      value += '\\';
      return;
  }
  advance();
}

void Lexer::lex_operator() {
  SourceLoc start = loc();
  std::string_view rest = text_.substr(pos_);
  const std::string_view op = operator_at(rest);
  if (op.empty()) {
    char c = rest[0];
    if (c == '!')
      fail(start, "'!' is not an operator",
           "write `not x` for logical negation and `!=` for inequality");
    if (std::isprint(static_cast<unsigned char>(c)))
      fail(start, fmt::format("unexpected character '{}'", c),
           "remove it; kernels use Python syntax");
    fail(start, fmt::format("unexpected control character (code {})", static_cast<int>(c)),
         "remove it from the source");
  }
  if (op.size() == 1 && (op[0] == '(' || op[0] == '[' || op[0] == '{')) {
    if (brackets_.size() >= kMaxBracketDepth)
      fail(start, fmt::format("too many nested brackets (more than {})", kMaxBracketDepth),
           "split the expression into several statements with intermediate variables");
    brackets_.push_back({op[0], start});
  } else if (op.size() == 1 && (op[0] == ')' || op[0] == ']' || op[0] == '}')) {
    char open = op[0] == ')' ? '(' : op[0] == ']' ? '[' : '{';
    if (brackets_.empty())
      fail(start, fmt::format("unmatched '{}'", op[0]),
           fmt::format("remove it, or add the opening '{}' it closes", open));
    if (brackets_.back().ch != open) {
      const OpenBracket& b = brackets_.back();
      fail(start,
           fmt::format("closing '{}' does not match the '{}' opened on line {}, column {}", op[0],
                       b.ch, b.loc.line, b.loc.col),
           fmt::format("close the '{}' first with '{}'", b.ch,
                       b.ch == '('   ? ')'
                       : b.ch == '[' ? ']'
                                     : '}'));
    }
    brackets_.pop_back();
  }
  for (size_t i = 0; i < op.size(); ++i) advance();
  emit(TokenKind::Op, std::string(op), start);
}

}  // namespace

bool is_keyword(std::string_view word) {
  return std::binary_search(std::begin(kKeywords), std::end(kKeywords), word);
}

std::string describe(const Token& token) {
  switch (token.kind) {
    case TokenKind::Name:
      return fmt::format("name '{}'", token.text);
    case TokenKind::Keyword:
      return fmt::format("keyword '{}'", token.text);
    case TokenKind::Int:
    case TokenKind::Float:
      return fmt::format("number {}", token.text);
    case TokenKind::String:
      return "a string";
    case TokenKind::Op:
      return fmt::format("'{}'", token.text);
    case TokenKind::Newline:
      return "the end of the line";
    case TokenKind::Indent:
      return "an indented line";
    case TokenKind::Dedent:
      return "the end of the indented block";
    case TokenKind::EndOfFile:
      return "the end of the file";
  }
  return "a token";
}

std::vector<Token> tokenize(const SourceFile& file) {
  return Lexer(file).run();
}

}  // namespace tack::lang
