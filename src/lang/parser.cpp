#include "lang/parser.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <string_view>

#include "lang/diagnostics.hpp"
#include "lang/lexer.hpp"

namespace tack::lang {
namespace {

using ast::Block;
using ast::Expr;
using ast::ExprPtr;
using ast::Stmt;
using ast::StmtPtr;

constexpr const char* kModule = "<module>";

// Binary operators by level, from loosest (0) to tightest; each level is left-associative.
struct BinarySpelling {
  std::string_view spelling;
  ast::BinOp op;
  int level;
};
constexpr BinarySpelling kBinaryOps[] = {
    {"|", ast::BinOp::BitOr, 0},     {"^", ast::BinOp::BitXor, 1}, {"&", ast::BinOp::BitAnd, 2},
    {"<<", ast::BinOp::Shl, 3},      {">>", ast::BinOp::Shr, 3},   {"+", ast::BinOp::Add, 4},
    {"-", ast::BinOp::Sub, 4},       {"*", ast::BinOp::Mul, 5},    {"/", ast::BinOp::Div, 5},
    {"//", ast::BinOp::FloorDiv, 5}, {"%", ast::BinOp::Mod, 5},    {"@", ast::BinOp::MatMul, 5},
};
constexpr int kNumBinaryLevels = 6;

const std::pair<std::string_view, ast::BinOp> kAugmentedOps[] = {
    {"+=", ast::BinOp::Add},    {"-=", ast::BinOp::Sub},       {"*=", ast::BinOp::Mul},
    {"/=", ast::BinOp::Div},    {"//=", ast::BinOp::FloorDiv}, {"%=", ast::BinOp::Mod},
    {"**=", ast::BinOp::Pow},   {"@=", ast::BinOp::MatMul},    {"<<=", ast::BinOp::Shl},
    {">>=", ast::BinOp::Shr},   {"&=", ast::BinOp::BitAnd},    {"|=", ast::BinOp::BitOr},
    {"^=", ast::BinOp::BitXor},
};

const std::pair<std::string_view, ast::CmpOp> kCompareOps[] = {
    {"<", ast::CmpOp::Lt},  {"<=", ast::CmpOp::Le}, {">", ast::CmpOp::Gt},
    {">=", ast::CmpOp::Ge}, {"==", ast::CmpOp::Eq}, {"!=", ast::CmpOp::Ne},
};

// Python statements a kernel cannot hold, keyed by their leading keyword.
struct Rejected {
  std::string_view keyword;
  const char* message;
  const char* hint;
};
const Rejected kRejectedStatements[] = {
    {"global", "'global' statements are not supported in kernels",
     "kernels cannot rebind module variables; read a module-level tack.constant, or store into an "
     "array argument"},
    {"nonlocal", "'nonlocal' statements are not supported in kernels",
     "use a local variable, or pass values as arguments and return them"},
    {"del", "'del' is not supported in kernels",
     "locals live until the function returns; "
     "simply stop using the name"},
    {"assert", "'assert' is not supported in kernels",
     "check the condition on the host before the launch, or handle it with an if statement"},
    {"with", "'with' statements are not supported in kernels", "write the body without 'with'"},
    {"try", "exception handling (try/except) is not supported in kernels",
     "kernels cannot raise; test for bad values with an if statement"},
    {"except", "exception handling (try/except) is not supported in kernels",
     "kernels cannot raise; test for bad values with an if statement"},
    {"finally", "exception handling (try/finally) is not supported in kernels",
     "kernels cannot raise; write the cleanup code after the loop"},
    {"raise", "'raise' is not supported in kernels",
     "kernels cannot raise exceptions; validate inputs on the host, or skip work with an if"},
    {"yield", "generators ('yield') are not supported in kernels",
     "store each result into an output array argument"},
    {"lambda", "lambda expressions are not supported in kernels",
     "define a module-level function decorated with @tack.func and call it"},
    {"import", "import statements inside a function are not supported",
     "move the import to the top of the file"},
    {"from", "import statements inside a function are not supported",
     "move the import to the top of the file"},
    {"class", "classes cannot be defined inside a function",
     "define the class at module level, decorated with @tack.data_oriented, and pass its objects "
     "to the kernel"},
    {"async", "async functions and statements are not supported",
     "write kernels as plain 'def' functions"},
    {"await", "'await' is not supported in kernels", "write kernels as plain 'def' functions"},
    {"def", "nested functions are not supported",
     "define the function at module level and decorate it with @tack.func"},
};

const Rejected* find_rejected(const Token& t) {
  if (t.kind != TokenKind::Keyword) return nullptr;
  for (const Rejected& r : kRejectedStatements)
    if (r.keyword == t.text) return &r;
  return nullptr;
}

bool is_dotted_name(const Expr& e) {
  if (e.kind == Expr::Kind::Name) return true;
  return e.kind == Expr::Kind::Attribute && is_dotted_name(*e.operand);
}

class Parser {
 public:
  explicit Parser(std::shared_ptr<const SourceFile> file)
      : file_(std::move(file)), toks_(tokenize(*file_)) {}

  ast::Module parse();

 private:
  // ---- tokens
  const Token& peek(size_t k = 0) const { return toks_[std::min(pos_ + k, toks_.size() - 1)]; }
  const Token& next() { return pos_ + 1 < toks_.size() ? toks_[pos_++] : toks_.back(); }
  bool at_op(std::string_view op) const { return peek().is_op(op); }
  // The binary operator the current token spells, or null. Each of the six levels asks after
  // every operand, so the answer is kept for the token it was found for.
  const BinarySpelling* binary_here() {
    if (binary_pos_ != pos_) {
      binary_pos_ = pos_;
      binary_here_ = nullptr;
      if (const Token& t = peek(); t.kind == TokenKind::Op)
        for (const BinarySpelling& b : kBinaryOps)
          if (t.text == b.spelling) binary_here_ = &b;
    }
    return binary_here_;
  }
  bool at_keyword(std::string_view kw) const { return peek().is_keyword(kw); }
  bool at_kind(TokenKind kind) const { return peek().kind == kind; }
  bool accept_op(std::string_view op) {
    if (!at_op(op)) return false;
    next();
    return true;
  }
  const Token& expect_op(std::string_view op, std::string_view context, std::string_view hint);
  std::string expect_name(std::string_view what);
  [[noreturn]] void fail(SourceLoc where, const std::string& message, const std::string& hint) {
    throw_compile_error(*file_, kernel_, where, message, hint);
  }

