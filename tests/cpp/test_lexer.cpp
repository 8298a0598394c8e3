#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "lang/lexer.hpp"
#include "tack/error.hpp"

namespace tack::lang {
namespace {

std::vector<Token> lex(const std::string& text) {
  return tokenize(SourceFile("test.py", text));
}

// The token stream as one line: names, keywords and operators by their text, the others tagged.
std::string show(const std::string& text) {
  std::string out;
  for (const Token& t : lex(text)) {
    if (!out.empty()) out += ' ';
    switch (t.kind) {
      case TokenKind::Name:
      case TokenKind::Keyword:
      case TokenKind::Op:
        out += t.text;
        break;
      case TokenKind::Int:
        out += "int:" + std::to_string(t.int_value);
        break;
      case TokenKind::Float:
        out += "float:" + t.text;
        break;
      case TokenKind::String:
        out += "str:" + t.prefix + "<" + t.text + ">";
        break;
      case TokenKind::Newline:
        out += "NL";
        break;
      case TokenKind::Indent:
        out += "IN";
        break;
      case TokenKind::Dedent:
        out += "DE";
        break;
      case TokenKind::EndOfFile:
        out += "EOF";
        break;
    }
  }
  return out;
}

CompileError lex_error(const std::string& text) {
  try {
    lex(text);
  } catch (const CompileError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return CompileError("", "", 0, 0, "", "", "");
}

void expect_error(const std::string& text, int line, int col, const std::string& in_message,
                  const std::string& kernel = "<module>") {
  CompileError e = lex_error(text);
  EXPECT_EQ(e.line(), line) << e.what();
  EXPECT_EQ(e.col(), col) << e.what();
  EXPECT_EQ(e.kernel(), kernel) << e.what();
  EXPECT_NE(e.message().find(in_message), std::string::npos) << e.what();
  EXPECT_FALSE(e.hint().empty()) << e.what();
  EXPECT_EQ(e.file(), "test.py");
}

double float_value(const std::string& text) {
  std::vector<Token> tokens = lex(text);
  EXPECT_EQ(tokens[0].kind, TokenKind::Float) << text;
  EXPECT_EQ(tokens[1].kind, TokenKind::Newline) << text;
  return tokens[0].float_value;
}

uint64_t int_value(const std::string& text) {
  std::vector<Token> tokens = lex(text);
  EXPECT_EQ(tokens[0].kind, TokenKind::Int) << text;
  EXPECT_EQ(tokens[1].kind, TokenKind::Newline) << text;
  return tokens[0].int_value;
}

// ---------------------------------------------------------------------------- basics

TEST(Lexer, EmptyAndCommentOnlyFiles) {
  EXPECT_EQ(show(""), "EOF");
  EXPECT_EQ(show("\n\n   \n"), "EOF");
  EXPECT_EQ(show("# just a comment"), "EOF");
  EXPECT_EQ(show("# one\n    # two\n\n"), "EOF");
}

TEST(Lexer, SimpleStatement) {
  EXPECT_EQ(show("x = 1\n"), "x = int:1 NL EOF");
  EXPECT_EQ(show("x = 1"), "x = int:1 NL EOF");  // no final newline
  EXPECT_EQ(show("x = 1  # comment"), "x = int:1 NL EOF");
}

TEST(Lexer, KeywordsAndNames) {
  std::vector<Token> t = lex("def f(a): return a if True else None");
  EXPECT_EQ(t[0].kind, TokenKind::Keyword);
  EXPECT_EQ(t[1].kind, TokenKind::Name);
  EXPECT_EQ(t[6].kind, TokenKind::Keyword);  // return
  EXPECT_TRUE(t[6].is_keyword("return"));
  EXPECT_TRUE(t[8].is_keyword("if"));
  EXPECT_TRUE(t[9].is_keyword("True"));
  EXPECT_TRUE(t[11].is_keyword("None"));
  EXPECT_TRUE(is_keyword("lambda"));
  EXPECT_TRUE(is_keyword("nonlocal"));
  EXPECT_FALSE(is_keyword("print"));
  EXPECT_FALSE(is_keyword("match"));  // soft keywords are names
  EXPECT_EQ(lex("_private __name__ x2")[0].kind, TokenKind::Name);
  EXPECT_EQ(lex("_private __name__ x2")[1].text, "__name__");
}

TEST(Lexer, Locations) {
  std::vector<Token> t = lex("x = foo(1)\n\n  # c\nif y:\n    z\n");
  EXPECT_EQ(t[0].loc.line, 1);
  EXPECT_EQ(t[0].loc.col, 1);
  EXPECT_EQ(t[2].text, "foo");
  EXPECT_EQ(t[2].loc.col, 5);
  EXPECT_EQ(t[4].loc.col, 9);  // 1
  EXPECT_EQ(t[6].kind, TokenKind::Newline);
  EXPECT_EQ(t[6].loc.line, 1);
  EXPECT_EQ(t[6].loc.col, 11);
  EXPECT_TRUE(t[7].is_keyword("if"));
  EXPECT_EQ(t[7].loc.line, 4);
  EXPECT_EQ(t[11].kind, TokenKind::Indent);
  EXPECT_EQ(t[11].loc.line, 5);
  EXPECT_EQ(t[11].loc.col, 5);
  EXPECT_EQ(t[12].text, "z");
  EXPECT_EQ(t[12].loc.col, 5);
}

TEST(Lexer, ColumnsCountCharactersNotBytes) {
  std::vector<Token> t = lex("s = \"\xC3\xA9\xC3\xA9\" + t");  // "éé"
  EXPECT_EQ(t[2].text, "\xC3\xA9\xC3\xA9");
  EXPECT_EQ(t[3].loc.col, 10);
  EXPECT_EQ(t[4].loc.col, 12);
}

TEST(Lexer, CrLfLineEndings) {
  EXPECT_EQ(show("if a:\r\n    x = 1\r\ny\r\n"), "if a : NL IN x = int:1 NL DE y NL EOF");
  EXPECT_EQ(show("x = '''a\r\nb'''\r\n"), "x = str:<a\nb> NL EOF");
}

// ---------------------------------------------------------------------------- indentation

TEST(Lexer, NestedBlocks) {
  EXPECT_EQ(show("def f():\n"
                 "    if a:\n"
                 "        b\n"
                 "    c\n"
                 "d\n"),
            "def f ( ) : NL IN if a : NL IN b NL DE c NL DE d NL EOF");
}

TEST(Lexer, DedentSeveralLevelsAtOnce) {
  EXPECT_EQ(show("if a:\n"
                 "  if b:\n"
                 "    if c:\n"
                 "      x\n"
                 "y\n"),
            "if a : NL IN if b : NL IN if c : NL IN x NL DE DE DE y NL EOF");
  EXPECT_EQ(show("if a:\n"
                 "    if b:\n"
                 "        x\n"
                 "    y\n"),
            "if a : NL IN if b : NL IN x NL DE y NL DE EOF");
}

TEST(Lexer, DedentsAtEndOfFile) {
  EXPECT_EQ(show("if a:\n    if b:\n        x"), "if a : NL IN if b : NL IN x NL DE DE EOF");
  EXPECT_EQ(show("if a:\n    x\n\n   \n# end\n"), "if a : NL IN x NL DE EOF");
}

TEST(Lexer, BlankAndCommentLinesDoNotAffectIndentation) {
  EXPECT_EQ(show("if a:\n"
                 "\n"
                 "        # a comment indented deeper\n"
                 "    x  # trailing comment\n"
                 "   \n"
                 "# a comment at column 1\n"
                 "    y\n"),
            "if a : NL IN x NL y NL DE EOF");
}

TEST(Lexer, FirstLineIndented) {
  EXPECT_EQ(show("  x\n"), "IN x NL DE EOF");
}

TEST(Lexer, ImplicitLineJoining) {
  EXPECT_EQ(show("x = f(1,\n"
                 "        2)\n"
                 "y = a[\n"
                 "# comment inside\n"
                 "  3]\n"
                 "z = {\n"
                 "}\n"),
            "x = f ( int:1 , int:2 ) NL y = a [ int:3 ] NL z = { } NL EOF");
}

TEST(Lexer, JoinedLinesInsideBlocks) {
  EXPECT_EQ(show("if a:\n"
                 "    x = (1 +\n"
                 "2)\n"
                 "    y\n"),
            "if a : NL IN x = ( int:1 + int:2 ) NL y NL DE EOF");
}

TEST(Lexer, BackslashContinuation) {
  EXPECT_EQ(show("x = 1 + \\\n    2\ny\n"), "x = int:1 + int:2 NL y NL EOF");
  EXPECT_EQ(show("if a and \\\n  b:\n    c\n"), "if a and b : NL IN c NL DE EOF");
  EXPECT_EQ(show("x = 1 + \\\r\n  2\n"), "x = int:1 + int:2 NL EOF");
}

TEST(Lexer, Tabs) {
  EXPECT_EQ(show("if a:\n\tx\n\ty\n"), "if a : NL IN x NL y NL DE EOF");
  EXPECT_EQ(show("if a:\n\tif b:\n\t\tx\n\ty\n"), "if a : NL IN if b : NL IN x NL DE y NL DE EOF");
}

TEST(Lexer, BadDedentReportsLineAndColumn) {
  expect_error("if a:\n        x\n    y\n", 3, 5, "does not match any enclosing block");
  expect_error(
      "def kern(a):\n"
      "    if a:\n"
      "        x = 1\n"
      "      y = 2\n",
      4, 7, "indentation", "kern");
  CompileError e = lex_error("if a:\n        x\n    y\n");
  EXPECT_NE(e.hint().find("0, 8"), std::string::npos) << e.hint();
  EXPECT_NE(std::string(e.what()).find("test.py:3:5"), std::string::npos) << e.what();
}

TEST(Lexer, KernelNameInErrorsFollowsTheEnclosingDef) {
  const char* text =
      "def first(a):\n"
      "    x = 1\n"
      "y = $\n";
  expect_error(text, 3, 5, "unexpected character '$'");
  expect_error("def first(a):\n    x = 1\n\ndef second(b):\n    y = 0b2\n", 5, 9, "binary",
               "second");
}

TEST(Lexer, InconsistentTabsAndSpaces) {
  expect_error("if a:\n\tx\n        y\n", 3, 9, "inconsistent use of tabs and spaces");
  expect_error("if a:\n        x\n\ty\n", 3, 2, "inconsistent use of tabs and spaces");
}

// ---------------------------------------------------------------------------- numbers

TEST(Lexer, Integers) {
  EXPECT_EQ(int_value("0"), 0u);
  EXPECT_EQ(int_value("00"), 0u);
  EXPECT_EQ(int_value("42"), 42u);
  EXPECT_EQ(int_value("1_000_000"), 1000000u);
  EXPECT_EQ(int_value("0xff"), 255u);
  EXPECT_EQ(int_value("0XFF"), 255u);
  EXPECT_EQ(int_value("0x_dead_BEEF"), 0xdeadbeefu);
  EXPECT_EQ(int_value("0o17"), 15u);
  EXPECT_EQ(int_value("0O7_7"), 63u);
  EXPECT_EQ(int_value("0b1010"), 10u);
  EXPECT_EQ(int_value("0B_1_0"), 2u);
  EXPECT_EQ(int_value("2147483648"), 2147483648u);
  EXPECT_EQ(int_value("9223372036854775808"), 9223372036854775808u);
  EXPECT_EQ(int_value("18446744073709551615"), 18446744073709551615u);
  EXPECT_EQ(int_value("0xffffffffffffffff"), 18446744073709551615u);
  EXPECT_EQ(lex("123")[0].text, "123");
}

TEST(Lexer, Floats) {
  EXPECT_DOUBLE_EQ(float_value("1.5"), 1.5);
  EXPECT_DOUBLE_EQ(float_value("1."), 1.0);
  EXPECT_DOUBLE_EQ(float_value(".5"), 0.5);
  EXPECT_DOUBLE_EQ(float_value("0.0"), 0.0);
  EXPECT_DOUBLE_EQ(float_value("1e-3"), 1e-3);
  EXPECT_DOUBLE_EQ(float_value("1E+3"), 1000.0);
  EXPECT_DOUBLE_EQ(float_value("2e8"), 2e8);
  EXPECT_DOUBLE_EQ(float_value("1.e2"), 100.0);
  EXPECT_DOUBLE_EQ(float_value(".5e1"), 5.0);
  EXPECT_DOUBLE_EQ(float_value("1_000.0"), 1000.0);
  EXPECT_DOUBLE_EQ(float_value("1_0.2_5e1_0"), 10.25e10);
  EXPECT_DOUBLE_EQ(float_value("3.141592653589793"), 3.141592653589793);
  EXPECT_DOUBLE_EQ(float_value("1.7976931348623157e308"), 1.7976931348623157e308);
  EXPECT_EQ(float_value("1e-400"), 0.0);  // underflows to zero, as in Python
  // Exponents of more digits than a long holds (the fuzzer: a signed overflow in the lexer).
  EXPECT_EQ(float_value("1e-77777777777777777777777777"), 0.0);
  EXPECT_EQ(float_value("4.9e-324"), 4.9e-324);
  EXPECT_EQ(lex("1_0.5")[0].text, "1_0.5");
}

TEST(Lexer, NumbersNextToOperators) {
  EXPECT_EQ(show("a[1:2]"), "a [ int:1 : int:2 ] NL EOF");
  EXPECT_EQ(show("x.shape[0]-1"), "x . shape [ int:0 ] - int:1 NL EOF");
  EXPECT_EQ(show("1.5*.5"), "float:1.5 * float:.5 NL EOF");
  EXPECT_EQ(show("2**-1"), "int:2 ** - int:1 NL EOF");
  EXPECT_EQ(show("1e3+1"), "float:1e3 + int:1 NL EOF");
}

TEST(Lexer, NumberErrors) {
  expect_error("x = 18446744073709551616", 1, 5, "too large");
  expect_error("x = 0x1_0000_0000_0000_0000", 1, 5, "too large");
  expect_error("x = 1j", 1, 5, "imaginary");
  expect_error("x = 1.5J", 1, 5, "imaginary");
  expect_error("x = 012", 1, 5, "leading zeros");
  expect_error("x = 1__0", 1, 6, "misplaced '_'");
  expect_error("x = 1_", 1, 6, "misplaced '_'");
  expect_error("x = 1_.5", 1, 6, "misplaced '_'");
  expect_error("x = 0x", 1, 5, "no digits");
  expect_error("x = 0b102", 1, 5, "invalid digit '2' in binary");
  expect_error("x = 0o8", 1, 5, "octal");
  expect_error("x = 0xfg", 1, 5, "invalid hexadecimal literal");
  expect_error("x = 1abc", 1, 5, "invalid decimal literal");
  expect_error("x = 1.5.2", 1, 5, "invalid float literal");
  expect_error("x = 1e400", 1, 5, "too large");
  expect_error("x = 1e77777777777777777777777777", 1, 5, "too large");
  expect_error("x = 99.9e9223372036854775807", 1, 5, "too large");
}

// ---------------------------------------------------------------------------- strings

TEST(Lexer, Strings) {
  EXPECT_EQ(show("'a' \"b\""), "str:<a> str:<b> NL EOF");
  EXPECT_EQ(show("'it\"s' \"it's\""), "str:<it\"s> str:<it's> NL EOF");
  EXPECT_EQ(show("''"), "str:<> NL EOF");
  EXPECT_EQ(show("'''tri\nple''' x"), "str:<tri\nple> x NL EOF");
  EXPECT_EQ(show("\"\"\"a \"quoted\" 'word'\"\"\""), "str:<a \"quoted\" 'word'> NL EOF");
  EXPECT_EQ(show("'''a''b'''"), "str:<a''b> NL EOF");
  // A triple-quoted string spanning lines does not produce Newline or Indent tokens.
  EXPECT_EQ(show("def f():\n    \"\"\"Doc\n        more\n    \"\"\"\n    x\n"),
            "def f ( ) : NL IN str:<Doc\n        more\n    > NL x NL DE EOF");
}

TEST(Lexer, StringEscapes) {
  EXPECT_EQ(lex(R"('a\nb\tc\\d\'e\"f')")[0].text, "a\nb\tc\\d'e\"f");
  EXPECT_EQ(lex(R"("\r\a\b\f\v\0")")[0].text, std::string("\r\a\b\f\v\0", 6));
  EXPECT_EQ(lex(R"("\x41\101\u00e9\U0001F600")")[0].text, "AA\xC3\xA9\xF0\x9F\x98\x80");
  EXPECT_EQ(lex(R"("\d")")[0].text, "\\d");  // unknown escapes keep the backslash
  EXPECT_EQ(lex("'line \\\ncontinued'")[0].text, "line continued");
}

TEST(Lexer, StringPrefixes) {
  EXPECT_EQ(show(R"(r'\n' R"\d" u'x' f'{a}' b'y' rb'z' Fr'w')"),
            R"(str:r<\n> str:r<\d> str:u<x> str:f<{a}> str:b<y> str:rb<z> str:fr<w> NL EOF)");
  EXPECT_EQ(lex(R"(r'a\'b')")[0].text, R"(a\'b)");
  // A prefix-like name not followed by a quote is a name.
  EXPECT_EQ(show("rb + f"), "rb + f NL EOF");
}

TEST(Lexer, StringErrors) {
  expect_error("x = 'abc\ny = 1\n", 1, 5, "unterminated string literal");
  expect_error("x = \"abc", 1, 5, "unterminated string literal");
  expect_error("x = '''abc\n\ny = 1\n", 1, 5, "unterminated triple-quoted string");
  expect_error("x = 'a\\N{DASH}'", 1, 7, "named Unicode escapes");
  expect_error("x = 'a\\x4'", 1, 7, "truncated \\x escape");
}

// ---------------------------------------------------------------------------- operators

TEST(Lexer, EveryOperator) {
  for (const char* op :
       {"+",   "-",  "*",   "/",   "//", "%",  "**", "@", "<<", ">>", "&",  "|",  "^",   "~",
        "<",   ">",  "<=",  ">=",  "==", "!=", "->", "=", "+=", "-=", "*=", "/=", "//=", "%=",
        "**=", "@=", "<<=", ">>=", "&=", "|=", "^=", ".", ",",  ":",  ";",  ":=", "..."}) {
    std::vector<Token> t = lex(std::string("a ") + op + " b");
    ASSERT_EQ(t.size(), 5u) << op;
    EXPECT_EQ(t[1].kind, TokenKind::Op) << op;
    EXPECT_EQ(t[1].text, op);
    EXPECT_EQ(t[1].loc.col, 3) << op;
    EXPECT_EQ(t[2].text, "b") << op;
  }
}

TEST(Lexer, OperatorsAreLongestMatch) {
  EXPECT_EQ(show("a**=b//=c>>=d<<=e"), "a **= b //= c >>= d <<= e NL EOF");
  EXPECT_EQ(show("a***b"), "a ** * b NL EOF");
  EXPECT_EQ(show("a<<b<=c<d"), "a << b <= c < d NL EOF");
  EXPECT_EQ(show("def f()->int:"), "def f ( ) -> int : NL EOF");
  EXPECT_EQ(show("a@b@=c"), "a @ b @= c NL EOF");
  EXPECT_EQ(show("a==-b!=~c"), "a == - b != ~ c NL EOF");
}

TEST(Lexer, BadCharacters) {
  expect_error("x = !a", 1, 5, "'!' is not an operator");
  expect_error("x = a ? b", 1, 7, "unexpected character '?'");
  expect_error("x = `a`", 1, 5, "unexpected character '`'");
  expect_error("x = a \\ b", 1, 7, "backslash");
  expect_error("x = a \\", 1, 7, "ends right after a line-continuation backslash");
}

TEST(Lexer, BracketErrors) {
  expect_error("x = a)", 1, 6, "unmatched ')'");
  expect_error("x = f(a,\n      b]", 2, 8, "does not match the '(' opened on line 1, column 6");
  expect_error("x = f(a,\n  b\ny = 2\n", 1, 6, "'(' was never closed");
  expect_error("def k(a):\n    x = [1,\n", 2, 9, "'[' was never closed", "k");
}

}  // namespace
}  // namespace tack::lang
