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
//
// Vectors and matrices exist only here: a composite value is a list of scalar expressions, one per
// component (a matrix's column by column), and every operation on it becomes scalar operations.
// The IR and the generators never see a vector, so every backend computes each component with
// the scalar rules, in the same order.
struct Value {
  enum class Weak : uint8_t { No, Int, Float };
  ir::ExprPtr e;  // a scalar; null for a composite
  Weak weak = Weak::No;
  std::vector<ir::ExprPtr> comps;  // a composite's components, all of one dtype
  int rows = 0;                    // a vector's width, or a matrix's rows (0 for a scalar)
  int cols = 0;                    // 1 for a vector, the column count for a matrix

  Value() = default;
  Value(ir::ExprPtr scalar, Weak w = Weak::No) : e(std::move(scalar)), weak(w) {}  // NOLINT
  static Value composite(std::vector<ir::ExprPtr> comps, int rows, int cols) {
    Value v;
    v.comps = std::move(comps);
    v.rows = rows;
    v.cols = cols;
    return v;
  }
  bool is_weak() const { return weak != Weak::No; }
  bool is_composite() const { return rows > 0; }
  bool is_matrix() const { return cols > 1; }
  DType dtype() const { return is_composite() ? comps[0]->type.dtype : e->type.dtype; }
  Value copy() const;
  // "vec3", "dmat2", "a vector of 3 i64", "bool mask of 2"
  std::string type_name() const;
};

// A list of values (an initializer list would copy them, and values only move).
template <typename... V>
std::vector<Value> values(V&&... v) {
  std::vector<Value> out;
  (out.push_back(std::forward<V>(v)), ...);
  return out;
}

// A local vector or matrix: one scalar local per component.
struct CompositeLocal {
  std::vector<int> ids;
  int rows = 0, cols = 0;
};

// The indices of `a[i, j]` (or `a[(i, j)]`), in order.
inline std::vector<const ast::Expr*> subscript_indices(const ast::Expr& subscript) {
  std::vector<const ast::Expr*> out;
  for (const auto& a : subscript.args) {
    if (a->kind == ast::Expr::Kind::Tuple)
      for (const auto& t : a->args) out.push_back(t.get());
    else
      out.push_back(a.get());
  }
  return out;
}

// Where statements are being lowered, for the contract's checks.
enum class Phase : uint8_t { Prelude, Loop, AfterLoop };

class Lowerer {
 public:
  Lowerer(const lang::ResolvedModule& module, const ast::FunctionDef& def,
          std::span<const ArgType> args, const TargetRules& target);
  ir::Kernel run();

  // ---- expressions (lower_expr.cpp) ----
  Value expr(const ast::Expr& e);
  Value expr_node(const ast::Expr& e);  // expr() without the nesting count and the spilling
  // A value of a concrete type: weak literals become i32/i64/u64 or the kernel's float type.
  ir::ExprPtr materialize(Value v);
  // Brings two operands to one type by the promotion rules, for an operator at `loc`.
  std::pair<ir::ExprPtr, ir::ExprPtr> unify(Value a, Value b, SourceLoc loc, const char* what);
  ir::ExprPtr truth(Value v, SourceLoc loc);        // Python truthiness, as bool
  ir::ExprPtr index_value(Value v, SourceLoc loc);  // an array index, as i64
  Value binary(ast::BinOp op, Value a, Value b, SourceLoc loc);
  Value unary(ast::UnaryOp op, Value a, SourceLoc loc);
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