  // ---- module level
  void parse_module_item(ast::Module& module);
  void parse_import(ast::Module& module);
  void parse_from_import(ast::Module& module);
  std::string parse_dotted_module();
  std::unique_ptr<ast::FunctionDef> parse_def(std::vector<ast::Decorator> decorators);
  std::vector<ast::Decorator> parse_decorators();
  std::unique_ptr<ast::ClassDef> parse_class(std::vector<ast::Decorator> decorators);
  void parse_class_body(ast::ClassDef& cls);
  std::unique_ptr<ast::FunctionDef> parse_method(std::vector<ast::Decorator> decorators);
  // Runs `parse`; when it fails, goes back to token `start`, skips the block header that starts
  // there and its indented body, and returns the error.
  template <typename F>
  std::exception_ptr try_parse(size_t start, F&& parse);
  void skip_header_and_clause();
  bool at_main_guard() const;
  void skip_main_guard();
  void skip_clause();
  void skip_indented_block();
  void end_module_statement(std::string_view what);

  // ---- statements
  Block parse_suite(std::string_view owner, SourceLoc owner_loc);
  void parse_statement(Block& out);
  void parse_simple_statements(Block& out);
  StmtPtr parse_small_statement();
  StmtPtr parse_if();
  StmtPtr parse_for();
  StmtPtr parse_while();
  void check_target(const Expr& target, bool allow_tuple);

  // ---- expressions
  ExprPtr parse_testlist();
  ExprPtr parse_test();
  ExprPtr parse_or();
  ExprPtr parse_and();
  ExprPtr parse_not();
  ExprPtr parse_comparison();
  ExprPtr parse_binary(int level);
  ExprPtr parse_factor();
  ExprPtr parse_power();
  ExprPtr parse_primary();
  ExprPtr parse_atom();
  void parse_call_arguments(Expr& call);
  void parse_subscript_indices(Expr& subscript);
  [[noreturn]] void reject_collection(const Token& open);

  ExprPtr make(Expr::Kind kind, SourceLoc loc) { return std::make_unique<Expr>(kind, loc); }
  // Sets the height of a node whose children are attached, refusing (at `where`, the operator or
  // the start of the node) a tree deeper than ast::kMaxExprHeight.
  ExprPtr measured(ExprPtr e, SourceLoc where);
  ExprPtr measured(ExprPtr e) {
    SourceLoc where = e->loc;
    return measured(std::move(e), where);
  }

  std::shared_ptr<const SourceFile> file_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  size_t binary_pos_ = std::numeric_limits<size_t>::max();  // the token binary_here_ is for
  const BinarySpelling* binary_here_ = nullptr;
  std::string kernel_ = kModule;
  bool in_return_annotation_ = false;
  int nesting_ = 0;

