#include <gtest/gtest.h>

#include <fmt/format.h>

#include <string>

#include "lang/ast.hpp"
#include "lang/parser.hpp"
#include "tack/error.hpp"

namespace tack::lang {
namespace {

using ast::Expr;
using ast::Stmt;

ast::Module parse(const std::string& text) {
  return parse_module(std::make_shared<SourceFile>("kernels.py", text));
}

// A fully parenthesized rendering of an expression, to check structure and precedence compactly.
std::string show(const Expr& e) {
  auto join = [](const std::vector<ast::ExprPtr>& items) {
    std::string out;
    for (const auto& item : items) out += (out.empty() ? "" : ", ") + show(*item);
    return out;
  };
  switch (e.kind) {
    case Expr::Kind::Name:
      return e.name;
    case Expr::Kind::IntLit:
      return std::to_string(e.uint_value);
    case Expr::Kind::FloatLit:
      return fmt::format("{}f", e.float_value);
    case Expr::Kind::BoolLit:
      return e.bool_value ? "True" : "False";
    case Expr::Kind::StringLit:
      return "'" + e.string_value + "'";
    case Expr::Kind::Attribute:
      return show(*e.operand) + "." + e.name;
    case Expr::Kind::Subscript:
      return show(*e.operand) + "[" + join(e.args) + "]";
    case Expr::Kind::Call: {
      std::string args = join(e.args);
      for (const ast::Keyword& k : e.keywords)
        args += (args.empty() ? "" : ", ") + k.name + "=" + show(*k.value);
      return show(*e.operand) + "(" + args + ")";
    }
    case Expr::Kind::Binary:
      return "(" + show(*e.args[0]) + " " + spelling(e.bin_op) + " " + show(*e.args[1]) + ")";
    case Expr::Kind::Unary:
      return "(" + std::string(spelling(e.unary_op)) +
             (e.unary_op == ast::UnaryOp::Not ? " " : "") + show(*e.args[0]) + ")";
    case Expr::Kind::BoolOp:
      return "(" + show(*e.args[0]) + (e.bool_op == ast::BoolOp::And ? " and " : " or ") +
             show(*e.args[1]) + ")";
    case Expr::Kind::Compare: {
      std::string out = "(" + show(*e.args[0]);
      for (size_t i = 0; i < e.cmp_ops.size(); ++i)
        out += std::string(" ") + spelling(e.cmp_ops[i]) + " " + show(*e.args[i + 1]);
      return out + ")";
    }
    case Expr::Kind::IfExp:
      return "(" + show(*e.args[1]) + " if " + show(*e.args[0]) + " else " + show(*e.args[2]) + ")";
    case Expr::Kind::Tuple:
      return "(" + join(e.args) + (e.args.size() == 1 ? ",)" : ")");
  }
  return "?";
}

// Statements rendered back as Python-like text, two spaces per level; elif shows as a nested if.
std::string show(const ast::Block& block, int depth = 0);

std::string show(const Stmt& s, int depth) {
  std::string pad(depth * 2, ' ');
  auto targets = [&] {
    std::string out;
    for (const auto& t : s.targets) out += show(*t) + " = ";
    return out;
  };
  switch (s.kind) {
    case Stmt::Kind::Expr:
      return pad + show(*s.value) + "\n";
    case Stmt::Kind::Assign:
      return pad + targets() + show(*s.value) + "\n";
    case Stmt::Kind::AugAssign:
      return pad + show(*s.targets[0]) + " " + spelling(s.aug_op) + "= " + show(*s.value) + "\n";
    case Stmt::Kind::If: {
      std::string out = pad + "if " + show(*s.cond) + ":\n" + show(s.body, depth + 1);
      if (!s.orelse.empty()) out += pad + "else:\n" + show(s.orelse, depth + 1);
      return out;
    }
    case Stmt::Kind::For:
      return pad + "for " + show(*s.targets[0]) + " in " + show(*s.iter) + ":\n" +
             show(s.body, depth + 1);
    case Stmt::Kind::While:
      return pad + "while " + show(*s.cond) + ":\n" + show(s.body, depth + 1);
    case Stmt::Kind::Break:
      return pad + "break\n";
    case Stmt::Kind::Continue:
      return pad + "continue\n";
    case Stmt::Kind::Pass:
      return pad + "pass\n";
    case Stmt::Kind::Return:
      return pad + "return" + (s.value ? " " + show(*s.value) : "") + "\n";
  }
  return "?";
}

std::string show(const ast::Block& block, int depth) {
  std::string out;
  for (const auto& s : block) out += show(*s, depth);
  return out;
}

// The body of `def f():` holding `body` (lines indented by the caller's choice of 4 spaces).
std::string body_of(const std::string& body) {
  std::string text = "def f():\n";
  size_t start = 0;
  while (start < body.size()) {
    size_t end = body.find('\n', start);
    if (end == std::string::npos) end = body.size();
    text += "    " + body.substr(start, end - start) + "\n";
    start = end + 1;
  }
  ast::Module m = parse(text);
  return show(m.functions.at(0)->body);
}

// One expression, fully parenthesized.
std::string expr(const std::string& text) {
  ast::Module m = parse("def f():\n    " + text + "\n");
  const Stmt& s = *m.functions.at(0)->body.at(0);
  EXPECT_EQ(s.kind, Stmt::Kind::Expr) << text;
  return show(*s.value);
}

CompileError parse_error(const std::string& text) {
  try {
    parse(text);
  } catch (const CompileError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return CompileError("", "", 0, 0, "", "", "");
}

// Checks where the error points, which kernel it names, and that its message says `in_message`.
void expect_error(const std::string& text, int line, int col, const std::string& kernel,
                  const std::string& in_message) {
  CompileError e = parse_error(text);
  EXPECT_EQ(e.line(), line) << e.what();
  EXPECT_EQ(e.col(), col) << e.what();
  EXPECT_EQ(e.kernel(), kernel) << e.what();
  EXPECT_NE(e.message().find(in_message), std::string::npos) << e.what();
  EXPECT_GT(e.hint().size(), 10u) << e.what();
  EXPECT_EQ(e.file(), "kernels.py");
}

// An error inside `def k(a):`, on the body's first line (line 2, columns counted from the 4-space
// indentation).
void expect_body_error(const std::string& body_line, int col, const std::string& in_message) {
  expect_error("def k(a):\n    " + body_line + "\n", 2, col + 4, "k", in_message);
}

// ---------------------------------------------------------------------------- ast spellings

TEST(Ast, Spellings) {
  EXPECT_STREQ(ast::spelling(ast::BinOp::Add), "+");
  EXPECT_STREQ(ast::spelling(ast::BinOp::FloorDiv), "//");
  EXPECT_STREQ(ast::spelling(ast::BinOp::Pow), "**");
  EXPECT_STREQ(ast::spelling(ast::BinOp::MatMul), "@");
  EXPECT_STREQ(ast::spelling(ast::BinOp::Shr), ">>");
  EXPECT_STREQ(ast::spelling(ast::BinOp::BitXor), "^");
  EXPECT_STREQ(ast::spelling(ast::UnaryOp::Not), "not");
  EXPECT_STREQ(ast::spelling(ast::UnaryOp::Invert), "~");
  EXPECT_STREQ(ast::spelling(ast::CmpOp::Le), "<=");
  EXPECT_STREQ(ast::spelling(ast::CmpOp::Ne), "!=");
}

// ---------------------------------------------------------------------------- expressions

TEST(ParserExpr, PowerAndUnary) {
  EXPECT_EQ(expr("-2**2"), "(-(2 ** 2))");
  EXPECT_EQ(expr("2**-1"), "(2 ** (-1))");
  EXPECT_EQ(expr("2**3**2"), "(2 ** (3 ** 2))");
  EXPECT_EQ(expr("-x**-y**2"), "(-(x ** (-(y ** 2))))");
  EXPECT_EQ(expr("~x + -y"), "((~x) + (-y))");
  EXPECT_EQ(expr("- -x"), "(-(-x))");
  EXPECT_EQ(expr("+x"), "(+x)");
  EXPECT_EQ(expr("a.b ** 2"), "(a.b ** 2)");
  EXPECT_EQ(expr("-a.b[c](d)"), "(-a.b[c](d))");
}

TEST(ParserExpr, Arithmetic) {
  EXPECT_EQ(expr("a + b * c"), "(a + (b * c))");
  EXPECT_EQ(expr("a * b + c"), "((a * b) + c)");
  EXPECT_EQ(expr("a - b - c"), "((a - b) - c)");
  EXPECT_EQ(expr("a // b % c * d / e"), "((((a // b) % c) * d) / e)");
  EXPECT_EQ(expr("a @ b * c"), "((a @ b) * c)");
  EXPECT_EQ(expr("m @ v + w"), "((m @ v) + w)");
  EXPECT_EQ(expr("(a + b) * c"), "((a + b) * c)");
}

TEST(ParserExpr, BitwiseOrder) {
  EXPECT_EQ(expr("a | b ^ c & d << e + f"), "(a | (b ^ (c & (d << (e + f)))))");
  EXPECT_EQ(expr("a + b << c & d ^ e | f"), "(((((a + b) << c) & d) ^ e) | f)");
  EXPECT_EQ(expr("a & b | c"), "((a & b) | c)");
  EXPECT_EQ(expr("a >> 1 << 2"), "((a >> 1) << 2)");
  EXPECT_EQ(expr("a | b == c"), "((a | b) == c)");
}

TEST(ParserExpr, Comparisons) {
  EXPECT_EQ(expr("a < b"), "(a < b)");
  EXPECT_EQ(expr("a < b <= c"), "(a < b <= c)");
  EXPECT_EQ(expr("a == b != c > d >= e"), "(a == b != c > d >= e)");
  EXPECT_EQ(expr("a + 1 < b * 2"), "((a + 1) < (b * 2))");
  ast::Module m = parse("def f():\n    0 <= i < n\n");
  const Expr& cmp = *m.functions[0]->body[0]->value;
  ASSERT_EQ(cmp.kind, Expr::Kind::Compare);
  EXPECT_EQ(cmp.args.size(), 3u);
  ASSERT_EQ(cmp.cmp_ops.size(), 2u);
  EXPECT_EQ(cmp.cmp_ops[0], ast::CmpOp::Le);
  EXPECT_EQ(cmp.cmp_ops[1], ast::CmpOp::Lt);
}

TEST(ParserExpr, BooleanOperators) {
  EXPECT_EQ(expr("not a == b"), "(not (a == b))");
  EXPECT_EQ(expr("not not a"), "(not (not a))");
  EXPECT_EQ(expr("a or b and not c"), "(a or (b and (not c)))");
  EXPECT_EQ(expr("a and b and c"), "((a and b) and c)");
  EXPECT_EQ(expr("a or b or c"), "((a or b) or c)");
  EXPECT_EQ(expr("a < b and b < c or d"), "(((a < b) and (b < c)) or d)");
}

TEST(ParserExpr, ConditionalExpressions) {
  EXPECT_EQ(expr("a if b else c"), "(a if b else c)");
  EXPECT_EQ(expr("a if b else c if d else e"), "(a if b else (c if d else e))");
  EXPECT_EQ(expr("x + 1 if x > 0 or y else -x"), "((x + 1) if ((x > 0) or y) else (-x))");
  EXPECT_EQ(expr("(a if b else c) + 1"), "((a if b else c) + 1)");
  EXPECT_EQ(expr("f(a if b else c, k=d if e else g)"), "f((a if b else c), k=(d if e else g))");
}

TEST(ParserExpr, CallsAttributesSubscripts) {
  EXPECT_EQ(expr("f()"), "f()");
  EXPECT_EQ(expr("f(a, b + 1, k=1, m=x * 2,)"), "f(a, (b + 1), k=1, m=(x * 2))");
  EXPECT_EQ(expr("tack.constant(3.0, dtype=tack.f32)"), "tack.constant(3f, dtype=tack.f32)");
  EXPECT_EQ(expr("x.shape[0]"), "x.shape[0]");
  EXPECT_EQ(expr("a[i][j]"), "a[i][j]");
  EXPECT_EQ(expr("a[i, j + 1]"), "a[i, (j + 1)]");
  EXPECT_EQ(expr("a[(i, j)]"), "a[(i, j)]");
  EXPECT_EQ(expr("a[i,]"), "a[(i,)]");
  EXPECT_EQ(expr("tack.random.uniform(s)"), "tack.random.uniform(s)");
  EXPECT_EQ(expr("f(a)(b).c[d]"), "f(a)(b).c[d]");

  ast::Module m = parse("def f():\n    a[i, j]\n    a[(i, j)]\n    g(x, y=1)\n");
  const Expr& two = *m.functions[0]->body[0]->value;
  ASSERT_EQ(two.kind, Expr::Kind::Subscript);
  EXPECT_EQ(two.args.size(), 2u);
  const Expr& one = *m.functions[0]->body[1]->value;
  ASSERT_EQ(one.args.size(), 1u);
  EXPECT_EQ(one.args[0]->kind, Expr::Kind::Tuple);
  const Expr& call = *m.functions[0]->body[2]->value;
  ASSERT_EQ(call.keywords.size(), 1u);
  EXPECT_EQ(call.keywords[0].name, "y");
  EXPECT_EQ(call.keywords[0].loc.col, 10);
}

TEST(ParserExpr, TuplesAndParentheses) {
  EXPECT_EQ(expr("(a, b)"), "(a, b)");
  EXPECT_EQ(expr("(a,)"), "(a,)");
  EXPECT_EQ(expr("((a))"), "a");
  EXPECT_EQ(expr("(a, (b, c))"), "(a, (b, c))");
  EXPECT_EQ(expr("()"), "()");
  EXPECT_EQ(expr("a, b"), "(a, b)");
  EXPECT_EQ(expr("(\n  a,\n  b,\n)"), "(a, b)");
}

TEST(ParserExpr, Literals) {
  EXPECT_EQ(expr("True or False"), "(True or False)");
  EXPECT_EQ(expr("1.5 + .5"), "(1.5f + 0.5f)");
  EXPECT_EQ(expr("'ab' \"cd\"\n"), "'abcd'");
  EXPECT_EQ(expr("('ab'\n  'cd')"), "'abcd'");
  EXPECT_EQ(expr("r'\\n' u'x'"), "'\\nx'");

  ast::Module m = parse("def f():\n    x = -1\n    y = 18446744073709551615\n    z = 0x10\n");
  const Expr& neg = *m.functions[0]->body[0]->value;
  ASSERT_EQ(neg.kind, Expr::Kind::Unary);
  EXPECT_EQ(neg.unary_op, ast::UnaryOp::Neg);
  ASSERT_EQ(neg.args[0]->kind, Expr::Kind::IntLit);
  EXPECT_EQ(neg.args[0]->int_value, 1);
  const Expr& big = *m.functions[0]->body[1]->value;
  EXPECT_EQ(big.uint_value, 18446744073709551615u);
  EXPECT_EQ(big.int_value, INT64_MAX);
  EXPECT_EQ(m.functions[0]->body[2]->value->int_value, 16);
}

TEST(ParserExpr, Locations) {
  ast::Module m = parse("def f():\n    y = (a + b) * c.d[e]\n");
  const Stmt& s = *m.functions[0]->body[0];
  EXPECT_EQ(s.loc.line, 2);
  EXPECT_EQ(s.loc.col, 5);
  const Expr& mul = *s.value;
  EXPECT_EQ(mul.loc.col, 9);  // the '(' that starts it
  const Expr& add = *mul.args[0];
  EXPECT_EQ(add.loc.col, 10);
  const Expr& sub = *mul.args[1];
  EXPECT_EQ(sub.kind, Expr::Kind::Subscript);
  EXPECT_EQ(sub.loc.col, 19);
  EXPECT_EQ(sub.args[0]->loc.col, 23);
  EXPECT_EQ(sub.operand->loc.col, 19);
}

// ---------------------------------------------------------------------------- statements

TEST(ParserStmt, Assignments) {
  EXPECT_EQ(body_of("x = 1"), "x = 1\n");
  EXPECT_EQ(body_of("a = b = 0"), "a = b = 0\n");
  EXPECT_EQ(body_of("a, b = b, a"), "(a, b) = (b, a)\n");
  EXPECT_EQ(body_of("(a, b) = f(x)"), "(a, b) = f(x)\n");
  EXPECT_EQ(body_of("u, s = tack.random.uniform(s)"), "(u, s) = tack.random.uniform(s)\n");
  EXPECT_EQ(body_of("out[i] = x[i] * 2"), "out[i] = (x[i] * 2)\n");
  EXPECT_EQ(body_of("img[y, x] = v"), "img[y, x] = v\n");
  EXPECT_EQ(body_of("v.x = 1.0"), "v.x = 1f\n");
  EXPECT_EQ(body_of("a[i], v.y = 1, 2"), "(a[i], v.y) = (1, 2)\n");
  EXPECT_EQ(body_of("t = 1,"), "t = (1,)\n");

  ast::Module m = parse("def f():\n    a = b = c\n");
  const Stmt& s = *m.functions[0]->body[0];
  ASSERT_EQ(s.kind, Stmt::Kind::Assign);
  ASSERT_EQ(s.targets.size(), 2u);
  EXPECT_EQ(s.targets[0]->name, "a");
  EXPECT_EQ(s.targets[1]->name, "b");
  EXPECT_EQ(s.value->name, "c");
}

TEST(ParserStmt, AugmentedAssignments) {
  const std::pair<const char*, ast::BinOp> ops[] = {
      {"+=", ast::BinOp::Add},    {"-=", ast::BinOp::Sub},       {"*=", ast::BinOp::Mul},
      {"/=", ast::BinOp::Div},    {"//=", ast::BinOp::FloorDiv}, {"%=", ast::BinOp::Mod},
      {"**=", ast::BinOp::Pow},   {"@=", ast::BinOp::MatMul},    {"<<=", ast::BinOp::Shl},
      {">>=", ast::BinOp::Shr},   {"&=", ast::BinOp::BitAnd},    {"|=", ast::BinOp::BitOr},
      {"^=", ast::BinOp::BitXor},
  };
  for (const auto& [spelling, op] : ops) {
    ast::Module m = parse(fmt::format("def f():\n    x[i] {} y + 1\n", spelling));
    const Stmt& s = *m.functions[0]->body[0];
    ASSERT_EQ(s.kind, Stmt::Kind::AugAssign) << spelling;
    EXPECT_EQ(s.aug_op, op) << spelling;
    EXPECT_EQ(show(*s.targets[0]), "x[i]");
    EXPECT_EQ(show(*s.value), "(y + 1)");
  }
  EXPECT_EQ(body_of("acc.x += v"), "acc.x += v\n");
}

TEST(ParserStmt, IfElifElse) {
  EXPECT_EQ(body_of("if a:\n"
                    "    x = 1\n"
                    "elif b:\n"
                    "    x = 2\n"
                    "elif c:\n"
                    "    x = 3\n"
                    "else:\n"
                    "    x = 4\n"
                    "y = x"),
            "if a:\n"
            "  x = 1\n"
            "else:\n"
            "  if b:\n"
            "    x = 2\n"
            "  else:\n"
            "    if c:\n"
            "      x = 3\n"
            "    else:\n"
            "      x = 4\n"
            "y = x\n");
  ast::Module m = parse("def f():\n    if a:\n        pass\n    elif b:\n        pass\n");
  const Stmt& s = *m.functions[0]->body[0];
  ASSERT_EQ(s.orelse.size(), 1u);
  EXPECT_EQ(s.orelse[0]->kind, Stmt::Kind::If);
  EXPECT_EQ(s.orelse[0]->loc.line, 4);  // the elif
  EXPECT_TRUE(s.orelse[0]->orelse.empty());
}

TEST(ParserStmt, Loops) {
  EXPECT_EQ(body_of("for i in range(n):\n"
                    "    if i % 2 == 0:\n"
                    "        continue\n"
                    "    while x < 4:\n"
                    "        x += 1\n"
                    "        if x == 3:\n"
                    "            break\n"),
            "for i in range(n):\n"
            "  if ((i % 2) == 0):\n"
            "    continue\n"
            "  while (x < 4):\n"
            "    x += 1\n"
            "    if (x == 3):\n"
            "      break\n");
  EXPECT_EQ(body_of("for i, j in tack.ndrange(h, w):\n    pass"),
            "for (i, j) in tack.ndrange(h, w):\n  pass\n");
  EXPECT_EQ(body_of("for (i, j) in tack.ndrange((0, h), w):\n    pass"),
            "for (i, j) in tack.ndrange((0, h), w):\n  pass\n");
  EXPECT_EQ(body_of("for i, in r:\n    pass"), "for (i,) in r:\n  pass\n");
}

TEST(ParserStmt, ReturnPassAndSameLineBodies) {
  EXPECT_EQ(body_of("return"), "return\n");
  EXPECT_EQ(body_of("return a + b"), "return (a + b)\n");
  EXPECT_EQ(body_of("return a, b"), "return (a, b)\n");
  EXPECT_EQ(body_of("if a: return 1\nelse: return 2"), "if a:\n  return 1\nelse:\n  return 2\n");
  EXPECT_EQ(body_of("while True: x += 1; break"), "while True:\n  x += 1\n  break\n");
  EXPECT_EQ(body_of("a = 1; b = 2;"), "a = 1\nb = 2\n");
  EXPECT_EQ(body_of("pass"), "pass\n");
  ast::Module m = parse("def f(): return 1\n");
  EXPECT_EQ(show(m.functions[0]->body), "return 1\n");
}

TEST(ParserStmt, Docstrings) {
  ast::Module m = parse("def f(a):\n    \"\"\"Adds.\n\n    More.\"\"\"\n    return a\n");
  const auto& body = m.functions[0]->body;
  ASSERT_EQ(body.size(), 2u);
  EXPECT_EQ(body[0]->kind, Stmt::Kind::Expr);
  EXPECT_EQ(body[0]->value->kind, Expr::Kind::StringLit);
  EXPECT_EQ(body[0]->value->string_value, "Adds.\n\n    More.");
}

// ---------------------------------------------------------------------------- module level

TEST(ParserModule, Imports) {
  ast::Module m = parse(
      "import tack\n"
      "import numpy as np, math\n"
      "import tack.math\n"
      "import tack.random as rnd\n"
      "from tack import kernel, func as device\n"
      "from tack.math import (dot,\n"
      "    cross,\n"
      ")\n");
  ASSERT_EQ(m.imports.size(), 7u);
  EXPECT_EQ(m.imports[0].module, "tack");
  EXPECT_EQ(m.imports[0].alias, "tack");
  EXPECT_FALSE(m.imports[0].is_from);
  EXPECT_EQ(m.imports[1].module, "numpy");
  EXPECT_EQ(m.imports[1].alias, "np");
  EXPECT_EQ(m.imports[1].loc.col, 8);
  EXPECT_EQ(m.imports[2].module, "math");
  EXPECT_EQ(m.imports[2].alias, "math");
  EXPECT_EQ(m.imports[3].module, "tack");  // `import tack.math` binds `tack`
  EXPECT_EQ(m.imports[3].alias, "tack");
  EXPECT_EQ(m.imports[4].module, "tack.random");
  EXPECT_EQ(m.imports[4].alias, "rnd");
  EXPECT_TRUE(m.imports[5].is_from);
  EXPECT_EQ(m.imports[5].module, "tack");
  EXPECT_TRUE(m.imports[5].alias.empty());
  ASSERT_EQ(m.imports[5].names.size(), 2u);
  EXPECT_EQ(m.imports[5].names[0], std::make_pair(std::string("kernel"), std::string("kernel")));
  EXPECT_EQ(m.imports[5].names[1], std::make_pair(std::string("func"), std::string("device")));
  EXPECT_EQ(m.imports[6].module, "tack.math");
  EXPECT_EQ(m.imports[6].loc.line, 6);
  ASSERT_EQ(m.imports[6].names.size(), 2u);
  EXPECT_EQ(m.imports[6].names[1].first, "cross");
}

TEST(ParserModule, GlobalsAndDocstring) {
  ast::Module m = parse(
      "\"\"\"Kernels for the demo.\"\"\"\n"
      "import tack\n"
      "N = tack.constant(16)\n"
      "SCALE = tack.constant(0.5, dtype=tack.f64)\n"
      "UP = tack.constant((0.0, 1.0, 0.0))\n"
      "'a stray string'\n");
  ASSERT_EQ(m.globals.size(), 3u);
  EXPECT_EQ(m.globals[0].name, "N");
  EXPECT_EQ(m.globals[0].loc.line, 3);
  EXPECT_EQ(show(*m.globals[0].value), "tack.constant(16)");
  EXPECT_EQ(show(*m.globals[1].value), "tack.constant(0.5f, dtype=tack.f64)");
  EXPECT_EQ(show(*m.globals[2].value), "tack.constant((0f, 1f, 0f))");
  EXPECT_TRUE(m.functions.empty());
  EXPECT_EQ(m.source->name(), "kernels.py");
}

TEST(ParserModule, FunctionsAndDecorators) {
  ast::Module m = parse(
      "@tack.kernel\n"
      "def k(a, b,):\n"
      "    pass\n"
      "\n"
      "@tack.func\n"
      "@tack.kernel(backend='cpu', debug=True)\n"
      "def g(x) -> tack.f32:\n"
      "    return x\n"
      "def plain():\n"
      "    pass\n");
  ASSERT_EQ(m.functions.size(), 3u);
  const ast::FunctionDef& k = *m.functions[0];
  EXPECT_EQ(k.name, "k");
  EXPECT_EQ(k.loc.line, 2);
  EXPECT_EQ(k.loc.col, 1);
  ASSERT_EQ(k.params.size(), 2u);
  EXPECT_EQ(k.params[0].name, "a");
  EXPECT_EQ(k.params[1].name, "b");
  EXPECT_EQ(k.params[1].loc.col, 10);
  ASSERT_EQ(k.decorators.size(), 1u);
  EXPECT_EQ(show(*k.decorators[0].expr), "tack.kernel");
  EXPECT_EQ(k.decorators[0].loc.line, 1);
  EXPECT_EQ(k.returns, nullptr);
  const ast::FunctionDef& g = *m.functions[1];
  ASSERT_EQ(g.decorators.size(), 2u);
  EXPECT_EQ(show(*g.decorators[1].expr), "tack.kernel(backend='cpu', debug=True)");
  ASSERT_NE(g.returns, nullptr);
  EXPECT_EQ(show(*g.returns), "tack.f32");
  EXPECT_TRUE(m.functions[2]->decorators.empty());
  EXPECT_TRUE(m.functions[2]->params.empty());
}

TEST(ParserModule, MainBlockIsSkipped) {
  ast::Module m = parse(
      "import tack\n"
      "@tack.kernel\n"
      "def k(a):\n"
      "    pass\n"
      "if __name__ == \"__main__\":\n"
      "    import numpy as np\n"
      "    class Demo:\n"
      "        data = [x * x for x in range(10)]\n"
      "        lookup = {'a': 1, **{}}\n"
      "    with open('f') as f:\n"
      "        print(f\"{k} and {f!r}\", lambda: None, *[1], sep='')\n"
      "    try:\n"
      "        if (n := 3) is not None: del n\n"
      "    except Exception:\n"
      "        raise\n"
      "else:\n"
      "    global q\n"
      "def after(b):\n"
      "    pass\n"
      "if '__main__' == __name__: print(a[1:2])\n"
      "X = tack.constant(1)\n");
  ASSERT_EQ(m.functions.size(), 2u);
  EXPECT_EQ(m.functions[1]->name, "after");
  ASSERT_EQ(m.globals.size(), 1u);
  EXPECT_EQ(m.globals[0].name, "X");
  EXPECT_EQ(m.imports.size(), 1u);
}

// A method whose header lacks its ':' is kept unparsed with its error (raised if a kernel uses it),
// and only its own line goes with it: the kernel after the class is not taken for its body.
TEST(ParserModule, AHeaderWithoutItsColonKeepsTheNextDefinition) {
  ast::Module m = parse(
      "import tack\n"
      "class Scale:\n"
      "    @tack.func\n"
      "    def apply(self, x)   return x\n"
      "@tack.kernel\n"
      "def k(s: tack.template(), x):\n"
      "    pass\n"
      "def after(b):\n"
      "    pass\n");
  ASSERT_EQ(m.classes.size(), 1u);
  ASSERT_EQ(m.classes[0]->methods.size(), 1u);
  EXPECT_EQ(m.classes[0]->methods[0]->name, "apply");
  EXPECT_TRUE(m.classes[0]->methods[0]->unparsed);
  ASSERT_EQ(m.functions.size(), 2u);
  EXPECT_EQ(m.functions[0]->name, "k");
  EXPECT_FALSE(m.functions[0]->unparsed);
  EXPECT_EQ(m.functions[1]->name, "after");
}

TEST(ParserModule, RealisticKernelsFile) {
  ast::Module m = parse(R"PY("""Example kernels: element-wise ops, a stencil and a fractal."""
import math

import tack
from tack import f32

MAX_ITER = tack.constant(256)
ALPHA = tack.constant(0.25, dtype=tack.f32)


@tack.kernel
def vector_add(a, b, out):
    for i in range(out.shape[0]):
        out[i] = a[i] + b[i]


@tack.kernel
def saxpy(a, x, y, out):
    for i in range(x.shape[0]):  # the parallel loop
        out[i] = a * x[i] + y[i]


@tack.func
def clamp01(v):
    return min(max(v, 0.0), 1.0)


@tack.kernel
def stencil(src, dst):
    h = src.shape[0]
    w = src.shape[1]
    for i, j in tack.ndrange(h, w):
        if i == 0 or j == 0 or i == h - 1 or j == w - 1:
            dst[i, j] = src[i, j]
            continue
        s = (src[i - 1, j] + src[i + 1, j] +
             src[i, j - 1] + src[i, j + 1])
        dst[i, j] = (1.0 - ALPHA) * src[i, j] + ALPHA * 0.25 * s


@tack.kernel
def mandelbrot(img, x0, y0, scale):
    for py, px in tack.ndrange(img.shape[0], img.shape[1]):
        cr = x0 + px * scale
        ci = y0 + py * scale
        zr, zi = 0.0, 0.0
        n = 0
        while n < MAX_ITER:
            zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
            if zr * zr + zi * zi > 4.0:
                break
            n += 1
        img[py, px] = clamp01(math.log2(f32(n) + 1.0) / 8.0) if n < MAX_ITER else 0.0


@tack.kernel
def total(x) -> tack.f32:
    acc = tack.local_array(tack.f32, 1)
    for _ in range(1):
        acc[0] = 0.0
        for k in range(len(x)):
            acc[0] += x[k] ** 2
    return math.sqrt(acc[0])


if __name__ == "__main__":
    import numpy as np
    a = np.ones(16, dtype=np.float32)
    print(f"{vector_add(a, a, a)}")
)PY");
  ASSERT_EQ(m.imports.size(), 3u);
  ASSERT_EQ(m.globals.size(), 2u);
  ASSERT_EQ(m.functions.size(), 6u);
  EXPECT_EQ(m.functions[0]->name, "vector_add");
  EXPECT_EQ(m.functions[3]->name, "stencil");
  EXPECT_EQ(show(m.functions[1]->body),
            "for i in range(x.shape[0]):\n"
            "  out[i] = ((a * x[i]) + y[i])\n");
  EXPECT_EQ(show(m.functions[3]->body),
            "h = src.shape[0]\n"
            "w = src.shape[1]\n"
            "for (i, j) in tack.ndrange(h, w):\n"
            "  if ((((i == 0) or (j == 0)) or (i == (h - 1))) or (j == (w - 1))):\n"
            "    dst[i, j] = src[i, j]\n"
            "    continue\n"
            "  s = (((src[(i - 1), j] + src[(i + 1), j]) + src[i, (j - 1)]) + src[i, (j + 1)])\n"
            "  dst[i, j] = (((1f - ALPHA) * src[i, j]) + ((ALPHA * 0.25f) * s))\n");
  EXPECT_EQ(show(m.functions[4]->body),
            "for (py, px) in tack.ndrange(img.shape[0], img.shape[1]):\n"
            "  cr = (x0 + (px * scale))\n"
            "  ci = (y0 + (py * scale))\n"
            "  (zr, zi) = (0f, 0f)\n"
            "  n = 0\n"
            "  while (n < MAX_ITER):\n"
            "    (zr, zi) = ((((zr * zr) - (zi * zi)) + cr), (((2f * zr) * zi) + ci))\n"
            "    if (((zr * zr) + (zi * zi)) > 4f):\n"
            "      break\n"
            "    n += 1\n"
            "  img[py, px] = (clamp01((math.log2((f32(n) + 1f)) / 8f)) if (n < MAX_ITER) else "
            "0f)\n");
  const ast::FunctionDef& total = *m.functions[5];
  EXPECT_EQ(show(*total.returns), "tack.f32");
  EXPECT_EQ(show(*total.body.back(), 0), "return math.sqrt(acc[0])\n");
  EXPECT_EQ(total.body[1]->body[1]->body[0]->kind, Stmt::Kind::AugAssign);
}

TEST(ParserModule, EmptyFile) {
  ast::Module m = parse("");
  EXPECT_TRUE(m.imports.empty());
  EXPECT_TRUE(m.functions.empty());
  EXPECT_TRUE(parse("# nothing\n\n").functions.empty());
}

// ---------------------------------------------------------------------------- errors

TEST(ParserErrors, Parameters) {
  expect_error("def k(a, b=1):\n    pass\n", 1, 11, "k", "default parameter values");
  expect_error("def k(a, *args):\n    pass\n", 1, 10, "k", "variadic parameters (*args)");
  expect_error("def k(a, *, b):\n    pass\n", 1, 10, "k", "variadic");
  expect_error("def k(**kw):\n    pass\n", 1, 7, "k", "(**kwargs)");
  expect_error("def k(a, /):\n    pass\n", 1, 10, "k", "positional-only");
  expect_error("def k(a, a):\n    pass\n", 1, 10, "k", "duplicate parameter 'a'");
  expect_error("def k(a b):\n    pass\n", 1, 9, "k", "expected ')'");
  CompileError e = parse_error("def k(a=1):\n    pass\n");
  EXPECT_NE(e.hint().find("inferred"), std::string::npos) << e.hint();
  // Annotations are parsed; name resolution accepts only tack.template() (test_device_classes).
  ast::Module m = parse("def k(a: int, b: tack.template()):\n    pass\n");
  EXPECT_EQ(show(*m.functions[0]->params[0].annotation), "int");
  EXPECT_EQ(show(*m.functions[0]->params[1].annotation), "tack.template()");
}

TEST(ParserErrors, UnsupportedStatements) {
  expect_body_error("global x", 1, "'global'");
  expect_body_error("nonlocal x", 1, "'nonlocal'");
  expect_body_error("del x", 1, "'del'");
  expect_body_error("assert a > 0", 1, "'assert'");
  expect_body_error("with f() as g:", 1, "'with'");
  expect_body_error("try:", 1, "try/except");
  expect_body_error("raise ValueError()", 1, "'raise'");
  expect_body_error("yield x", 1, "'yield'");
  expect_body_error("x = yield", 5, "'yield'");
  expect_body_error("import math", 1, "import statements inside a function");
  expect_body_error("from math import sqrt", 1, "import statements inside a function");
  expect_body_error("class C:", 1, "classes cannot be defined inside a function");
  expect_body_error("async for x in y:", 1, "async");
  expect_body_error("x = await y", 5, "'await'");
  expect_body_error("def inner():", 1, "nested functions");
  expect_body_error("@tack.func", 1, "nested functions");
  expect_body_error("else:", 1, "'else' without a matching 'if'");
  expect_body_error("x: int = 1", 2, "variable annotations");
  expect_body_error("if a: for i in b: pass", 7, "cannot follow ':'");
}

TEST(ParserErrors, UnsupportedExpressions) {
  expect_body_error("x = lambda v: v", 5, "lambda");
  expect_body_error("b = a is None", 7, "'is'");
  expect_body_error("b = a in c", 7, "'in'");
  expect_body_error("b = a not in c", 7, "'in'");
  expect_body_error("x = a[1:2]", 8, "slices");
  expect_body_error("x = a[:]", 7, "slices");
  expect_body_error("x = a[i, ::2]", 10, "slices");
  expect_body_error("x = a[]", 7, "empty subscript");
  expect_body_error("x = None", 5, "None");
  expect_body_error("x = [1, 2]", 5, "list literals");
  expect_body_error("x = [v * 2 for v in a]", 5, "list comprehensions");
  expect_body_error("x = {1: 2}", 5, "dict and set literals");
  expect_body_error("x = {v for v in a}", 5, "comprehensions");
  expect_body_error("x = sum(v for v in a)", 11, "generator expressions");
  expect_body_error("x = (v for v in a)", 8, "generator expressions");
  expect_body_error("if (n := f()) > 0: pass", 7, "walrus");
  expect_body_error("x := 1", 3, "walrus");
  expect_body_error("f(a=1, b)", 8, "positional argument cannot follow a keyword argument");
  expect_body_error("f(a=1, a=2)", 8, "keyword argument 'a' is repeated");
  expect_body_error("f(*args)", 3, "unpacking");
  expect_body_error("f(**kw)", 3, "unpacking");
  expect_body_error("x = *a", 5, "starred");
  expect_body_error("print(f\"x={x}\")", 7, "f-strings");
  expect_body_error("print(b'x')", 7, "bytes literals");
  expect_body_error("x = a if b", 11, "expected 'else'");
  expect_body_error("x = ...", 5, "Ellipsis");
  expect_body_error("x = a +", 8, "expected an expression, found the end of the line");
  expect_body_error("x = 1 2", 7, "expected the end of the statement");
  expect_body_error("x = if", 5, "keyword 'if'");
  expect_body_error("x = caf\xC3\xA9", 5, "non-ASCII");
  CompileError e = parse_error("def k(a) -> None:\n    pass\n");
  EXPECT_EQ(e.col(), 13);
  EXPECT_NE(e.hint().find("-> None"), std::string::npos) << e.hint();
}

TEST(ParserErrors, BadTargets) {
  expect_body_error("f() = 1", 1, "cannot assign to a function call");
  expect_body_error("1 = x", 1, "cannot assign to a literal");
  expect_body_error("a + b = c", 1, "cannot assign to an expression");
  expect_body_error("(a, b), c = x", 1, "nested tuple targets");
  expect_body_error("a, b += 1", 6, "cannot update a tuple");
  expect_body_error("f() += 1", 1, "cannot assign to a function call");
  expect_body_error("for a[i] in r: pass", 5, "loop variable must be a name");
  expect_body_error("for (a, b), c in r: pass", 5, "loop variable must be a name");
  expect_body_error("for i range(3): pass", 7, "expected 'in'");
}

TEST(ParserErrors, LoopElseClauses) {
  expect_error("def k(a):\n    for i in r:\n        pass\n    else:\n        pass\n", 4, 5, "k",
               "'else' after a 'for' loop");
  expect_error("def k(a):\n    while a:\n        pass\n    else:\n        pass\n", 4, 5, "k",
               "'else' after a 'while' loop");
}

TEST(ParserErrors, BlockStructure) {
  expect_error("def k(a):\n    if a\n        pass\n", 2, 9, "k", "expected ':'");
  expect_error("def k(a):\n    if a:\n    pass\n", 3, 5, "k", "expected an indented block");
  expect_error("def k(a):\npass\n", 2, 1, "k", "expected an indented block after function 'k'");
  expect_error("def k(a):\n    x = 1\n        y = 2\n", 3, 9, "k", "unexpected indentation");
  expect_error("  x = 1\n", 1, 3, "<module>", "unexpected indentation");
  expect_error("def k(a):\n    x = f(1,\n", 2, 10, "k", "'(' was never closed");
  expect_error("def k(a):\n    if a:\n            x = 1\n        y = 2\n", 4, 9, "k",
               "indentation does not match");
}

TEST(ParserErrors, ModuleLevel) {
  expect_error("print(1)\n", 1, 1, "<module>", "not supported at module level");
  expect_error("for i in range(3):\n    pass\n", 1, 1, "<module>", "'for' statements");
  expect_error("if DEBUG:\n    pass\n", 1, 1, "<module>", "'if' statements");
  expect_error("x: int = 1\n", 1, 2, "<module>", "annotated");
  expect_error("a = b = 1\n", 1, 7, "<module>", "chained assignments");
  expect_error("a, b = 1, 2\n", 1, 1, "<module>", "not supported at module level");
  expect_error("X += 1\n", 1, 1, "<module>", "not supported at module level");
  expect_error("X = [1, 2]\n", 1, 5, "<module>", "list literals");
  expect_error("X = 1 2\n", 1, 7, "<module>", "expected the end of the line");
  expect_error("from . import k\n", 1, 6, "<module>", "relative imports");
  expect_error("from tack import *\n", 1, 18, "<module>", "wildcard");
  expect_error("from tack kernel\n", 1, 11, "<module>", "expected 'import'");
  expect_error("import\n", 1, 7, "<module>", "expected a module name");
  expect_error("@tack.kernel\nX = 1\n", 2, 1, "<module>", "expected 'def' after the decorator");
  expect_error("@tack.kernels[0]\ndef k():\n    pass\n", 1, 2, "<module>", "decorator must be");
  expect_error("@tack.kernel x\ndef k():\n    pass\n", 1, 14, "<module>", "after the decorator");
  expect_error("def (a):\n    pass\n", 1, 5, "<module>", "expected a function name");
  expect_error("def if(a):\n    pass\n", 1, 5, "<module>", "reserved word");
  expect_error("if __name__ == '__main__':\nx = 1\n", 2, 1, "<module>",
               "expected an indented block");
}

TEST(ParserErrors, PathologicalNesting) {
  std::string deep_parens = "X = " + std::string(300, '(') + "1" + std::string(300, ')') + "\n";
  expect_error(deep_parens, 1, 205, "<module>", "too many nested brackets");
  std::string unary = "def k():\n    x = ";
  for (int i = 0; i < 2000; ++i) unary += "- ";
  CompileError e = parse_error(unary + "1\n");
  EXPECT_EQ(e.kernel(), "k");
  EXPECT_EQ(e.line(), 2);
  EXPECT_NE(e.message().find("nested too deeply"), std::string::npos) << e.message();
  std::string nots = "def k():\n    x = ";
  for (int i = 0; i < 2000; ++i) nots += "not ";
  EXPECT_NE(parse_error(nots + "a\n").message().find("nested too deeply"), std::string::npos);
  std::string blocks;
  for (int i = 0; i < 120; ++i) blocks += std::string(i, ' ') + "if a:\n";
  EXPECT_NE(parse_error(blocks + std::string(120, ' ') + "pass\n")
                .message()
                .find("too many levels of indentation"),
            std::string::npos);
  // Reasonable nesting is fine.
  std::string fine = "X = " + std::string(60, '(') + "-1" + std::string(60, ')') + "\n";
  EXPECT_EQ(parse(fine).globals.size(), 1u);
}

// Chains the parser builds in a loop (operators, calls, subscripts, attributes, comparisons, call
// arguments) make trees as deep as they are long; every later stage walks them recursively.
TEST(ParserErrors, ChainsDeeperThanTheLimit) {
  auto chain = [](const std::string& first, const std::string& link, int n) {
    std::string text = "def k():\n    x = " + first;
    for (int i = 0; i < n; ++i) text += link;
    return text + "\n";
  };
  for (int n : {1001, 30000, 100000}) {
    CompileError e = parse_error(chain("a", " + a", n));
    EXPECT_EQ(e.kernel(), "k");
    EXPECT_EQ(e.line(), 2);
    // At the operator that makes the chain too deep: the 1000th '+', after "    x = a".
    EXPECT_EQ(e.col(), 10 + 4 * 999 + 1) << n;
    EXPECT_NE(e.message().find("more than 1000 levels"), std::string::npos) << e.message();
    EXPECT_NE(e.hint().find("intermediate variables"), std::string::npos);
    // A long line is shown around the column, not whole.
    EXPECT_LT(std::string(e.what()).size(), 1000u);
  }
  for (const auto& [first, link] :
       std::vector<std::pair<std::string, std::string>>{{"a", ".b"},
                                                        {"a", "()"},
                                                        {"a", "[0]"},
                                                        {"a", " < a"},
                                                        {"a", " and a"},
                                                        {"a", " or a"},
                                                        {"a", " * a"},
                                                        {"a", " | a"},
                                                        {"max(a", ", a"}}) {
    std::string text = chain(first, link, 5000);
    if (first == "max(a") text.replace(text.size() - 1, 1, ")\n");
    CompileError e = parse_error(text);
    EXPECT_NE(e.message().find("more than 1000 levels"), std::string::npos) << link << e.message();
  }
  // Up to the limit the tree is built, with its height.
  ast::Module m = parse(chain("a", " + a", 998));
  EXPECT_EQ(m.functions[0]->body[0]->value->height, 999);
  std::string call = chain("max(a", ", a", 9);
  call.replace(call.size() - 1, 1, ")\n");
  EXPECT_EQ(parse(call).functions[0]->body[0]->value->height, 11);  // 10 arguments, then `max`
}

TEST(ParserErrors, KernelNameIsTheEnclosingFunction) {
  const char* text =
      "def first(a):\n"
      "    pass\n"
      "\n"
      "@tack.kernel\n"
      "def second(a):\n"
      "    for i in range(3):\n"
      "        x = a[i:]\n"
      "X = [1]\n";
  CompileError e = parse_error(text);
  EXPECT_EQ(e.kernel(), "second");
  EXPECT_EQ(e.line(), 7);
  EXPECT_EQ(e.col(), 16);
  e = parse_error("def first(a):\n    pass\nX = [1]\n");
  EXPECT_EQ(e.kernel(), "<module>");
  EXPECT_EQ(e.line(), 3);
}

}  // namespace
}  // namespace tack::lang
