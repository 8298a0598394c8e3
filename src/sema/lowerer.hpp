// The state of lowering one kernel's syntax tree to typed IR. Shared by the files that lower
// expressions (lower_expr.cpp), calls of builtins (lower_call.cpp) and statements
// (lower_stmt.cpp).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>

#include "ir/builder.hpp"
#include "lang/ast.hpp"
#include "lang/resolve.hpp"
#include "sema/specialize.hpp"

namespace tack::sema {

// A lowered expression. Literals (and constants declared without a dtype) stay weak, as in NumPy's
// NEP 50: they take the type of what they meet. A weak value is a Const of type i64/u64 (integers,
// exact) or f64 (floats) until it is materialized.
struct Value {
  enum class Weak : uint8_t { No, Int, Float };
  ir::ExprPtr e;
  Weak weak = Weak::No;

  bool is_weak() const { return weak != Weak::No; }
  DType dtype() const { return e->type.dtype; }
};

// Where statements are being lowered, for the contract's checks.
enum class Phase : uint8_t { Prelude, Loop, AfterLoop };

class Lowerer {
 public:
  Lowerer(const lang::ResolvedModule& module, const ast::FunctionDef& def,
          std::span<const ArgType> args, const TargetRules& target);
  ir::Kernel run();

  // ---- expressions (lower_expr.cpp) ----
  Value expr(const ast::Expr& e);
  // A value of a concrete type: weak literals become i32/i64/u64 or the kernel's float type.
  ir::ExprPtr materialize(Value v);
  // Brings two operands to one type by the promotion rules, for an operator at `loc`.
  std::pair<ir::ExprPtr, ir::ExprPtr> unify(Value a, Value b, SourceLoc loc, const char* what);
  ir::ExprPtr truth(Value v, SourceLoc loc);        // Python truthiness, as bool
  ir::ExprPtr index_value(Value v, SourceLoc loc);  // an array index, as i64
  Value binary(ast::BinOp op, Value a, Value b, SourceLoc loc);
  Value weak_int(int64_t v, SourceLoc loc);
  Value weak_uint(uint64_t v, SourceLoc loc);
  Value weak_float(double v, SourceLoc loc);
  Value constant(const lang::Constant& c, SourceLoc loc);
  // Converts for assignment to a local of type `to` (exact widening only).
  ir::ExprPtr convert_for_local(Value v, const ir::Local& local, SourceLoc loc);
  // Converts for a store into an array of dtype `to` (same-kind casting).
  ir::ExprPtr convert_for_store(Value v, DType to, const std::string& array, SourceLoc loc);
  // The array parameter an expression names, or -1.
  int array_param(const ast::Expr& e) const;
  ir::ExprPtr array_extent(int array, int dim, SourceLoc loc);
  // `name = tack.local_array(dtype, size)` or `tack.local_array_like(array, size)`: declares a
  // local array and returns true; false for any other statement.
  bool declare_local_array(const ast::Stmt& s, ir::Block& out);
  void zero_local_array(int array, SourceLoc loc, ir::Block& out);
  void print(const ast::Expr& call, ir::Block& out);
  std::vector<int> prelude_local_arrays_;  // zeroed at the start of every iteration
  std::vector<ir::ExprPtr> array_indices(int array, const ast::Expr& subscript);

  // ---- calls (lower_call.cpp) ----
  Value call(const ast::Expr& e);
  // The builtin a callee expression names ("sqrt", "f32", "min"...), or "" when it is not one.
  std::string builtin_name(const ast::Expr& callee) const;
  std::optional<DType> dtype_named(const ast::Expr& e) const;
  Value atomic(const std::string& op, const ast::Expr& call);
  std::optional<Value> glsl_helper(const std::string& name, const ast::Expr& call);
  // tack.random: seed(index, stream) gives a state; uniform(s) and normal(s) give a value and the
  // next state (lower_random.cpp).
  std::vector<Value> random(const std::string& name, const ast::Expr& call);