  // ---- vectors and matrices (lower_vector.cpp) ----
  // Whether `name` is bound in the current scope (a scalar or composite local).
  bool is_local(const std::string& name) const {
    return locals_.count(name) > 0 || composites_.count(name) > 0;
  }
  // Whether `name` is a parameter in the current scope (an array, a scalar or an object).
  bool is_param(const std::string& name) const {
    return params_.count(name) > 0 || object_names_.count(name) > 0;
  }
  // Fails, naming what was expected, when `v` is a vector or matrix.
  void require_scalar(const Value& v, SourceLoc loc, const std::string& where) const;
  // A composite whose components are locals, constants or parameters, so that they may be read
  // more than once (components are moved into temporaries when statements can be emitted).
  Value reusable(Value v, SourceLoc loc);
  Value composite_local(const std::string& name, SourceLoc loc) const;
  Value construct(const std::string& type, std::vector<Value> args, SourceLoc loc);
  // Applies a scalar operation to each component; scalar operands are broadcast.
  Value componentwise(std::vector<Value> args, SourceLoc loc, const std::string& what,
                      const std::function<Value(std::vector<Value>)>& scalar_op);
  Value composite_binary(ast::BinOp op, Value a, Value b, SourceLoc loc);
  Value matmul(Value a, Value b, SourceLoc loc);
  Value composite_compare(ir::Op op, Value a, Value b, SourceLoc loc);
  std::optional<Value> vector_helper(const std::string& name, std::vector<Value>& args,
                                     SourceLoc loc);
  // v.x, v.xyz, v[k], m[i, j]: reading and (for names) assigning components.
  Value swizzle(Value v, const std::string& fields, SourceLoc loc);
  Value component(Value v, const ast::Expr& subscript);
  struct ComponentIndex {
    int flat = -1;  // the component when every index is a constant
    std::vector<ir::ExprPtr> index;
  };
  ComponentIndex component_index(const Value& v, const ast::Expr& subscript);
  ir::ExprPtr selects(const ComponentIndex& c, int k, int rows, SourceLoc loc);
  void assign_component(const ast::Expr& target, Value v, SourceLoc loc, ir::Block& out);
  void assign_composite(const ast::Expr& target, Value v, SourceLoc loc, ir::Block& out);
  // An array of vectors (last dimension 2, 3 or 4) indexed with one index fewer than its rank.
  bool is_vector_access(int array, const ast::Expr& subscript) const;
  Value vector_load(int array, const ast::Expr& subscript, std::vector<ir::ExprPtr>* index_temps,
                    ir::Block* out);
  void vector_store(int array, std::vector<ir::ExprPtr> idx, Value v, SourceLoc loc,
                    ir::Block& out);
  std::map<std::string, CompositeLocal> composites_;  // name -> component locals

  // ---- textures (lower_texture.cpp) ----
  bool is_texture(int param) const;
  // Fails when `param` is a texture: textures are only sampled.
  void reject_texture(int param, SourceLoc loc) const;
  Value texture_sample(int tex, const ast::Expr& call);

  // ---- calls (lower_call.cpp) ----
  Value call(const ast::Expr& e);
  // The builtins that take values (casts, math, GLSL helpers, vector constructors), applied to
  // evaluated arguments; composites go through componentwise().
  bool is_value_builtin(const std::string& name) const;
  Value apply_builtin(const std::string& name, std::vector<Value> args, SourceLoc loc);
  Value scalar_builtin(const std::string& name, std::vector<Value> args, SourceLoc loc);
  // The builtin a callee expression names ("sqrt", "f32", "min"...), or "" when it is not one.
  std::string builtin_name(const ast::Expr& callee) const;
  std::optional<DType> dtype_named(const ast::Expr& e) const;
  Value atomic(const std::string& op, const ast::Expr& call);
  std::optional<Value> glsl_helper(const std::string& name, std::vector<Value>& args,
                                   SourceLoc loc);
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
  // What a call calls: a @tack.func, found in `module`, with `self` (an index into objects_) as
  // its first argument for a method, or -1. `name` says it in messages ("Cells.point").
  struct Callee {
    const ast::FunctionDef* def = nullptr;
    const lang::ResolvedModule* module = nullptr;
    int self = -1;
    std::string name;
  };
  // Inlines a call of a @tack.func with these arguments (after `self`); returns its values (one,
  // several for a tuple, none).
  std::vector<Value> inline_call(const Callee& f, const std::vector<const ast::Expr*>& args,
                                 SourceLoc loc);
  std::vector<Value> inline_as_expression(const Callee& f,
                                          const std::vector<const ast::Expr*>& args, SourceLoc loc);
  // A call's positional arguments (keywords fail: device functions take none).
  std::vector<const ast::Expr*> call_args(const ast::Expr& call, const Callee& f) const;
  // Inlines a call whose value is used: it must give one value.
  Value call_value(const Callee& f, const std::vector<const ast::Expr*>& args, SourceLoc loc);
  void return_from_function(const ast::Stmt& s, ir::Block& out);
  // After a loop inside an inlined function: leave the wrapper too if the loop returned.
  void propagate_return(ir::Block& out);
  ir::Block* block_ = nullptr;  // where statements of the expression being lowered go

