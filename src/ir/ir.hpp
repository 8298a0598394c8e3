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
  // Workgroups (backends with supports_workgroups; groups of Kernel::workgroup_size lanes).
  ThreadId,    // the lane within the group (i32)
  GroupId,     // the group's index in the launch (i64)
  GroupSize,   // the lanes in a group (i32)
  Collective,  // collective = which; operands = value; every lane of the group takes part and
               // receives the group's sum/min/max, or (Scan) the inclusive prefix sum up to it
  // Textures sampled by the target's texture unit (Param::texture): index = the texture
  // parameter, operands = its rank's f32 coordinates (x first, normalized); type f32. Sema emits
  // it only for targets with hardware textures; elsewhere sampling is loads and arithmetic.
  TextureSample,
};

// Block collectives over the lanes of a group. Every backend combines the 256 values in the same
// fixed order, so a float result has the same bits everywhere: sum/min/max are a tree in which
// step s (s = 128, 64, ..., 1) sets v[l] = v[l] op v[l + s] for l < s, and the result is v[0];
// scan is Hillis-Steele, where step d (d = 1, 2, ..., 128) sets v[l] = v[l - d] + v[l] for
// l >= d.
enum class Collective : uint8_t { Sum, Min, Max, Scan };
const char* collective_name(Collective c);

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
  Collective collective = Collective::Sum;
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
    Print,    // one line: `labels[k]` before `indices[k]` (values), separated by spaces
    Barrier,  // every lane of the group waits here; shared memory written before it is visible
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
// compilation, placed after the parameters and passed nowhere. A shared array (tack.shared) is a
// local array with `shared` set: one per workgroup, seen by all its lanes, not initialized.
struct Param {
  std::string name;
  Type type;
  bool written = false;    // arrays: stored to somewhere in the kernel
  int64_t local_size = 0;  // a local or shared array's element count; 0 for parameters
  bool shared = false;     // a tack.shared array (workgroup memory)
  // An f32 array of rank 2 or 3 that the kernel only samples in hardware (Op::TextureSample):
  // passed as the target's texture handle, with no address and no extents.
  bool texture = false;

  // A reduction's partial results (ir::Reduction): made by sema, passed by no caller; the runtime
  // allocates reduction_partials(iterations) elements of it for each launch.
  bool partials = false;

  bool is_local_array() const { return local_size > 0; }
  bool is_shared_array() const { return local_size > 0 && shared; }
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

// A scalar reduction (docs/language.md, "Reductions"): a local bound before the loop and updated
// in it only by `s += e`, `s = min(s, e)`... Its value after the loop is computed in one fixed
// order that every generator implements:
//   - the iterations are numbered g = 0, 1, ... N-1 in row-major order of the loop dimensions and
//     cut into blocks of kReductionBlock; lane j (0 <= j < kReductionLanes) of block b runs the
//     iterations g = b * kReductionBlock + j + kReductionLanes * m, m = 0, 1, ..., in that order,
//     with its own copy of the local (`acc`) that starts at `identity`; the body updates it;
//   - the lane's value is stored at `partials`[b * kReductionLanes + j];
//   - the `epilogue` of the kernel (IR built by sema, run by the result entry) combines each
//     block's lanes with the tree of the collectives (step s = 8, 4, 2, 1: v[l] = v[l] op
//     v[l + s]), then the blocks' values pairwise (level by level: p[i] = p[2i] op p[2i + 1], an
//     odd last one carried up), and sets the local bound before the loop to `init op total`.
// The order depends only on N: not on the thread count nor on the backend.
inline constexpr int64_t kReductionLanes = 16;
inline constexpr int64_t kReductionBlock = 4096;
// The partials a launch of `iterations` iterations needs: one per lane of every block.
inline int64_t reduction_partials(int64_t iterations) {
  return (iterations + kReductionBlock - 1) / kReductionBlock * kReductionLanes;
}

struct Reduction {
  int acc = -1;       // the lane's copy of the local, which the body updates
  int init = -1;      // the local bound before the loop; after it, init op total
  int partials = -1;  // the array parameter (Param::partials) of the lanes' values
  Op op = Op::Add;    // Add Mul Min Max BitOr BitAnd BitXor
  ExprPtr identity;   // a Const of the local's type
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
  Block body;  // one iteration
  // The kernel uses a collective (a barrier or a block collective): a launch must consist of
  // complete groups, so its iteration count must be a multiple of workgroup_size.
  bool collectives = false;
  // Scalar reductions over the parallel loop; the body runs per lane (see Reduction), and the
  // kernel has a result (only a `return` reads a reduction).
  std::vector<Reduction> reductions;
  Block epilogue;      // after the loop, before `result`: combines the reductions' partials
  ExprPtr result;      // `return expr` after the loop, or null
  bool debug = false;  // loads and stores carry index checks
  int workgroup_size =
      0;  // 256 when the kernel uses workgroup primitives: launches use groups of this size
};

}  // namespace tack::ir
