// Lowering statements: assignments, stores, conditionals, sequential loops, print, local arrays.
#include <fmt/format.h>
#include <functional>

#include "ir/passes.hpp"
#include "ir/verifier.hpp"
#include "sema/lowerer.hpp"
#include "tack/error.hpp"

namespace tack::sema {

using ir::Op;
using ir::Type;
using Weak = Value::Weak;
using K = ast::Stmt::Kind;

void Lowerer::print(const ast::Expr& call, ir::Block& out) {
  if (phase_ != Phase::Loop)
    fail(call.loc, "print is only allowed inside the parallel loop", "move it into the loop body");
  std::string sep = " ", end = "\n";
  for (const ast::Keyword& kw : call.keywords) {
    if ((kw.name != "sep" && kw.name != "end") || kw.value->kind != ast::Expr::Kind::StringLit)
      fail(kw.loc, fmt::format("print() takes sep= and end= strings, not {}=", kw.name),
           "write print(\"label\", x, sep=\", \")");
    (kw.name == "sep" ? sep : end) = kw.value->string_value;
  }
  auto node = std::make_unique<ir::Stmt>(ir::Stmt::Kind::Print, call.loc);
  std::string text;
  for (size_t i = 0; i < call.args.size(); ++i) {
    if (i > 0) text += sep;
    const ast::Expr& a = *call.args[i];
    if (a.kind == ast::Expr::Kind::StringLit) {
      text += a.string_value;
      continue;
    }
    Value v = expr(a);
    if (!v.is_composite()) {
      node->labels.push_back(std::move(text));
      text.clear();
      node->indices.push_back(materialize(std::move(v)));
      continue;
    }
    // A vector prints as (x, y, z); a matrix column by column.
    for (size_t k = 0; k < v.comps.size(); ++k) {
      node->labels.push_back(fmt::format("{}{}", text, k == 0 ? "(" : ", "));
      text.clear();
      node->indices.push_back(std::move(v.comps[k]));
    }
    text.clear();
    text.push_back(')');
  }
  node->labels.push_back(text + end);
  out.push_back(std::move(node));
}

bool Lowerer::declare_local_array(const ast::Stmt& s, ir::Block& out) {
  if (s.targets.size() != 1 || s.value->kind != ast::Expr::Kind::Call) return false;
  std::string fn = builtin_name(*s.value->operand);
  if (fn != "local_array" && fn != "local_array_like") return false;
  const ast::Expr& call = *s.value;
  std::string usage = fn == "local_array" ? "write buf = tack.local_array(tack.f32, 16)"
                                          : "write buf = tack.local_array_like(x, 16)";
  if (call.args.size() != 2 || !call.keywords.empty())
    fail(call.loc, fmt::format("tack.{}() takes two arguments", fn), usage);
  const ast::Expr& target = *s.targets[0];
  if (target.kind != ast::Expr::Kind::Name)
    fail(target.loc, "a local array is bound to a name", usage);
  if (is_local(target.name) || is_param(target.name))
    fail(target.loc,
         fmt::format("'{}' is already bound; a local array needs a name of its own", target.name),
         "choose another name");
  std::optional<DType> dt;
  if (fn == "local_array") {
    dt = dtype_named(*call.args[0]);
    if (!dt) fail(call.args[0]->loc, "the first argument of tack.local_array is a dtype", usage);
  } else {
    int like = array_param(*call.args[0]);
    if (like < 0)
      fail(call.args[0]->loc, "tack.local_array_like takes an array to copy the dtype of", usage);
    dt = k_.params[like].type.dtype;
  }
  Value size = expr(*call.args[1]);
  int64_t n = size.weak == Value::Weak::Int ? static_cast<int64_t>(size.e->int_bits) : 0;
  if (size.weak != Value::Weak::Int || n <= 0)
    fail(call.args[1]->loc,
         "a local array's size is a positive constant: a literal, a tack.constant or arithmetic of "
         "them",
         usage);
  // Local arrays live on each worker thread's stack.
  constexpr int64_t kMaxBytes = 1 << 20;
  if (n * dtype_size(*dt) > kMaxBytes)
    fail(call.args[1]->loc,
         fmt::format("this local array needs {} bytes; a local array holds at most {} bytes",
                     n * dtype_size(*dt), kMaxBytes),
         "use a smaller array, or pass a scratch array argument");
  k_.params.push_back({target.name, Type::array(*dt, 1), true, n});
  int id = static_cast<int>(k_.params.size()) - 1;
  params_[target.name] = id;
  if (phase_ == Phase::Prelude)
    prelude_local_arrays_.push_back(id);
  else
    zero_local_array(id, s.loc, out);
  return true;
}

void Lowerer::zero_local_array(int array, SourceLoc loc, ir::Block& out) {
  const ir::Param& p = k_.params[array];
  int k = new_local(fmt::format("${}.k", p.name), Type::i64());
  auto loop = std::make_unique<ir::Stmt>(ir::Stmt::Kind::For, loc);
  loop->index = k;
  loop->start = ir::make_int(Type::i64(), 0, loc);
  loop->stop = ir::make_int(Type::i64(), static_cast<uint64_t>(p.local_size), loc);
  loop->step = ir::make_int(Type::i64(), 1, loc);
  std::vector<ir::ExprPtr> idx;
  idx.push_back(ir::make_local(k, Type::i64(), loc));
  ir::ExprPtr zero = is_float(p.type.dtype) ? ir::make_float(Type::scalar(p.type.dtype), 0.0, loc)
                                            : ir::make_int(Type::scalar(p.type.dtype), 0, loc);
  loop->body.push_back(ir::make_store(array, std::move(idx), std::move(zero), loc));
  out.push_back(std::move(loop));
}

std::optional<Lowerer::Callee> Lowerer::callee(const ast::Expr& e) {
  if (e.kind != ast::Expr::Kind::Call) return std::nullopt;
  const ast::Expr& f = *e.operand;
  if (f.kind == ast::Expr::Kind::Attribute) {
    int object = object_of(*f.operand);
    if (object < 0) return std::nullopt;
    return object_method(object, f.name, e.loc);
  }
  if (f.kind != ast::Expr::Kind::Name || is_local(f.name) || is_param(f.name)) return std::nullopt;
  lang::Symbol s = module().lookup(f.name);
  if (s.kind != lang::Symbol::Kind::Function ||
      module().kind_of(*s.function) != lang::FunctionKind::Func)
    return std::nullopt;
  return Callee{s.function, &module(), -1, f.name};
}

int Lowerer::new_local(const std::string& name, Type t) {
  k_.locals.push_back({name, t});
  int id = static_cast<int>(k_.locals.size()) - 1;
  if (name.empty() || name[0] != '$') locals_[name] = id;
  return id;
}

int Lowerer::temp(ir::ExprPtr value, SourceLoc loc, ir::Block& out) {
  int id = new_local(fmt::format("$t{}", temps_++), value->type);
  out.push_back(ir::make_assign(id, std::move(value), loc));
  return id;
}
void Lowerer::block(const ast::Block& b, ir::Block& out) {
  for (const auto& s : b) stmt(*s, out);
}

void Lowerer::assign(const ast::Expr& target, Value v, SourceLoc loc, ir::Block& out) {
  using EK = ast::Expr::Kind;
  bool component_target = (target.kind == EK::Subscript || target.kind == EK::Attribute) &&
                          target.operand->kind == EK::Name &&
                          composites_.count(target.operand->name);
  if (component_target) return assign_component(target, std::move(v), loc, out);
  if (target.kind == EK::Subscript) return store(target, std::move(v), loc, out);
  if (target.kind == EK::Attribute && object_of(*target.operand) >= 0)
    fail(target.loc,
         fmt::format("cannot assign to the attribute '{}' of {}: a kernel reads objects",
                     target.name, describe_object(object_of(*target.operand))),
         "store into one of its arrays, or keep the value in a local");
  if (target.kind != EK::Name)
    fail(target.loc, "only names, array elements and vector components can be assigned",
         "write x = ..., a[i] = ... or v.x = ...");
  const std::string& name = target.name;
  if (params_.count(name) && !is_local(name) && k_.params[params_[name]].is_local_array())
    fail(target.loc, fmt::format("'{}' is a local array and cannot be rebound", name),
         fmt::format("assign its elements: {}[k] = v", name));
  if (is_param(name) && !is_local(name))
    fail(target.loc, fmt::format("cannot assign to the argument '{}'", name),
         fmt::format("assign to a new local instead, e.g. {}_local = ...", name));
  if (!is_local(name) && module().lookup(name).kind == lang::Symbol::Kind::Constant)
    fail(target.loc, fmt::format("cannot assign to the constant '{}'", name),
         "use a new local name");
  if (composites_.count(name) && !v.is_composite())
    fail(target.loc,
         fmt::format("cannot assign {} to '{}', which holds {}", v.type_name(), name,
                     composite_local(name, loc).type_name()),
         "assign a component (v.x = ...) or use a new name");
  if (v.is_composite()) {
    if (locals_.count(name))  // fails: a scalar local cannot take a vector
      (void)convert_for_local(std::move(v), k_.locals[locals_[name]], target.loc);
    return assign_composite(target, std::move(v), loc, out);
  }
  auto it = locals_.find(name);
  if (it == locals_.end()) {
    ir::ExprPtr e = materialize(std::move(v));
    int id = new_local(name, e->type);
    local_decl_[id] = target.loc;
    if (phase_ == Phase::Prelude && ir::is_host_expr(*e)) host_values_[id] = e->clone();
    out.push_back(ir::make_assign(id, std::move(e), loc));
    return;
  }
  int id = it->second;
  ir::ExprPtr e = convert_for_local(std::move(v), k_.locals[id], target.loc);
  if (phase_ == Phase::Prelude) {
    if (ir::is_host_expr(*e))
      host_values_[id] = e->clone();
    else
      host_values_.erase(id);
  }
  out.push_back(ir::make_assign(id, std::move(e), loc));
}

void Lowerer::store(const ast::Expr& target, Value v, SourceLoc loc, ir::Block& out) {
  int a = array_param(*target.operand);
  if (int object = a < 0 ? object_of(*target.operand) : -1; object >= 0)
    fail(target.loc,
         fmt::format("cannot store into {}: a kernel reads objects through their __getitem__",
                     describe_object(object)),
         "store into one of its arrays: obj.values[i] = v");
  if (a < 0)
    fail(target.loc, "only array arguments can be stored to",
         "store to an array argument: out[i] = v");
  reject_texture(a, target.loc);
  if (phase_ != Phase::Loop)
    fail(target.loc, "stores are only allowed inside the parallel loop",
         "move the store into the loop body");
  if (is_vector_access(a, target)) {
    std::vector<ir::ExprPtr> idx;
    // The vector is computed before the index expressions are, as for any store.
    v = reusable(std::move(v), loc);
    (void)vector_load(a, target, &idx, &out);
    return vector_store(a, std::move(idx), std::move(v), target.loc, out);
  }
  ir::Param& p = k_.params[a];
  auto idx = array_indices(a, target);
  ir::ExprPtr value = convert_for_store(std::move(v), p.type.dtype, p.name, loc);
  p.written = true;
  out.push_back(ir::make_store(a, std::move(idx), std::move(value), target.loc));
}

void Lowerer::for_loop(const ast::Stmt& s, ir::Block& out) {
  const ast::Expr& it = *s.iter;
  if (it.kind != ast::Expr::Kind::Call || builtin_name(*it.operand) != "range")
    fail(it.loc, "a loop inside a kernel iterates over range(...)", "write for k in range(a, b):");
  if (it.args.empty() || it.args.size() > 3)
    fail(it.loc, "range() takes one to three arguments",
         "write range(n), range(a, b) or range(a, b, step)");
  if (s.targets[0]->kind != ast::Expr::Kind::Name)
    fail(s.targets[0]->loc, "an inner loop has one loop variable", "write for k in range(n):");
  if (!s.orelse.empty()) fail(s.loc, "for ... else is not supported", "remove the else block");
  Value start = it.args.size() == 1 ? weak_int(0, it.loc) : expr(*it.args[0]);
  Value stop = expr(*it.args[it.args.size() == 1 ? 0 : 1]);
  Value step = it.args.size() == 3 ? expr(*it.args[2]) : weak_int(1, it.loc);
  if (step.weak == Weak::Int && step.e->int_bits == 0)
    fail(it.args[2]->loc, "range() step must not be zero", "use a positive or negative step");
  for (Value* v : {&start, &stop, &step}) require_scalar(*v, it.loc, "range()");
  for (Value* v : {&start, &stop, &step})
    if (v->weak == Weak::Float || (!v->is_weak() && !v->e->type.is_int() && !v->e->type.is_bool()))
      fail(it.loc, "range() takes integers", "convert the bounds with int(...)");
  // The loop variable has the bounds' common type.
  auto [a, b] = unify(std::move(start), std::move(stop), it.loc, "range()");
  Value av{std::move(a)}, bv{std::move(b)};
  auto [a2, c] = unify(std::move(av), std::move(step), it.loc, "range()");
  Type t = a2->type.is_bool() ? Type::scalar(DType::I32) : a2->type;
  const std::string& name = s.targets[0]->name;
  int var;
  if (auto f = locals_.find(name); f != locals_.end()) {
    var = f->second;
    if (k_.locals[var].type != t)
      fail(s.targets[0]->loc,
           fmt::format("the loop variable '{}' is {} here but {} before", name, ir::to_string(t),
                       ir::to_string(k_.locals[var].type)),
           "use a new name for the loop variable");
  } else {
    if (is_param(name))
      fail(s.targets[0]->loc, fmt::format("cannot use the argument '{}' as a loop variable", name),
           "choose another name");
    var = new_local(name, t);
  }
  auto loop = std::make_unique<ir::Stmt>(ir::Stmt::Kind::For, s.loc);
  loop->index = var;
  loop->start = ir::make_cast(std::move(a2), t);
  loop->stop = ir::make_cast(std::move(bv.e), t);
  loop->step = ir::make_cast(std::move(c), t);
  int returns = inline_stack_.empty() ? 0 : inline_stack_.back().returns;
  ++loop_depth_;
  block(s.body, loop->body);
  --loop_depth_;
  out.push_back(std::move(loop));
  if (!inline_stack_.empty() && inline_stack_.back().returns != returns) propagate_return(out);
}

void Lowerer::stmt(const ast::Stmt& s, ir::Block& out) {
  Nested nested(*this, s.loc);
  // Statements an expression needs (an inlined device function) go before this statement.
  ir::Block* saved = block_;
  block_ = &out;
  lower_stmt(s, out);
  block_ = saved;
}

ir::Block Lowerer::lower_into(const std::function<void()>& lower) {
  ir::Block pre;
  ir::Block* saved = block_;
  block_ = &pre;
  lower();
  block_ = saved;
  return pre;
}

void Lowerer::lower_stmt(const ast::Stmt& s, ir::Block& out) {
  switch (s.kind) {
    case K::Pass:
      return;
    case K::Expr:
      if (s.value->kind == ast::Expr::Kind::StringLit) return;  // a docstring
      if (std::optional<Callee> f = callee(*s.value)) {
        // For its stores; results, if any, are dropped.
        (void)inline_call(*f, call_args(*s.value, *f), s.value->loc);
        return;
      }
      if (s.value->kind == ast::Expr::Kind::Call && builtin_name(*s.value->operand) == "print")
        return print(*s.value, out);
      if (workgroup_statement(*s.value, out)) return;
      if (s.value->kind == ast::Expr::Kind::Call) {
        Value v = call(*s.value);
        if (!v.is_composite() &&
            v.e->op == Op::Atomic) {  // for its effect; the old value it returns is dropped
          temp(std::move(v.e), s.loc, out);
          return;
        }
        fail(s.loc, "this call's result is unused, and it has no effect",
             "assign it to a name or remove it");
      }
      fail(s.loc, "this expression has no effect", "assign it, or remove it");
    case K::Assign: {
      if (declare_local_array(s, out) || declare_shared_array(s)) return;
      if (s.targets.size() == 1 && s.targets[0]->kind == ast::Expr::Kind::Tuple) {
        // Tuple assignment evaluates the whole right side before storing any target.
        const ast::Expr& lhs = *s.targets[0];
        if (s.value->kind == ast::Expr::Kind::Call &&
            builtin_name(*s.value->operand).rfind("random.", 0) == 0) {
          std::vector<Value> results = random(builtin_name(*s.value->operand).substr(7), *s.value);
          if (results.size() != lhs.args.size())
            fail(s.loc,
                 fmt::format("this gives {} value{} for {} targets", results.size(),
                             results.size() == 1 ? "" : "s", lhs.args.size()),
                 "write u, s = tack.random.uniform(s)");
          for (size_t i = 0; i < results.size(); ++i)
            assign(*lhs.args[i], std::move(results[i]), s.loc, out);
          return;
        }
        if (std::optional<Callee> f = callee(*s.value)) {
          std::vector<Value> results = inline_call(*f, call_args(*s.value, *f), s.value->loc);
          if (results.size() != lhs.args.size())
            fail(s.loc,
                 fmt::format("'{}' returns {} value{} for {} targets", f->name, results.size(),
                             results.size() == 1 ? "" : "s", lhs.args.size()),
                 "unpack as many names as the function returns");
          for (size_t i = 0; i < results.size(); ++i)
            assign(*lhs.args[i], std::move(results[i]), s.loc, out);
          return;
        }
        if (s.value->kind != ast::Expr::Kind::Tuple || s.value->args.size() != lhs.args.size())
          fail(s.loc, fmt::format("cannot unpack this value into {} targets", lhs.args.size()),
               "write as many values as targets: a, b = x, y");
        std::vector<Value> values;
        for (const auto& v : s.value->args) {
          Value x = expr(*v);
          if (x.is_weak()) {
            values.push_back(std::move(x));
            continue;
          }
          // Into temporaries, so that a, b = b, a reads both before assigning either.
          auto keep = [&](ir::ExprPtr& e) {
            int t = temp(std::move(e), v->loc, out);
            e = ir::make_local(t, k_.locals[t].type, v->loc);
          };
          if (x.is_composite())
            for (auto& c : x.comps) keep(c);
          else
            keep(x.e);
          values.push_back(std::move(x));
        }
        for (size_t i = 0; i < values.size(); ++i)
          assign(*lhs.args[i], std::move(values[i]), s.loc, out);
        return;
      }
      Value v = expr(*s.value);
      if (s.targets.size() == 1) return assign(*s.targets[0], std::move(v), s.loc, out);
      // a = b = v: v once, then each target.
      v = reusable(std::move(v), s.loc);
      for (const auto& target : s.targets) assign(*target, v.copy(), s.loc, out);
      return;
    }
    case K::AugAssign: {
      const ast::Expr& target = *s.targets[0];
      bool component_target = (target.kind == ast::Expr::Kind::Subscript ||
                               target.kind == ast::Expr::Kind::Attribute) &&
                              target.operand->kind == ast::Expr::Kind::Name &&
                              composites_.count(target.operand->name);
      if (component_target) {
        // v.x += 1, v[k] *= 2 (a dynamic index is read and written with the same value).
        Value v = binary(s.aug_op, expr(target), expr(*s.value), s.loc);
        return assign_component(target, std::move(v), s.loc, out);
      }
      if (target.kind == ast::Expr::Kind::Subscript) {
        // x[i] += v evaluates i once.
        int a = array_param(*target.operand);
        if (a < 0) fail(target.loc, "only array arguments can be stored to");
        reject_texture(a, target.loc);
        if (phase_ != Phase::Loop)
          fail(target.loc, "stores are only allowed inside the parallel loop",
               "move the store into the loop body");
        if (is_vector_access(a, target)) {
          std::vector<ir::ExprPtr> idx;
          Value old = vector_load(a, target, &idx, &out);
          Value v = binary(s.aug_op, std::move(old), expr(*s.value), s.loc);
          return vector_store(a, std::move(idx), std::move(v), target.loc, out);
        }
        auto idx = array_indices(a, target);
        std::vector<int> temps;
        for (auto& i : idx) temps.push_back(temp(std::move(i), target.loc, out));
        auto reread = [&] {
          std::vector<ir::ExprPtr> r;
          for (int t : temps) r.push_back(ir::make_local(t, Type::i64(), target.loc));
          return r;
        };
        Value old{ir::make_load(a, k_.params[a].type.dtype, reread(), target.loc)};
        Value v = binary(s.aug_op, std::move(old), expr(*s.value), s.loc);
        ir::Param& p = k_.params[a];
        ir::ExprPtr value = convert_for_store(std::move(v), p.type.dtype, p.name, s.loc);
        p.written = true;
        out.push_back(ir::make_store(a, reread(), std::move(value), target.loc));
        return;
      }
      if (target.kind != ast::Expr::Kind::Name)
        fail(target.loc, "only names and array elements can be assigned");
      if (!is_local(target.name)) {
        if (is_param(target.name))
          fail(target.loc, fmt::format("cannot assign to the argument '{}'", target.name),
               fmt::format("copy it to a local first: {0}_local = {0}", target.name));
        fail(target.loc, fmt::format("'{}' is used before it is assigned", target.name),
             fmt::format("assign it first, e.g. {} = 0", target.name));
      }
      Value old = expr(target);
      Value v = binary(s.aug_op, std::move(old), expr(*s.value), s.loc);
      return assign(target, std::move(v), s.loc, out);
    }
    case K::If: {
      auto node = std::make_unique<ir::Stmt>(ir::Stmt::Kind::If, s.loc);
      node->cond = truth(expr(*s.cond), s.cond->loc);
      block(s.body, node->body);
      block(s.orelse, node->orelse);
      out.push_back(std::move(node));
      return;
    }
    case K::While: {
      auto node = std::make_unique<ir::Stmt>(ir::Stmt::Kind::While, s.loc);
      ir::Block pre = lower_into([&] { node->cond = truth(expr(*s.cond), s.cond->loc); });
      if (ir::contains_collective(*node->cond) || ir::contains_collective(pre))
        fail(s.cond->loc,
             "a block collective in a while condition: the lanes of a group may test it a "
             "different number of times",
             "compute the collective before the loop and again at the end of its body, into a "
             "local the condition reads");
      if (!pre.empty()) {
        // The condition calls a device function: `while True: <call>; if not cond: break; ...`
        // so that the call runs before every test.
        auto leave = std::make_unique<ir::Stmt>(ir::Stmt::Kind::If, s.loc);
        leave->cond = ir::make_unary(Op::Not, std::move(node->cond), s.loc);
        leave->body.push_back(std::make_unique<ir::Stmt>(ir::Stmt::Kind::Break, s.loc));
        node->cond = ir::make_bool(true, s.loc);
        node->body = std::move(pre);
        node->body.push_back(std::move(leave));
      }
      int returns = inline_stack_.empty() ? 0 : inline_stack_.back().returns;
      ++loop_depth_;
      block(s.body, node->body);
      --loop_depth_;
      out.push_back(std::move(node));
      if (!inline_stack_.empty() && inline_stack_.back().returns != returns) propagate_return(out);
      return;
    }
    case K::For:
      return for_loop(s, out);
    case K::Break:
    case K::Continue:
      if (loop_depth_ == iteration_depth_ && inline_stack_.empty()) {
        if (s.kind == K::Break)
          fail(s.loc, "`break` directly in the parallel loop would end other threads' work",
               "use `continue` to end this iteration, or break out of an inner loop");
        out.push_back(std::make_unique<ir::Stmt>(ir::Stmt::Kind::Break, s.loc));
        return;
      }
      if (!inline_stack_.empty() && loop_depth_ == inline_stack_.back().body_depth)
        fail(s.loc,
             fmt::format("'{}' outside a loop in a device function",
                         s.kind == K::Break ? "break" : "continue"),
             "leave the function with `return`");
      if (loop_depth_ == 0)
        fail(s.loc, "`break` directly in the parallel loop would end other threads' work",
             "use `continue` to end this iteration, or break out of an inner loop");
      out.push_back(std::make_unique<ir::Stmt>(
          s.kind == K::Break ? ir::Stmt::Kind::Break : ir::Stmt::Kind::Continue, s.loc));
      return;
    case K::Return:
      if (!inline_stack_.empty()) return return_from_function(s, out);
      fail(s.loc, "`return` is only allowed after the parallel loop",
           "to end an iteration early, use if/else; a kernel's result is `return expr` after its "
           "loop");
  }
}

}  // namespace tack::sema