  // ---- the loop's locals and reductions (reductions.cpp) ----
  // A local bound before the parallel loop that the loop assigns.
  struct LoopLocal {
    std::string name;
    std::optional<ir::Op> op;           // a reduction's operation
    int outer = -1;                     // the local bound before the loop
    int inner = -1;                     // the iteration's copy, or the lane's for a reduction
    std::vector<int> outer_components;  // a vector or matrix: its locals before the loop
  };
  // Finds the loop's locals and reductions, and fails when `ret` (the `return` after the loop,
  // or null) reads a local the loop assigns that is not a reduction. Before the loop is lowered.
  void plan_loop_locals(const ast::Stmt& loop, const ast::Stmt* ret);
  // At the start of the loop body: each iteration's copies, the reductions and their partials.
  void begin_loop_locals(ir::Block& body, SourceLoc loc);
  // After the loop body: the names mean the locals bound before the loop again, and the
  // epilogue combines the reductions into them.
  void end_loop_locals(SourceLoc loc);
  std::vector<LoopLocal> loop_plan_;
  size_t first_body_local_ = 0;  // the locals the loop body creates start here

  // ---- objects of device classes (lower_object.cpp) ----
  // An object argument, or an object in an attribute of one, passed along to inlined functions.
  struct ObjectRef {
    const ObjectType* type = nullptr;
    std::string path;        // "cells", "mesh.cells": its parameters' names and messages
    std::vector<int> slots;  // per attribute: its parameter, or its object in objects_, or -1
  };
  // Makes the parameters of an object's arrays and scalars (depth first, as sema::leaves orders
  // them) and returns its index in objects_.
  int bind_object(const ObjectType& type, const std::string& path);
  // The object an expression names (`cells`, `self.mesh`), or -1.
  int object_of(const ast::Expr& e) const;
  // `obj.name`, an attribute of an object: the attribute and its slot, or null.
  const ObjectType::Attribute* member(const ast::Expr& e, int* slot) const;
  // `obj.name` read as a value: a scalar parameter or a constant.
  Value object_attribute(int object, const std::string& name, SourceLoc loc);
  // The method `name` of an object as a call calls it (attributes holding functions first).
  Callee object_method(int object, const std::string& name, SourceLoc loc);
  // `obj.shape`, an attribute holding a tuple of numbers (the parameter of its first in `first`),
  // or null; and `obj.shape[k]`, one of them.
  const ObjectType::Attribute* object_tuple(const ast::Expr& e, int* first) const;
  Value tuple_item(const ast::Expr& subscript);
  // `obj[i, j]`, `len(obj)`: its __getitem__ and __len__.
  Value object_subscript(int object, const ast::Expr& subscript);
  Value object_len(int object, SourceLoc loc);
  // The class and attribute of an object, in messages: "'cells' (a Cells object)".
  std::string describe_object(int object) const;
  [[noreturn]] void fail_unsupported(int object, const ObjectType::Attribute& a, SourceLoc loc);
  // The parallel loop `for c in cells:` over a class that declares __tack_iterate__.
  void object_loop(int object, const ast::Stmt& s);
  std::vector<ObjectRef> objects_;
  std::map<std::string, int> object_names_;  // names in scope bound to objects