  // ---- workgroups (lower_workgroup.cpp, uniformity.cpp) ----
  // `name = tack.shared(dtype, size)` or `tack.shared_like(array, size)`: declares a shared
  // array and returns true; false for any other statement.
  bool declare_shared_array(const ast::Stmt& s);
  // `tack.barrier()` as a statement: lowers it and returns true; false for any other call.
  bool workgroup_statement(const ast::Expr& call, ir::Block& out);
  // thread_id, group_id, group_size and the block collectives; nothing for other names.
  std::optional<Value> workgroup_call(const std::string& name, const ast::Expr& call);
  void use_workgroups(bool collective);
  int64_t shared_bytes() const;
  // The workgroup contract's uniformity analysis: rejects a collective that not every lane of a
  // group is proven to reach (uniformity.cpp).
  void check_uniform_collectives() const;

  // ---- device functions (lower_func.cpp) ----
  // Inlines a call of a @tack.func; returns its values (one, several for a tuple, none).
  std::vector<Value> inline_call(const ast::FunctionDef& f, const ast::Expr& call);
  void return_from_function(const ast::Stmt& s, ir::Block& out);
  // After a loop inside an inlined function: leave the wrapper too if the loop returned.
  void propagate_return(ir::Block& out);
  ir::Block* block_ = nullptr;  // where statements of the expression being lowered go

  // ---- statements (lower_stmt.cpp) ----
  void block(const ast::Block& b, ir::Block& out);
  void stmt(const ast::Stmt& s, ir::Block& out);
  void lower_stmt(const ast::Stmt& s, ir::Block& out);
  // Runs `lower` with statements that expressions emit collected into a block of their own.
  ir::Block lower_into(const std::function<void()>& lower);
  // The @tack.func a call expression calls, or null.
  const ast::FunctionDef* called_func(const ast::Expr& e) const;
  void assign(const ast::Expr& target, Value v, SourceLoc loc, ir::Block& out);
  void store(const ast::Expr& target, Value v, SourceLoc loc, ir::Block& out);
  void for_loop(const ast::Stmt& s, ir::Block& out);
  void parallel_loop(const ast::Stmt& s);
  int new_local(const std::string& name, ir::Type t);
  int temp(ir::ExprPtr value, SourceLoc loc, ir::Block& out);
  ir::ExprPtr host_bound(Value v, SourceLoc loc);
  void check_no_workgroup_primitives();

  [[noreturn]] void fail(SourceLoc loc, const std::string& message,
                         const std::string& hint = "") const;
  [[noreturn]] void fail_arg(SourceLoc loc, const std::string& message) const;
  // The file and the name of what is being lowered: the kernel, or an inlined function.
  const SourceFile& current_file() const;
  const std::string& current_name() const;

  const lang::ResolvedModule& module_;
  const ast::FunctionDef& def_;
  std::span<const ArgType> args_;
  TargetRules target_;
  ir::Kernel k_;
  DType float_type_ = DType::F32;      // f64 when any array argument is f64
  std::map<std::string, int> params_;  // name -> parameter id
  std::map<std::string, int> locals_;  // name -> local id
  std::map<int, SourceLoc> local_decl_;
  std::map<int, ir::ExprPtr> host_values_;  // prelude locals computable on the host
  Phase phase_ = Phase::Prelude;
  // An inlined @tack.func being lowered: its file and name for errors, its results.
  struct InlineFrame {
    const ast::FunctionDef* def;
    const SourceFile* file;
    int body_depth;            // loop_depth_ of the function's top level
    int done = -1;             // bool local: the function has returned
    std::vector<int> results;  // result locals, created at the first return
    int returns = 0;           // return statements lowered so far
  };
  std::vector<InlineFrame> inline_stack_;
  int loop_depth_ = 0;  // sequential loops enclosing the current statement
  int temps_ = 0;
};

}  // namespace tack::sema
