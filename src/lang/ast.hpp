// The syntax tree of a kernels file: what the parser produces and name resolution annotates.
// Every node carries the position of its first character so that any later stage can point at it.
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lang/source.hpp"

namespace tack::ast {

struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;
using Block = std::vector<StmtPtr>;

enum class BinOp {
  Add,
  Sub,
  Mul,
  Div,
  FloorDiv,
  Mod,
  Pow,
  MatMul,
  Shl,
  Shr,
  BitAnd,
  BitOr,
  BitXor
};
enum class UnaryOp { Neg, Pos, Invert, Not };
enum class BoolOp { And, Or };
enum class CmpOp { Lt, Le, Gt, Ge, Eq, Ne };

const char* spelling(BinOp op);
const char* spelling(UnaryOp op);
const char* spelling(CmpOp op);

struct Keyword {
  std::string name;
  ExprPtr value;
  SourceLoc loc;
};

struct Expr {
  enum class Kind {
    Name,       // name
    IntLit,     // int_value (always non-negative: `-1` is Unary(Neg, 1))
    FloatLit,   // float_value
    BoolLit,    // bool_value
    StringLit,  // string_value
    Attribute,  // operand.name             e.g. tack.f32, x.shape, math.pi
    Subscript,  // operand[args...]         a[i] has one arg, a[i, j] two; x.shape[0]
    Call,       // operand(args..., keywords...)
    Binary,     // args[0] bin_op args[1]
    Unary,      // unary_op args[0]
    BoolOp,     // args[0] and/or args[1] (a chain `a and b and c` nests to the left)
    Compare,    // args[0] cmp_ops[0] args[1] cmp_ops[1] args[2] ... (chained)
    IfExp,      // args[1] if args[0] else args[2]
    Tuple,      // (args...)
  };
  Kind kind;
  SourceLoc loc;
  std::string name;  // Name identifier, Attribute member
  int64_t int_value = 0;
  uint64_t uint_value = 0;  // IntLit: the exact value, which may exceed int64
  double float_value = 0;
  bool bool_value = false;
  std::string string_value;
  BinOp bin_op = BinOp::Add;
  UnaryOp unary_op = UnaryOp::Neg;
  BoolOp bool_op = BoolOp::And;
  std::vector<CmpOp> cmp_ops;
  ExprPtr operand;  // Attribute, Subscript and Call target
  std::vector<ExprPtr> args;
  std::vector<Keyword> keywords;
  // The levels of the tree from this node down, as the parser measured them (see
  // kMaxExprHeight); every later walk over an expression recurses at most this deep.
  int height = 1;

  Expr(Kind k, SourceLoc l) : kind(k), loc(l) {}
  Expr(const Expr&) = delete;
  Expr& operator=(const Expr&) = delete;
  // Frees the subtree without recursing, so that even a tree the parser refused (deeper than
  // the limit when it stopped) is destroyed in constant stack space.
  ~Expr();
};

// How deep an expression may be: levels of operators, calls, subscripts and attributes inside
// each other (a chain `a + b + c` is two levels; a call or comparison chain counts one level per
// argument or operand, since min(a, b, c) and a < b < c become nested operations). Bounds the
// recursion of every stage after the parser, whose own recursion the lexer's bracket depth and
// the parser's nesting count bound.
inline constexpr int kMaxExprHeight = 1000;

struct Stmt {
  enum class Kind {
    Expr,       // value (a call, or a docstring)
    Assign,     // targets[0] = value; `a = b = v` has two targets; a target may be a Tuple
    AugAssign,  // targets[0] aug_op= value
    If,         // if cond: body else: orelse (elif is an If inside orelse)
    For,        // for targets[0] in iter: body   (target may be a Tuple of names)
    While,      // while cond: body
    Break,
    Continue,
    Pass,
    Return,  // return value (value may be null)
  };
  Kind kind;
  SourceLoc loc;
  std::vector<ExprPtr> targets;
  ExprPtr value;
  ExprPtr cond;
  ExprPtr iter;
  BinOp aug_op = BinOp::Add;
  Block body;
  Block orelse;

  Stmt(Kind k, SourceLoc l) : kind(k), loc(l) {}
};

struct Decorator {
  ExprPtr expr;  // e.g. Attribute(Name tack, kernel), or a Call of it with keywords
  SourceLoc loc;
};

struct Param {
  std::string name;
  SourceLoc loc;
  ExprPtr annotation;  // `x: tack.template()`, or null (name resolution checks what it is)
};

struct FunctionDef {
  std::string name;
  SourceLoc loc;  // of the `def` keyword
  std::vector<Decorator> decorators;
  std::vector<Param> params;
  ExprPtr returns;  // the `-> T` annotation, or null
  Block body;
  // A method of a class that is not kernel code (a host method such as __init__): the error that
  // parsing it as kernel code gave, rethrown if name resolution finds it is a device function.
  // Its parameters and body are then empty.
  std::exception_ptr unparsed;
};

// A module-level class. Kernels use the classes decorated @tack.data_oriented (device classes):
// their class-level `NAME = value` attributes are constants and their @tack.func methods are
// inlined. Other classes are host code.
struct ClassDef {
  std::string name;
  SourceLoc loc;  // of the `class` keyword
  std::vector<Decorator> decorators;
  std::vector<ExprPtr> bases;
  struct Attribute {
    std::string name;
    SourceLoc loc;
    ExprPtr value;
  };
  std::vector<Attribute> attributes;  // class-level `NAME = value`, in order
  std::vector<std::unique_ptr<FunctionDef>> methods;
  // A body that is not kernel code (a host class): the error, rethrown if the class is a device
  // class. The bases, attributes and methods are then empty.
  std::exception_ptr unparsed;
};

// A module-level `import x [as y]` or `from x import a [as b], ...`.
struct Import {
  std::string module;  // "tack", "math", "numpy", "tack.math"...
  std::string alias;   // the local name: `import tack as tk` gives "tk"; `import tack` gives "tack"
  std::vector<std::pair<std::string, std::string>> names;  // from-import: (name, local alias)
  bool is_from = false;
  SourceLoc loc;
};

// A module-level `NAME = expr` (for Tack, only `tack.constant(...)` is meaningful).
struct GlobalAssign {
  std::string name;
  SourceLoc loc;
  ExprPtr value;
};

struct Module {
  std::shared_ptr<const SourceFile> source;
  std::vector<Import> imports;
  std::vector<GlobalAssign> globals;
  std::vector<std::unique_ptr<FunctionDef>> functions;
  std::vector<std::unique_ptr<ClassDef>> classes;
};

}  // namespace tack::ast