  // ---- statements (lower_stmt.cpp) ----
  void block(const ast::Block& b, ir::Block& out);
  void stmt(const ast::Stmt& s, ir::Block& out);
  void lower_stmt(const ast::Stmt& s, ir::Block& out);
  // Runs `lower` with statements that expressions emit collected into a block of their own.
  ir::Block lower_into(const std::function<void()>& lower);
  // The @tack.func a call expression calls (a function, or a method of an object), or nothing for
  // a builtin; fails for a method that is not a device function.
  std::optional<Callee> callee(const ast::Expr& call);
  void assign(const ast::Expr& target, Value v, SourceLoc loc, ir::Block& out);
  void store(const ast::Expr& target, Value v, SourceLoc loc, ir::Block& out);
  void for_loop(const ast::Stmt& s, ir::Block& out);
  void parallel_loop(const ast::Stmt& s);
  void range_loop(const ast::Stmt& s);  // over range() or tack.ndrange()
  int new_local(const std::string& name, ir::Type t);
  int temp(ir::ExprPtr value, SourceLoc loc, ir::Block& out);
  ir::ExprPtr host_bound(Value v, SourceLoc loc);
  void check_no_workgroup_primitives();

  [[noreturn]] void fail(SourceLoc loc, const std::string& message,
                         const std::string& hint = "") const;
  [[noreturn]] void fail_arg(SourceLoc loc, const std::string& message) const;
  // The file and the name of what is being lowered: the kernel, or an inlined function; and the
  // module that resolves its free names.
  const SourceFile& current_file() const;
  const std::string& current_name() const;
  const lang::ResolvedModule& module() const {
    return inline_stack_.empty() ? module_ : *inline_stack_.back().module;
  }

  const lang::ResolvedModule& module_;
  const ast::FunctionDef& def_;
  std::span<const ArgType> args_;
  TargetRules target_;
  ir::Kernel k_;
  DType float_type_ = DType::F32;      // f64 when any array argument is f64
  std::map<std::string, int> params_;  // name -> parameter id
  // The argument type of each parameter that an argument gives (arrays and scalars, those of
  // objects included), by parameter id; local and shared arrays come after them.
  std::vector<const ArgType*> leaf_types_;
  std::map<std::string, int> locals_;  // name -> local id
  std::map<int, SourceLoc> local_decl_;
  std::map<int, ir::ExprPtr> host_values_;  // prelude locals computable on the host
  Phase phase_ = Phase::Prelude;
  // An inlined @tack.func being lowered: its file and name for errors, its results.
  struct InlineFrame {
    const ast::FunctionDef* def;
    const lang::ResolvedModule* module;
    std::string name;
    const SourceFile* file;
    int body_depth;                       // loop_depth_ of the function's top level
    int done = -1;                        // bool local: the function has returned
    std::vector<CompositeLocal> results;  // result locals, created at the first return
                                          // (rows 0: a scalar in ids[0])
    int returns = 0;                      // return statements lowered so far
  };
  std::vector<InlineFrame> inline_stack_;

  // Bounds lowering's recursion, and with it every later walk over the IR. One expression is
  // bounded by the parser (ast::kMaxExprHeight) and a function's statements by the lexer's
  // indentation limit; inlining adds them up, so expressions, statements and inlined bodies are
  // counted together across every level of inlining.
  static constexpr int kMaxNesting = 3000;
  static constexpr size_t kMaxInlineDepth = 100;  // @tack.func calls inside each other
  class Nested {
   public:
    Nested(Lowerer& l, SourceLoc loc);
    ~Nested() { --l_.nesting_; }
    Nested(const Nested&) = delete;
    Nested& operator=(const Nested&) = delete;

   private:
    Lowerer& l_;
  };
  int nesting_ = 0;
  // Every kSpillLevels levels of a deep expression, its value goes to a temporary, so that the
  // IR's expressions stay shallow: the C-family compilers refuse more than 256 nested brackets.
  // Not once the kernel has lowered an atomic: a temporary is computed before the rest of its
  // statement, and an atomic to its left must stay first.
  static constexpr int kSpillLevels = 16;
  bool atomics_seen_ = false;
  int loop_depth_ = 0;  // sequential loops enclosing the current statement
  // The loop depth of the parallel loop's body when it is wrapped for a `continue`, else -1.
  int iteration_depth_ = -1;
  int temps_ = 0;
};

}  // namespace tack::sema