  // Bounds the recursion of the expression parser (unary chains such as `- - - x` are not limited
  // by the lexer's bracket depth). The count is not restored when parsing fails; nothing resumes.
  class Nesting {
   public:
    explicit Nesting(Parser& parser) : parser_(parser) {
      if (++parser_.nesting_ > kMaxNesting)
        parser_.fail(parser_.peek().loc, "the expression is nested too deeply",
                     "split it into several statements with intermediate variables");
    }
    ~Nesting() { --parser_.nesting_; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;

   private:
    static constexpr int kMaxNesting = 500;
    Parser& parser_;
  };
};

ExprPtr Parser::measured(ExprPtr e, SourceLoc where) {
  int below = 0;
  if (e->operand) below = e->operand->height;
  for (const ExprPtr& a : e->args) below = std::max(below, a->height);
  for (const ast::Keyword& k : e->keywords) below = std::max(below, k.value->height);
  // min(a, b, c) and a < b < c become operations nested once per argument or operand.
  int levels = 1;
  if (e->kind == Expr::Kind::Call) levels = std::max<int>(1, static_cast<int>(e->args.size()));
  if (e->kind == Expr::Kind::Compare) levels = static_cast<int>(e->cmp_ops.size());
  e->height = below + levels;
  if (e->height > ast::kMaxExprHeight)
    fail(where,
         fmt::format("the expression is too deep: more than {} levels of operators, calls and "
                     "subscripts inside each other (each operator of a chain such as "
                     "a + b + c is a level, and each argument of a call)",
                     ast::kMaxExprHeight),
         "split it into several statements with intermediate variables, e.g. add the terms of a "
         "long sum to a variable a few at a time");
  return e;
}

// ============================================================================ tokens

const Token& Parser::expect_op(std::string_view op, std::string_view context,
                               std::string_view hint) {
  if (!at_op(op))
    fail(peek().loc, fmt::format("expected '{}' {}, found {}", op, context, describe(peek())),
         std::string(hint));
  return next();
}

std::string Parser::expect_name(std::string_view what) {
  const Token& t = peek();
  if (t.kind == TokenKind::Keyword)
    fail(t.loc, fmt::format("'{}' is a reserved word and cannot be used as {}", t.text, what),
         "choose another name");
  if (t.kind != TokenKind::Name)
    fail(t.loc, fmt::format("expected {}, found {}", what, describe(t)),
         "write a name made of letters, digits and underscores");
  for (char c : t.text)
    if (static_cast<unsigned char>(c) >= 0x80)
      fail(t.loc, fmt::format("the name '{}' contains non-ASCII characters", t.text),
           "kernel names must be ASCII letters, digits and underscores, so that every backend "
           "can use them");
  return next().text;
}

// ============================================================================ module level

ast::Module Parser::parse() {
  ast::Module module;
  module.source = file_;
  while (!at_kind(TokenKind::EndOfFile)) parse_module_item(module);
  return module;
}

void Parser::parse_module_item(ast::Module& module) {
  kernel_ = kModule;
  const Token& t = peek();
  if (t.kind == TokenKind::Newline) {
    next();
    return;
  }
  if (t.kind == TokenKind::Indent)
    fail(t.loc, "unexpected indentation", "module-level statements start at column 1");
  if (t.is_op("@") || t.is_keyword("def") || t.is_keyword("class")) {
    std::vector<ast::Decorator> decorators = parse_decorators();
    if (at_keyword("class")) {
      module.classes.push_back(parse_class(std::move(decorators)));
      return;
    }
    if (!at_keyword("def"))
      fail(peek().loc,
           fmt::format("expected 'def' after the decorator, found {}", describe(peek())),
           "a decorator must be followed by the function it decorates");
    module.functions.push_back(parse_def(std::move(decorators)));
    return;
  }
  if (t.is_keyword("import")) return parse_import(module);
  if (t.is_keyword("from")) return parse_from_import(module);
  if (at_main_guard()) return skip_main_guard();
  if (t.kind == TokenKind::String) {
    ExprPtr value = parse_testlist();
    if (value->kind != Expr::Kind::StringLit)
      fail(value->loc, "module-level expression statements are not supported",
           "move this code into a function, or under `if __name__ == \"__main__\":`, which the "
           "compiler skips");
    end_module_statement("the string");
    return;
  }
  if (t.kind == TokenKind::Name && peek(1).is_op("=")) {
    ast::GlobalAssign global;
    global.loc = t.loc;
    global.name = expect_name("a name");
    next();  // '='
    global.value = parse_testlist();
    if (at_op("="))
      fail(peek().loc, "chained assignments are not supported at module level",
           "define each module-level name on its own line");
    end_module_statement("the definition");
    module.globals.push_back(std::move(global));
    return;
  }
  if (t.kind == TokenKind::Name && peek(1).is_op(":"))
    fail(peek(1).loc, "annotated module-level variables are not supported",
         fmt::format("write `{} = tack.constant(value, dtype)` to give a constant its type",
                     t.text));
  std::string what = t.kind == TokenKind::Keyword ? fmt::format("'{}' statements are", t.text)
                                                  : std::string("this statement is");
  if (t.is_keyword("if"))
    what = "'if' statements (other than `if __name__ == \"__main__\":`, which is skipped) are";
  fail(t.loc, fmt::format("{} not supported at module level", what),
       "a kernels file holds imports, `NAME = tack.constant(...)` definitions, functions and "
       "classes; move other code into a function, or under `if __name__ == \"__main__\":`, which "
       "the compiler skips");
}

void Parser::end_module_statement(std::string_view what) {
  if (at_kind(TokenKind::Newline)) {
    next();
    return;
  }
  if (at_kind(TokenKind::EndOfFile)) return;
  fail(peek().loc,
       fmt::format("expected the end of the line after {}, found {}", what, describe(peek())),
       "put each module-level statement on its own line");
}

std::string Parser::parse_dotted_module() {
  if (at_op(".") || at_op("..."))
    fail(peek().loc, "relative imports are not supported",
         "import by the absolute module name, e.g. `from mypackage.kernels import f`");
  std::string name = expect_name("a module name");
  while (accept_op(".")) {
    name += '.';
    name += expect_name("a module name after '.'");
  }
  return name;
}

void Parser::parse_import(ast::Module& module) {
  next();  // 'import'
  do {
    ast::Import import;
    import.loc = peek().loc;
    import.module = parse_dotted_module();
    if (at_keyword("as")) {
      next();
      import.alias = expect_name("a name after 'as'");
    } else {
      // `import a.b` binds `a`, the top-level package, as Python does.
      import.module = import.module.substr(0, import.module.find('.'));
      import.alias = import.module;
    }
    module.imports.push_back(std::move(import));
  } while (accept_op(","));
  end_module_statement("the import");
}

void Parser::parse_from_import(ast::Module& module) {
  ast::Import import;
  import.loc = next().loc;  // 'from'
  import.is_from = true;
  import.module = parse_dotted_module();
  if (!at_keyword("import"))
    fail(peek().loc,
         fmt::format("expected 'import' after the module name, found {}", describe(peek())),
         fmt::format("write `from {} import name`", import.module));
  next();
  if (at_op("*"))
    fail(peek().loc, "wildcard imports ('import *') are not supported",
         "import the names you use explicitly: `from module import a, b`");
  bool parenthesized = accept_op("(");
  do {
    if (parenthesized && at_op(")")) break;  // a trailing comma
    std::string name = expect_name("a name to import");
    std::string alias = name;
    if (at_keyword("as")) {
      next();
      alias = expect_name("a name after 'as'");
    }
    import.names.emplace_back(std::move(name), std::move(alias));
  } while (accept_op(","));
  if (parenthesized)
    expect_op(")", "to close the list of imported names", "add ')' after the last name");
  module.imports.push_back(std::move(import));
  end_module_statement("the import");
}

bool Parser::at_main_guard() const {
  auto is_main = [](const Token& t) { return t.kind == TokenKind::String && t.text == "__main__"; };
  auto is_name = [](const Token& t) { return t.kind == TokenKind::Name && t.text == "__name__"; };
  return at_keyword("if") && peek(2).is_op("==") && peek(4).is_op(":") &&
         ((is_name(peek(1)) && is_main(peek(3))) || (is_main(peek(1)) && is_name(peek(3))));
}

void Parser::skip_main_guard() {
  for (int i = 0; i < 4; ++i) next();  // if __name__ == "__main__"
  skip_clause();
  while (at_keyword("elif") || at_keyword("else")) {
    int depth = 0;  // brackets are balanced by the lexer; only look for the header's own ':'
    while (!at_kind(TokenKind::EndOfFile) && !(depth == 0 && at_op(":"))) {
      const Token& t = next();
      if (t.is_op("(") || t.is_op("[") || t.is_op("{")) ++depth;
      if (t.is_op(")") || t.is_op("]") || t.is_op("}")) --depth;
    }
    skip_clause();
  }
}

// Skips a ':' and the block after it without looking at what the block holds.
void Parser::skip_clause() {
  SourceLoc colon = expect_op(":", "to end the block header", "end the line with ':'").loc;
  if (!at_kind(TokenKind::Newline)) {  // a body on the same line
    while (!at_kind(TokenKind::Newline) && !at_kind(TokenKind::EndOfFile)) next();
    if (at_kind(TokenKind::Newline)) next();
    return;
  }
  next();
  if (!at_kind(TokenKind::Indent))
    fail(peek().loc, fmt::format("expected an indented block after the ':' on line {}", colon.line),
         "indent the body of the block");
  skip_indented_block();
}

// From an Indent token: the block up to its Dedent.
void Parser::skip_indented_block() {
  next();
  for (int depth = 0; !at_kind(TokenKind::EndOfFile);) {
    const Token& t = next();
    if (t.kind == TokenKind::Indent) ++depth;
    if (t.kind == TokenKind::Dedent && depth-- == 0) break;
  }
}

std::vector<ast::Decorator> Parser::parse_decorators() {
  std::vector<ast::Decorator> decorators;
  while (at_op("@")) {
    ast::Decorator decorator;
    decorator.loc = next().loc;
    decorator.expr = parse_test();
    const Expr& e = *decorator.expr;
    if (!is_dotted_name(e) && !(e.kind == Expr::Kind::Call && is_dotted_name(*e.operand)))
      fail(e.loc, "a decorator must be a dotted name or a call of one",
           "write @tack.kernel, @tack.func or a call such as @tack.kernel(...)");
    decorators.push_back(std::move(decorator));
    if (!at_kind(TokenKind::Newline))
      fail(peek().loc,
           fmt::format("expected the end of the line after the decorator, found {}",
                       describe(peek())),
           "put the decorator on its own line, above the 'def'");
    next();
  }
  return decorators;
}

template <typename F>
std::exception_ptr Parser::try_parse(size_t start, F&& parse) {
  try {
    parse();
    return nullptr;
  } catch (const CompileError&) {
    std::exception_ptr error = std::current_exception();
    pos_ = start;
    nesting_ = 0;
    in_return_annotation_ = false;
    skip_header_and_clause();
    return error;
  }
}

// From a `def` or `class` keyword: its header up to the ':' that ends it, and the block after. A
// header that is missing its ':' (the error being recovered from) ends with its line: the lines
// below it that are indented under it go with it, and the next definition is not taken for its
// body.
void Parser::skip_header_and_clause() {
  int depth = 0;  // brackets are balanced by the lexer; only the header's own ':' ends it
  next();
  while (!at_kind(TokenKind::EndOfFile) && !at_kind(TokenKind::Newline) &&
         !(depth == 0 && at_op(":"))) {
    const Token& t = next();
    if (t.is_op("(") || t.is_op("[") || t.is_op("{")) ++depth;
    if (t.is_op(")") || t.is_op("]") || t.is_op("}")) --depth;
  }
  if (at_op(":")) return skip_clause();
  if (at_kind(TokenKind::Newline)) next();
  if (at_kind(TokenKind::Indent)) skip_indented_block();
}

// A class is parsed as kernel code when it can be: a host class (any Python) is skipped, and its
// error kept for name resolution, which raises it only for a @tack.data_oriented class.
std::unique_ptr<ast::ClassDef> Parser::parse_class(std::vector<ast::Decorator> decorators) {
  auto cls = std::make_unique<ast::ClassDef>();
  cls->decorators = std::move(decorators);
  size_t start = pos_;
  cls->loc = peek().loc;
  next();  // 'class'
  cls->name = expect_name("a class name after 'class'");
  kernel_ = cls->name;
  pos_ = start;
  cls->unparsed = try_parse(start, [&] { parse_class_body(*cls); });
  if (cls->unparsed) {
    cls->bases.clear();
    cls->attributes.clear();
    cls->methods.clear();
  }
  kernel_ = kModule;
  return cls;
}

void Parser::parse_class_body(ast::ClassDef& cls) {
  next();  // 'class'
  next();  // its name
  if (accept_op("(")) {
    while (!at_op(")")) {
      ExprPtr base = parse_test();
      if (!is_dotted_name(*base))
        fail(base->loc, "a base class is a name", "write class Cells(Base):");
      cls.bases.push_back(std::move(base));
      if (!accept_op(",")) break;
    }
    expect_op(")", "to close the list of base classes", "write class Cells(Base):");
  }
  const char* usage =
      "a device class holds class-level constants (NAME = 4), __tack_iterate__ and methods";
  SourceLoc colon = expect_op(":", fmt::format("to end the header of class '{}'", cls.name),
                              "end the line with ':' and indent the body below it")
                        .loc;
  if (!at_kind(TokenKind::Newline))
    fail(peek().loc, "a class's body starts on the line after its header", usage);
  next();
  if (!at_kind(TokenKind::Indent))
    fail(peek().loc, fmt::format("expected an indented block after the ':' on line {}", colon.line),
         "indent the body of the class (write `pass` for an empty one)");
  next();
  while (!at_kind(TokenKind::Dedent) && !at_kind(TokenKind::EndOfFile)) {
    const Token& t = peek();
    if (t.kind == TokenKind::Newline) {
      next();
      continue;
    }
    if (t.is_op("@") || t.is_keyword("def")) {
      std::vector<ast::Decorator> decorators = parse_decorators();
      if (!at_keyword("def"))
        fail(peek().loc,
             fmt::format("expected 'def' after the decorator, found {}", describe(peek())),
             "a decorator in a class must be followed by the method it decorates");
      cls.methods.push_back(parse_method(std::move(decorators)));
      kernel_ = cls.name;
      continue;
    }
    if (t.is_keyword("pass")) {
      next();
      end_module_statement("'pass'");
      continue;
    }
    if (t.kind == TokenKind::String) {
      ExprPtr value = parse_testlist();
      if (value->kind != Expr::Kind::StringLit)
        fail(value->loc, "this statement is not supported in a class", usage);
      end_module_statement("the string");
      continue;
    }
    if (t.kind == TokenKind::Name && peek(1).is_op("=")) {
      ast::ClassDef::Attribute a;
      a.loc = t.loc;
      a.name = expect_name("a name");
      next();  // '='
      a.value = parse_testlist();
      end_module_statement("the class attribute");
      cls.attributes.push_back(std::move(a));
      continue;
    }
    fail(t.loc, "this statement is not supported in a device class", usage);
  }
  next();  // the Dedent
}

// A method is parsed as kernel code when it can be; a host method (__init__, anything in Python)
// is kept with its name, decorators and error, for name resolution to judge.
std::unique_ptr<ast::FunctionDef> Parser::parse_method(std::vector<ast::Decorator> decorators) {
  size_t start = pos_;
  SourceLoc loc = peek().loc;
  std::unique_ptr<ast::FunctionDef> def;
  std::exception_ptr error = try_parse(start, [&] { def = parse_def({}); });
  if (error) {
    def = std::make_unique<ast::FunctionDef>();
    def->loc = loc;
    size_t end = pos_;
    pos_ = start + 1;
    def->name = peek().kind == TokenKind::Name ? peek().text : std::string();
    pos_ = end;
    def->unparsed = error;
  }
  def->decorators = std::move(decorators);
  return def;
}

std::unique_ptr<ast::FunctionDef> Parser::parse_def(std::vector<ast::Decorator> decorators) {
  auto def = std::make_unique<ast::FunctionDef>();
  def->decorators = std::move(decorators);
  def->loc = next().loc;  // 'def'
  def->name = expect_name("a function name after 'def'");
  kernel_ = def->name;
  expect_op("(", "after the function name", fmt::format("write `def {}(a, b):`", def->name));
  const char* inferred = "parameter types are inferred from the arguments at each call";
  while (!at_op(")")) {
    const Token& t = peek();
    if (t.is_op("*") || t.is_op("**"))
      fail(t.loc,
           t.is_op("*") ? "variadic parameters (*args) and keyword-only markers are not supported"
                        : "keyword-variadic parameters (**kwargs) are not supported",
           fmt::format("list every parameter by name; {}", inferred));
    if (t.is_op("/"))
      fail(t.loc, "positional-only markers ('/') are not supported",
           "remove the '/'; every parameter is passed by position");
    ast::Param param;
    param.loc = t.loc;
    param.name = expect_name("a parameter name");
    if (accept_op(":")) param.annotation = parse_test();
    if (at_op("="))
      fail(peek().loc, fmt::format("default parameter values are not supported ('{}')", param.name),
           fmt::format("remove the default and pass the argument at every call; {}", inferred));
    for (const ast::Param& other : def->params)
      if (other.name == param.name)
        fail(param.loc, fmt::format("duplicate parameter '{}'", param.name),
             "give each parameter a distinct name");
    def->params.push_back(std::move(param));
    if (!accept_op(",")) break;
  }
  expect_op(")", "to close the parameter list", "separate parameters with ',' and end with ')'");
  if (accept_op("->")) {
    in_return_annotation_ = true;
    def->returns = parse_test();
    in_return_annotation_ = false;
  }
  def->body = parse_suite(fmt::format("function '{}'", def->name), def->loc);
  return def;
}

// ============================================================================ statements

Block Parser::parse_suite(std::string_view owner, SourceLoc owner_loc) {
  expect_op(":", fmt::format("to end the header of {}", owner),
            "end the line with ':' and put the body on the following, indented lines");
  Block body;
  if (!at_kind(TokenKind::Newline)) {
    parse_simple_statements(body);
    return body;
  }
  next();
  if (!at_kind(TokenKind::Indent))
    fail(peek().loc,
         fmt::format("expected an indented block after {} on line {}", owner, owner_loc.line),
         "indent the body one level deeper than its header (write `pass` for an empty body)");
  next();
  while (!at_kind(TokenKind::Dedent) && !at_kind(TokenKind::EndOfFile)) parse_statement(body);
  next();  // the Dedent
  return body;
}

void Parser::parse_statement(Block& out) {
  const Token& t = peek();
  if (t.kind == TokenKind::Indent)
    fail(t.loc, "unexpected indentation",
         "indent a line only to open the body of an if, for, while or def; align it with the "
         "statement above");
  if (t.is_keyword("if")) return out.push_back(parse_if());
  if (t.is_keyword("for")) return out.push_back(parse_for());
  if (t.is_keyword("while")) return out.push_back(parse_while());
  if (t.is_op("@"))
    fail(t.loc, "decorators and nested functions are not supported inside a function",
         "define the function at module level and decorate it with @tack.func");
  parse_simple_statements(out);
}

void Parser::parse_simple_statements(Block& out) {
  do {
    if (at_kind(TokenKind::Newline) || at_kind(TokenKind::EndOfFile)) break;  // a trailing ';'
    out.push_back(parse_small_statement());
  } while (accept_op(";"));
  if (at_kind(TokenKind::EndOfFile)) return;
  if (!at_kind(TokenKind::Newline)) {
    const Token& t = peek();
    if (t.is_op("="))
      fail(t.loc, "cannot assign here: the left side is not a variable, element or component",
           "assign to a name, an array element a[i] or a vector component v.x");
    fail(t.loc, fmt::format("expected the end of the statement, found {}", describe(t)),
         "put each statement on its own line, or join expressions with an operator");
  }
  next();
}

StmtPtr Parser::parse_small_statement() {
  const Token& t = peek();
  SourceLoc start = t.loc;
  if (t.is_keyword("pass") || t.is_keyword("break") || t.is_keyword("continue")) {
    next();
    Stmt::Kind kind = t.text == "pass"    ? Stmt::Kind::Pass
                      : t.text == "break" ? Stmt::Kind::Break
                                          : Stmt::Kind::Continue;
    return std::make_unique<Stmt>(kind, start);
  }
  if (t.is_keyword("return")) {
    next();
    auto stmt = std::make_unique<Stmt>(Stmt::Kind::Return, start);
    if (!at_kind(TokenKind::Newline) && !at_kind(TokenKind::EndOfFile) && !at_op(";"))
      stmt->value = parse_testlist();
    return stmt;
  }
  if (const Rejected* r = find_rejected(t)) fail(t.loc, r->message, r->hint);
  if (t.is_keyword("if") || t.is_keyword("for") || t.is_keyword("while"))
    fail(t.loc, fmt::format("'{}' cannot follow ':' or ';' on the same line", t.text),
         fmt::format("start the '{}' statement on its own, indented line", t.text));
  if (t.is_keyword("else") || t.is_keyword("elif"))
    fail(t.loc, fmt::format("'{}' without a matching 'if'", t.text),
         fmt::format("align '{}' with its 'if' (or 'elif') and end the previous block first",
                     t.text));

  ExprPtr first = parse_testlist();
  if (at_op("=")) {
    std::vector<ExprPtr> items;
    items.push_back(std::move(first));
    while (accept_op("=")) items.push_back(parse_testlist());
    auto stmt = std::make_unique<Stmt>(Stmt::Kind::Assign, start);
    stmt->value = std::move(items.back());
    items.pop_back();
    for (ExprPtr& target : items) {
      check_target(*target, /*allow_tuple=*/true);
      stmt->targets.push_back(std::move(target));
    }
    return stmt;
  }
  for (const auto& [spelling, op] : kAugmentedOps) {
    if (!at_op(spelling)) continue;
    if (first->kind == Expr::Kind::Tuple)
      fail(peek().loc, fmt::format("'{}' cannot update a tuple of targets", spelling),
           "update each variable with its own statement");
    check_target(*first, /*allow_tuple=*/false);
    next();
    auto stmt = std::make_unique<Stmt>(Stmt::Kind::AugAssign, start);
    stmt->aug_op = op;
    stmt->targets.push_back(std::move(first));
    stmt->value = parse_testlist();
    return stmt;
  }
  if (at_op(":"))
    fail(peek().loc, "variable annotations are not supported",
         "drop the annotation; a local takes the type of its first value (write tack.f32(0.0) to "
         "choose one)");
  auto stmt = std::make_unique<Stmt>(Stmt::Kind::Expr, start);
  stmt->value = std::move(first);
  return stmt;
}

void Parser::check_target(const Expr& target, bool allow_tuple) {
  switch (target.kind) {
    case Expr::Kind::Name:
    case Expr::Kind::Subscript:
    case Expr::Kind::Attribute:
      return;
    case Expr::Kind::Tuple:
      if (!allow_tuple)
        fail(target.loc, "nested tuple targets are not supported",
             "unpack in two steps: `a, bc = ...` then `b, c = bc`");
      if (target.args.empty())
        fail(target.loc, "cannot assign to an empty tuple", "name at least one target");
      for (const ExprPtr& item : target.args) check_target(*item, false);
      return;
    case Expr::Kind::Call:
      fail(target.loc, "cannot assign to a function call",
           "assign to a name, an array element a[i] or a vector component v.x");
    case Expr::Kind::IntLit:
    case Expr::Kind::FloatLit:
    case Expr::Kind::BoolLit:
    case Expr::Kind::StringLit:
      fail(target.loc, "cannot assign to a literal",
           "put the variable on the left of '=' and the value on the right");
    default:
      fail(target.loc, "cannot assign to an expression",
           "assign to a name, an array element a[i] or a vector component v.x");
  }
}

StmtPtr Parser::parse_if() {
  SourceLoc loc = next().loc;  // 'if' or 'elif'
  auto stmt = std::make_unique<Stmt>(Stmt::Kind::If, loc);
  stmt->cond = parse_test();
  stmt->body = parse_suite("the 'if' statement", loc);
  if (at_keyword("elif")) {
    stmt->orelse.push_back(parse_if());
  } else if (at_keyword("else")) {
    SourceLoc else_loc = next().loc;
    stmt->orelse = parse_suite("'else'", else_loc);
  }
  return stmt;
}

StmtPtr Parser::parse_for() {
  SourceLoc loc = next().loc;  // 'for'
  auto stmt = std::make_unique<Stmt>(Stmt::Kind::For, loc);
  // Targets stop below comparisons so that the `in` of the loop is not read as an operator.
  SourceLoc target_loc = peek().loc;
  std::vector<ExprPtr> names;
  bool comma = false;
  while (true) {
    names.push_back(parse_binary(0));
    if (!accept_op(",")) break;
    comma = true;
    if (at_keyword("in")) break;
  }
  ExprPtr target;
  if (comma) {
    target = make(Expr::Kind::Tuple, target_loc);
    target->args = std::move(names);
    target = measured(std::move(target));
  } else {
    target = std::move(names[0]);
  }
  auto check_name = [&](const Expr& e) {
    if (e.kind != Expr::Kind::Name)
      fail(e.loc, "a for loop variable must be a name or a tuple of names",
           "write `for i in range(n):` or `for i, j in tack.ndrange(h, w):`");
  };
  if (target->kind == Expr::Kind::Tuple) {
    if (target->args.empty())
      fail(target_loc, "expected a loop variable after 'for'", "write `for i in range(n):`");
    for (const ExprPtr& item : target->args) check_name(*item);
  } else {
    check_name(*target);
  }
  stmt->targets.push_back(std::move(target));
  if (!at_keyword("in"))
    fail(peek().loc,
         fmt::format("expected 'in' after the loop variable, found {}", describe(peek())),
         "write `for i in range(n):`");
  next();
  stmt->iter = parse_testlist();
  stmt->body = parse_suite("the 'for' loop", loc);
  if (at_keyword("else"))
    fail(peek().loc, "'else' after a 'for' loop is not supported",
         "set a flag before 'break' and test it after the loop");
  return stmt;
}

StmtPtr Parser::parse_while() {
  SourceLoc loc = next().loc;  // 'while'
  auto stmt = std::make_unique<Stmt>(Stmt::Kind::While, loc);
  stmt->cond = parse_test();
  stmt->body = parse_suite("the 'while' loop", loc);
  if (at_keyword("else"))
    fail(peek().loc, "'else' after a 'while' loop is not supported",
         "set a flag before 'break' and test it after the loop");
  return stmt;
}

// ============================================================================ expressions

// A comma-separated list: one expression, or a Tuple when there is a comma.
ExprPtr Parser::parse_testlist() {
  SourceLoc start = peek().loc;
  ExprPtr first = parse_test();
  if (!at_op(",")) return first;
  auto tuple = make(Expr::Kind::Tuple, start);
  tuple->args.push_back(std::move(first));
  while (accept_op(",")) {
    const Token& t = peek();
    if (t.kind == TokenKind::Newline || t.kind == TokenKind::EndOfFile || t.is_op("=") ||
        t.is_op(";") || t.is_op(")") || t.is_op(":"))
      break;
    tuple->args.push_back(parse_test());
  }
  return measured(std::move(tuple));
}

ExprPtr Parser::parse_test() {
  Nesting nesting(*this);
  SourceLoc start = peek().loc;
  ExprPtr body = parse_or();
  if (at_op(":="))
    fail(peek().loc, "the assignment expression ':=' (walrus) is not supported",
         "assign the value with '=' in a statement of its own before using it");
  if (!at_keyword("if")) return body;
  next();
  ExprPtr cond = parse_or();
  if (!at_keyword("else"))
    fail(peek().loc,
         fmt::format("expected 'else' in the conditional expression, found {}", describe(peek())),
         "a conditional expression needs both arms: `a if cond else b`");
  next();
  auto e = make(Expr::Kind::IfExp, start);
  e->args.push_back(std::move(cond));
  e->args.push_back(std::move(body));
  e->args.push_back(parse_test());
  return measured(std::move(e));
}

ExprPtr Parser::parse_or() {
  SourceLoc start = peek().loc;
  ExprPtr left = parse_and();
  while (at_keyword("or")) {
    next();
    auto e = make(Expr::Kind::BoolOp, start);
    e->bool_op = ast::BoolOp::Or;
    e->args.push_back(std::move(left));
    e->args.push_back(parse_and());
    left = measured(std::move(e));
  }
  return left;
}

ExprPtr Parser::parse_and() {
  SourceLoc start = peek().loc;
  ExprPtr left = parse_not();
  while (at_keyword("and")) {
    next();
    auto e = make(Expr::Kind::BoolOp, start);
    e->bool_op = ast::BoolOp::And;
    e->args.push_back(std::move(left));
    e->args.push_back(parse_not());
    left = measured(std::move(e));
  }
  return left;
}

ExprPtr Parser::parse_not() {
  if (!at_keyword("not")) return parse_comparison();
  Nesting nesting(*this);
  auto e = make(Expr::Kind::Unary, next().loc);
  e->unary_op = ast::UnaryOp::Not;
  e->args.push_back(parse_not());
  return measured(std::move(e));
}

ExprPtr Parser::parse_comparison() {
  SourceLoc start = peek().loc;
  ExprPtr first = parse_binary(0);
  ExprPtr cmp;
  while (true) {
    const Token& t = peek();
    if (t.is_keyword("in") || (t.is_keyword("not") && peek(1).is_keyword("in")))
      fail(t.loc, "the 'in' operator is not supported in kernels",
           "compare explicitly, e.g. `x == a or x == b`, or loop over the indices");
    if (t.is_keyword("is"))
      fail(t.loc, "the 'is' operator is not supported in kernels",
           "compare values with '==' or '!='");
    std::optional<ast::CmpOp> op;
    for (const auto& [spelling, value] : kCompareOps)
      if (t.is_op(spelling)) op = value;
    if (!op) break;
    next();
    if (!cmp) {
      cmp = make(Expr::Kind::Compare, start);
      cmp->args.push_back(std::move(first));
    }
    cmp->cmp_ops.push_back(*op);
    cmp->args.push_back(parse_binary(0));
  }
  return cmp ? measured(std::move(cmp)) : std::move(first);
}

ExprPtr Parser::parse_binary(int level) {
  if (level == kNumBinaryLevels) return parse_factor();
  SourceLoc start = peek().loc;
  ExprPtr left = parse_binary(level + 1);
  while (true) {
    const BinarySpelling* op = binary_here();
    if (op == nullptr || op->level != level) return left;
    SourceLoc op_loc = next().loc;
    auto e = make(Expr::Kind::Binary, start);
    e->bin_op = op->op;
    e->args.push_back(std::move(left));
    e->args.push_back(parse_binary(level + 1));
    left = measured(std::move(e), op_loc);
  }
}

ExprPtr Parser::parse_factor() {
  Nesting nesting(*this);
  const Token& t = peek();
  std::optional<ast::UnaryOp> op;
  if (t.is_op("-")) op = ast::UnaryOp::Neg;
  if (t.is_op("+")) op = ast::UnaryOp::Pos;
  if (t.is_op("~")) op = ast::UnaryOp::Invert;
  if (!op) return parse_power();
  auto e = make(Expr::Kind::Unary, next().loc);
  e->unary_op = *op;
  e->args.push_back(parse_factor());
  return measured(std::move(e));
}

// `**` binds tighter than a unary operator on its left and looser than one on its right, and
// groups to the right: -2**-1**2 is -(2**(-(1**2))).
ExprPtr Parser::parse_power() {
  SourceLoc start = peek().loc;
  ExprPtr base = parse_primary();
  if (!at_op("**")) return base;
  next();
  auto e = make(Expr::Kind::Binary, start);
  e->bin_op = ast::BinOp::Pow;
  e->args.push_back(std::move(base));
  e->args.push_back(parse_factor());
  return measured(std::move(e));
}

ExprPtr Parser::parse_primary() {
  SourceLoc start = peek().loc;
  ExprPtr e = parse_atom();
  while (true) {
    SourceLoc where = peek().loc;
    if (accept_op(".")) {
      auto attr = make(Expr::Kind::Attribute, start);
      attr->name = expect_name("an attribute name after '.'");
      attr->operand = std::move(e);
      e = measured(std::move(attr), where);
    } else if (accept_op("(")) {
      auto call = make(Expr::Kind::Call, start);
      call->operand = std::move(e);
      parse_call_arguments(*call);
      e = measured(std::move(call), where);
    } else if (accept_op("[")) {
      auto sub = make(Expr::Kind::Subscript, start);
      sub->operand = std::move(e);
      parse_subscript_indices(*sub);
      e = measured(std::move(sub), where);
    } else {
      return e;
    }
  }
}

void Parser::parse_call_arguments(Expr& call) {
  while (!at_op(")")) {
    const Token& t = peek();
    if (t.is_op("*") || t.is_op("**"))
      fail(t.loc, fmt::format("argument unpacking ('{}') is not supported", t.text),
           "pass each argument explicitly");
    if (t.kind == TokenKind::Name && peek(1).is_op("=")) {
      ast::Keyword keyword;
      keyword.loc = t.loc;
      keyword.name = expect_name("a keyword argument name");
      next();  // '='
      for (const ast::Keyword& other : call.keywords)
        if (other.name == keyword.name)
          fail(keyword.loc, fmt::format("keyword argument '{}' is repeated", keyword.name),
               "pass each keyword argument once");
      keyword.value = parse_test();
      call.keywords.push_back(std::move(keyword));
    } else {
      if (!call.keywords.empty())
        fail(t.loc, "a positional argument cannot follow a keyword argument",
             "put positional arguments first, then keyword arguments");
      call.args.push_back(parse_test());
      if (at_keyword("for"))
        fail(peek().loc, "generator expressions are not supported in kernels",
             "write the loop explicitly and accumulate into a local variable");
    }
    if (!accept_op(",")) break;
  }
  expect_op(")", "to close the argument list", "separate arguments with ',' and end with ')'");
}

void Parser::parse_subscript_indices(Expr& subscript) {
  auto reject_slice = [&] {
    fail(peek().loc, "slices ('a[i:j]') are not supported in kernels",
         "index one element at a time, e.g. a[i], inside a loop over the range you need");
  };
  if (at_op("]"))
    fail(peek().loc, "empty subscript '[]'", "write an index inside the brackets, e.g. a[i]");
  SourceLoc first_loc = peek().loc;
  bool trailing_comma = false;
  while (!at_op("]")) {
    if (at_op(":") || at_op("...")) reject_slice();
    subscript.args.push_back(parse_test());
    if (at_op(":")) reject_slice();
    trailing_comma = accept_op(",");
    if (!trailing_comma) break;
  }
  expect_op("]", "to close the subscript", "separate indices with ',' and end with ']'");
  if (trailing_comma && subscript.args.size() == 1) {
    // `a[i,]` indexes with the one-element tuple (i,), as in Python.
    auto tuple = make(Expr::Kind::Tuple, first_loc);
    tuple->args = std::move(subscript.args);
    subscript.args.clear();
    subscript.args.push_back(measured(std::move(tuple)));
  }
}

void Parser::reject_collection(const Token& open) {
  // Tell comprehensions from literals by a `for` directly inside the brackets.
  bool comprehension = false;
  int depth = 0;
  for (size_t i = pos_; i < toks_.size(); ++i) {
    const Token& t = toks_[i];
    if (t.is_op("(") || t.is_op("[") || t.is_op("{")) ++depth;
    if (t.is_op(")") || t.is_op("]") || t.is_op("}")) {
      if (--depth == 0) break;
    }
    if (depth == 1 && t.is_keyword("for")) comprehension = true;
  }
  if (open.is_op("["))
    fail(open.loc,
         comprehension ? "list comprehensions are not supported in kernels"
                       : "list literals are not supported in kernels",
         "use a tuple (a, b, c) or a vector such as tack.vec3(x, y, z) for a few values, or "
         "tack.local_array(dtype, n) for per-thread storage");
  fail(open.loc,
       comprehension ? "dict and set comprehensions are not supported in kernels"
                     : "dict and set literals are not supported in kernels",
       "use a tuple or a vector for a few values, or an array argument for data");
}

ExprPtr Parser::parse_atom() {
  const Token& t = peek();
  switch (t.kind) {
    case TokenKind::Name: {
      auto e = make(Expr::Kind::Name, t.loc);
      e->name = expect_name("a name");
      return e;
    }
    case TokenKind::Int: {
      auto e = make(Expr::Kind::IntLit, t.loc);
      e->uint_value = t.int_value;
      // int_value saturates above INT64_MAX; such literals are read through uint_value.
      e->int_value = static_cast<int64_t>(
          std::min<uint64_t>(t.int_value, std::numeric_limits<int64_t>::max()));
      next();
      return e;
    }
    case TokenKind::Float: {
      auto e = make(Expr::Kind::FloatLit, t.loc);
      e->float_value = t.float_value;
      next();
      return e;
    }
    case TokenKind::String: {
      auto e = make(Expr::Kind::StringLit, t.loc);
      while (at_kind(TokenKind::String)) {
        const Token& s = next();
        if (s.prefix.find('f') != std::string::npos)
          fail(s.loc, "f-strings are not supported in kernels",
               "pass the values to print as separate arguments: print(\"x =\", x)");
        if (s.prefix.find('b') != std::string::npos)
          fail(s.loc, "bytes literals (b'...') are not supported in kernels",
               "remove the 'b' prefix");
        e->string_value += s.text;
      }
      return e;
    }
    case TokenKind::Keyword: {
      if (t.text == "True" || t.text == "False") {
        auto e = make(Expr::Kind::BoolLit, t.loc);
        e->bool_value = t.text == "True";
        next();
        return e;
      }
      if (t.text == "None")
        fail(t.loc, "None is not supported in kernels",
             in_return_annotation_
                 ? "leave out the '-> None' annotation: a function without one returns nothing"
                 : "kernels have no None value; use a number or a flag, and a bare `return` to "
                   "return nothing");
      if (const Rejected* r = find_rejected(t);
          r && (t.text == "lambda" || t.text == "yield" || t.text == "await"))
        fail(t.loc, r->message, r->hint);
      fail(t.loc, fmt::format("expected an expression, found keyword '{}'", t.text),
           "a reserved word cannot be used as a value or a variable name");
    }
    case TokenKind::Op: {
      if (t.is_op("(")) {
        SourceLoc open = next().loc;
        if (accept_op(")")) return make(Expr::Kind::Tuple, open);
        if (at_keyword("yield"))
          fail(peek().loc,
               "generators ('yield') are not supported in "
               "kernels",
               "store each result into an output array argument");
        ExprPtr first = parse_test();
        if (at_keyword("for"))
          fail(peek().loc, "generator expressions are not supported in kernels",
               "write the loop explicitly and accumulate into a local variable");
        if (!at_op(",")) {
          expect_op(")", "to close the parenthesis", "add ')'");
          return first;
        }
        auto tuple = make(Expr::Kind::Tuple, open);
        tuple->args.push_back(std::move(first));
        while (accept_op(",") && !at_op(")")) tuple->args.push_back(parse_test());
        expect_op(")", "to close the tuple", "separate the items with ',' and end with ')'");
        return measured(std::move(tuple));
      }
      if (t.is_op("[") || t.is_op("{")) reject_collection(t);
      if (t.is_op("*") || t.is_op("**"))
        fail(t.loc, "starred expressions are not supported in kernels",
             "name each value explicitly");
      if (t.is_op("..."))
        fail(t.loc, "'...' (Ellipsis) is not supported in kernels",
             "write `pass` for an empty body, and index arrays with one index per dimension");
      break;
    }
    default:
      break;
  }
  fail(t.loc, fmt::format("expected an expression, found {}", describe(t)),
       "write a value, a name or a call here");
}

}  // namespace

ast::Module parse_module(std::shared_ptr<const SourceFile> file) {
  return Parser(std::move(file)).parse();
}

}  // namespace tack::lang
