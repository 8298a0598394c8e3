// The typed, structured IR: what semantic analysis produces for one specialization of a kernel
// and every code generator consumes. It keeps the program's structure (loops, ifs) rather than a
// control-flow graph, because the C-family generators print structured code and the CPU generator
// lowers structure to LLVM easily. Every value has a concrete type; there are no implicit
// conversions (semantic analysis inserts Casts), which is what the verifier checks.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/type.hpp"
#include "lang/source.hpp"

namespace tack::ir {

enum class Op : uint8_t {
  // Leaves.
  Const,     // int_bits (integers and bools, two's complement) or float_value
  Local,     // index = local id
  Param,     // index = scalar parameter id
  ArrayDim,  // index = array parameter id, dim = k; type i64
  // Memory.
  Load,  // index = array parameter id, operands = one i64 index per dimension
  // Arithmetic (operands share the result type unless noted).
  Neg,
  BitNot,
  Not,  // unary; Not takes and gives bool
  Add,
  Sub,
  Mul,
  Div,       // true division, floats only
  FloorDiv,  // Python's //, integers and floats
  Mod,       // Python's %, integers and floats
  Pow,       // Python's ** (integer exponent of the same type for integers)
  Shl,
  Shr,  // operands: value, amount (any integer type); result: value's type
  BitAnd,
  BitOr,
  BitXor,
  Min,
  Max,
  // Comparisons: two operands of one type, result bool.
  Lt,
  Le,
  Gt,
  Ge,
  Eq,
  Ne,
  // Short-circuit logic on bools, and a conditional that evaluates one arm.
  LogicalAnd,
  LogicalOr,
  Select,  // operands: cond (bool), then, else
  Cast,    // operands: value; converts to type (float->int truncates and saturates)
  Call,    // callee = a math builtin; operands per builtin
  Atomic,  // index = array id, operands = indices..., value (and for Cas: expected, desired);
           // returns the element's old value; relaxed ordering
};

enum class AtomicOp : uint8_t { Add, Sub, Min, Max, And, Or, Xor, Exchange, Cas };
const char* atomic_name(AtomicOp a);

// Math builtins (all on floats unless noted; the result has the operands' type).
enum class Builtin : uint8_t {
  Sqrt,
  Rsqrt,
  Sin,
  Cos,
  Tan,
  Asin,
  Acos,
  Atan,
  Atan2,
  Sinh,
  Cosh,
  Tanh,
  Exp,
  Exp2,
  Log,
  Log2,
  Log10,
  Floor,
  Ceil,
  Trunc,
  Round,
  Abs /* ints too */,
  Fma,
  IsNan /* -> bool */,
  IsInf /* -> bool */,
};

const char* op_name(Op op);
const char* builtin_name(Builtin b);
bool is_comparison(Op op);
bool is_binary_arith(Op op);

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  Op op;
  Type type;
  SourceLoc loc;
  int index = -1;  // local, param or array id
  int dim = 0;     // ArrayDim
  Builtin callee = Builtin::Sqrt;
  AtomicOp atomic = AtomicOp::Add;
  uint64_t int_bits = 0;
  double float_value = 0;
  bool checked = false;  // Load, Atomic: check the index (debug mode)
  std::vector<ExprPtr> operands;

  Expr(Op o, Type t, SourceLoc l) : op(o), type(t), loc(l) {}
  ExprPtr clone() const;
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Block = std::vector<StmtPtr>;

struct Stmt {
  enum class Kind : uint8_t {
    Assign,  // local `index` = value
    Store,   // array `index`[indices...] = value; `checked` in debug mode
    If,      // cond, body, orelse
    While,   // while cond: body
    For,     // sequential: local `index` = start, start+step... while (step > 0 ? < stop : > stop)
    Break,
    Continue,
    Print,  // one line: `labels[k]` before `indices[k]` (values), separated by spaces
  };
  Kind kind;
  SourceLoc loc;
  int index = -1;
  bool checked = false;
  ExprPtr value;                    // Assign, Store
  std::vector<ExprPtr> indices;     // Store: the indices; Print: the values
  std::vector<std::string> labels;  // Print: text before each value, and the text at the end
  ExprPtr cond;                     // If, While
  ExprPtr start, stop, step;        // For (all of the loop variable's type)
  Block body, orelse;

  Stmt(Kind k, SourceLoc l) : kind(k), loc(l) {}
};

// A kernel parameter, or a local array (tack.local_array): per-thread scratch with a size fixed at
// compilation, placed after the parameters and passed nowhere.
struct Param {
  std::string name;
  Type type;
  bool written = false;    // arrays: stored to somewhere in the kernel
  int64_t local_size = 0;  // a local array's element count; 0 for parameters

  bool is_local_array() const { return local_size > 0; }
};

struct Local {
  std::string name;
  Type type;
};

// One dimension of the parallel loop. The bounds are host expressions (parameters, array
// dimensions, constants) evaluated at every launch; the kernel receives the resulting start, step
// and iteration count, so nothing about the iteration space is compiled in.
struct LoopDim {
  int var = -1;  // the local that holds the index (i64)
  ExprPtr start, stop, step;
};

// One specialization of a kernel: concrete parameter types, one parallel loop.
struct Kernel {
  std::string name;
  std::string file;
  std::vector<Param> params;
  std::vector<Local> locals;
  Block prelude;              // binds locals before the loop (no stores)
  std::vector<LoopDim> dims;  // outermost first
  SourceLoc loop_loc;
  Block body;          // one iteration
  ExprPtr result;      // `return expr` after the loop, or null
  bool debug = false;  // loads and stores carry index checks
  int workgroup_size = 0;  // 256 when the kernel uses workgroup primitives: launches use groups of this size
};

}  // namespace tack::ir
