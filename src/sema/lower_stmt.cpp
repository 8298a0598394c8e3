// Lowering statements and the kernel's structure: the prelude, the one parallel loop, the result.
#include <fmt/format.h>
#include <array>
#include <cctype>
#include <functional>
#include <set>

#include "ir/passes.hpp"
#include "ir/verifier.hpp"
#include "sema/lowerer.hpp"
#include "tack/error.hpp"

namespace tack::sema {

using ir::Op;
using ir::Type;
using Weak = Value::Weak;
using K = ast::Stmt::Kind;

namespace {

const std::set<std::string>& workgroup_primitives() {
  static const std::set<std::string> s = {"shared",    "shared_like", "barrier",   "thread_id",
                                          "group_id",  "group_size",  "block_sum", "block_min",
                                          "block_max", "block_scan"};
  return s;
}

}  // namespace

Lowerer::Lowerer(const lang::ResolvedModule& module, const ast::FunctionDef& def,
                 std::span<const ArgType> args, const TargetRules& target)
    : module_(module), def_(def), args_(args), target_(target) {
  k_.name = def.name;
  k_.file = module.source().name();
  for (const ArgType& a : args)
    if (a.kind == ArgType::Kind::Array && a.dtype == DType::F64) float_type_ = DType::F64;
}

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
  if (is_local(target.name) || params_.count(target.name))
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

const ast::FunctionDef* Lowerer::called_func(const ast::Expr& e) const {
  if (e.kind != ast::Expr::Kind::Call || e.operand->kind != ast::Expr::Kind::Name ||
      is_local(e.operand->name) || params_.count(e.operand->name))
    return nullptr;
  lang::Symbol s = module_.lookup(e.operand->name);
  if (s.kind != lang::Symbol::Kind::Function ||
      module_.kind_of(*s.function) != lang::FunctionKind::Func)
    return nullptr;
  return s.function;
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

void Lowerer::check_no_workgroup_primitives() {
  if (target_.supports_workgroups) return;
  // Every mention counts, even in dead code, in the kernel and in every @tack.func it calls: the
  // kernel must be portable as written.
  std::set<std::string> found;
  SourceLoc first;
  std::string first_func;  // the @tack.func of the first mention, or "" for the kernel
  std::set<const ast::FunctionDef*> visited;
  const ast::FunctionDef* current = nullptr;
  std::function<void(const ast::Block&)> visit_block;
  std::function<void(const ast::Expr&)> visit_expr = [&](const ast::Expr& e) {
    std::string name;
    if (e.kind == ast::Expr::Kind::Attribute && e.operand->kind == ast::Expr::Kind::Name &&
        module_.lookup(e.operand->name).kind == lang::Symbol::Kind::TackModule)
      name = e.name;
    else if (e.kind == ast::Expr::Kind::Name &&
             module_.lookup(e.name).kind == lang::Symbol::Kind::TackMember)
      name = module_.lookup(e.name).member;
    if (workgroup_primitives().count(name)) {
      if (found.empty()) {
        first = e.loc;
        first_func = current ? current->name : "";
      }
      found.insert("tack." + name);
    }
    if (e.kind == ast::Expr::Kind::Call && e.operand->kind == ast::Expr::Kind::Name) {
      lang::Symbol f = module_.lookup(e.operand->name);
      if (f.kind == lang::Symbol::Kind::Function &&
          module_.kind_of(*f.function) == lang::FunctionKind::Func &&
          visited.insert(f.function).second) {
        const ast::FunctionDef* saved = current;
        current = f.function;
        visit_block(f.function->body);
        current = saved;
      }
    }
    if (e.operand) visit_expr(*e.operand);
    for (const auto& a : e.args) visit_expr(*a);
    for (const auto& kw : e.keywords) visit_expr(*kw.value);
  };
  visit_block = [&](const ast::Block& b) {
    for (const auto& s : b) {
      for (const auto& t : s->targets) visit_expr(*t);
      for (const ast::Expr* e : {s->value.get(), s->cond.get(), s->iter.get()})
        if (e) visit_expr(*e);
      visit_block(s->body);
      visit_block(s->orelse);
    }
  };
  visit_block(def_.body);
  if (found.empty()) return;
  std::string names;
  for (const auto& n : found) names += (names.empty() ? "" : ", ") + n;
  fail(first,
       fmt::format(
           "{} has no workgroups, so this kernel cannot use {}{}", target_.backend_label, names,
           first_func.empty() ? std::string()
                              : fmt::format(" (in @tack.func '{}', which it calls)", first_func)),
       "use tack.local_array(dtype, size) for private scratch storage, or run the kernel on a "
       "backend with workgroups (cuda, hip, level_zero, metal, opencl)");
}

ir::Kernel Lowerer::run() {
  check_no_workgroup_primitives();
  if (def_.params.size() != args_.size())
    throw TypeError(fmt::format(
        "kernel '{}' takes {} argument{} ({}), but {} {} given", def_.name, def_.params.size(),
        def_.params.size() == 1 ? "" : "s",
        [&] {
          std::string s;
          for (const auto& p : def_.params) s += (s.empty() ? "" : ", ") + p.name;
          return s;
        }(),
        args_.size(), args_.size() == 1 ? "was" : "were"));
  for (size_t i = 0; i < args_.size(); ++i) {
    const ArgType& a = args_[i];
    Type t = a.kind == ArgType::Kind::Array ? Type::array(a.dtype, a.rank) : Type::scalar(a.dtype);
    k_.params.push_back({def_.params[i].name, t, false});
    params_[def_.params[i].name] = static_cast<int>(i);
  }

  // Find the one parallel loop: a `for` directly in the body.
  const ast::Stmt* loop = nullptr;
  for (const auto& s : def_.body) {
    if (s->kind != K::For) continue;
    if (loop)
      fail(s->loc,
           fmt::format("a kernel has exactly one parallel loop; the first is at line {}",
                       loop->loc.line),
           "nest the second loop inside the first, or write a second kernel");
    loop = s.get();
  }
  if (!loop) {
    for (const auto& s : def_.body)
      if (s->kind == K::If || s->kind == K::While)
        fail(s->loc,
             "the parallel loop must be directly in the kernel's body, not inside an if or while",
             "move `for i in range(n):` to the top level of the kernel");
    fail(def_.loc, fmt::format("kernel '{}' has no parallel loop", def_.name),
         "write the work as `for i in range(n):` in the kernel's body; a serial computation is "
         "`for _ in range(1):`");
  }

  phase_ = Phase::Prelude;
  bool after = false;
  for (const auto& s : def_.body) {
    if (s.get() == loop) {
      phase_ = Phase::Loop;
      // Reductions and the loop's locals (reductions.cpp) need the `return`, which follows.
      const ast::Stmt* ret = nullptr;
      for (const auto& r : def_.body)
        if (r->kind == K::Return) ret = r.get();
      plan_loop_locals(*s, ret);
      parallel_loop(*s);
      phase_ = Phase::AfterLoop;
      after = true;
      continue;
    }
    if (s->kind == K::Pass || (s->kind == K::Expr && s->value->kind == ast::Expr::Kind::StringLit))
      continue;
    if (!after) {
      if (s->kind == K::Assign || s->kind == K::AugAssign) {
        stmt(*s, k_.prelude);
        continue;
      }
      fail(s->loc, "before the parallel loop a kernel may only assign local names",
           "move this statement inside the loop");
    }
    if (s->kind != K::Return)
      fail(s->loc, "only `return expr` may follow the parallel loop",
           "move this statement inside the loop");
    if (!s->value)
      fail(s->loc, "a kernel's `return` needs a value", "write return expr, or remove it");
    if (!def_.returns)
      fail(s->loc, "a kernel that returns a value must declare its type",
           fmt::format("write def {}(...) -> tack.f32:", def_.name));
    std::optional<DType> rt = dtype_named(*def_.returns);
    if (!rt && def_.returns->kind == ast::Expr::Kind::Name) {
      if (def_.returns->name == "float") rt = DType::F32;
      if (def_.returns->name == "int") rt = DType::I32;
      if (def_.returns->name == "bool") rt = DType::Bool;
    }
    if (!rt)
      fail(def_.returns->loc, "the return type must be a dtype",
           "write -> tack.f32, -> float or -> int");
    k_.result = convert_for_store(expr(*s->value), *rt, "the result", s->value->loc);
  }
  if (def_.returns && !k_.result)
    fail(def_.loc, "this kernel declares a return type but returns nothing",
         "end the kernel with `return expr` after its loop, or remove the annotation");

  check_uniform_collectives();
  ir::verify(k_, "semantic analysis");
  return std::move(k_);
}

ir::ExprPtr Lowerer::host_bound(Value v, SourceLoc loc) {
  require_scalar(v, loc, "a bound of the parallel loop");
  if (!is_integer(v.dtype()) || v.weak == Weak::Float)
    fail(loc, fmt::format("the parallel loop's bounds must be integers, not {}", v.type_name()),
         "pass the bound as an integer argument (in Python, convert it on the host: int(n)), or "
         "read it from an array's shape");
  ir::ExprPtr e = ir::make_cast(materialize(std::move(v)), Type::i64());
  // Prelude locals computable on the host are replaced by their expressions.
  std::function<void(ir::ExprPtr&)> subst = [&](ir::ExprPtr& x) {
    if (x->op == Op::Local) {
      auto it = host_values_.find(x->index);
      if (it != host_values_.end()) x = ir::make_cast(it->second->clone(), x->type);
      return;
    }
    for (auto& o : x->operands) subst(o);
  };
  subst(e);
  if (!ir::is_host_expr(*e))
    fail(loc, "the parallel loop's bounds must be computable before the loop runs",
         "use scalar arguments, constants, x.shape[k], len(x) and + - * // of them");
  return e;
}

void Lowerer::parallel_loop(const ast::Stmt& s) {
  k_.loop_loc = s.loc;
  const ast::Expr& it = *s.iter;
  std::vector<std::array<const ast::Expr*, 3>> dims;  // start, stop, step (null: default)
  std::string fn = it.kind == ast::Expr::Kind::Call ? builtin_name(*it.operand) : "";
  if (fn == "range") {
    if (it.args.empty() || it.args.size() > 3)
      fail(it.loc, "range() takes one to three arguments",
           "write range(n), range(a, b) or range(a, b, step)");
    if (it.args.size() == 1)
      dims.push_back({nullptr, it.args[0].get(), nullptr});
    else
      dims.push_back(
          {it.args[0].get(), it.args[1].get(), it.args.size() == 3 ? it.args[2].get() : nullptr});
  } else if (fn == "ndrange") {
    if (it.args.empty() || it.args.size() > 4)
      fail(it.loc, "tack.ndrange takes one to four dimensions", "write tack.ndrange(h, w)");
    for (const auto& a : it.args) {
      if (a->kind == ast::Expr::Kind::Tuple) {
        if (a->args.size() != 2)
          fail(a->loc, "an ndrange dimension is a size or a (start, stop) pair",
               "write (1, h - 1)");
        dims.push_back({a->args[0].get(), a->args[1].get(), nullptr});
      } else {
        dims.push_back({nullptr, a.get(), nullptr});
      }
    }
  } else {
    fail(it.loc, "the parallel loop must iterate over range(...) or tack.ndrange(...)",
         "write for i in range(n): or for i, j in tack.ndrange(h, w):");
  }
  if (!it.keywords.empty()) fail(it.loc, "range takes no keyword arguments");

  // The loop variables.
  std::vector<const ast::Expr*> targets;
  const ast::Expr& t = *s.targets[0];
  if (t.kind == ast::Expr::Kind::Tuple)
    for (const auto& x : t.args) targets.push_back(x.get());
  else
    targets.push_back(&t);
  if (targets.size() != dims.size())
    fail(t.loc,
         fmt::format("the loop has {} variable{} for {} dimension{}", targets.size(),
                     targets.size() == 1 ? "" : "s", dims.size(), dims.size() == 1 ? "" : "s"),
         dims.size() == 1 ? "write for i in range(n):"
                          : "write one name per dimension: for i, j in tack.ndrange(h, w):");

  for (size_t d = 0; d < dims.size(); ++d) {
    ir::LoopDim dim;
    SourceLoc loc = dims[d][1]->loc;
    dim.start = dims[d][0] ? host_bound(expr(*dims[d][0]), dims[d][0]->loc)
                           : ir::make_int(Type::i64(), 0, loc);
    dim.stop = host_bound(expr(*dims[d][1]), loc);
    if (dims[d][2]) {
      Value step = expr(*dims[d][2]);
      if (step.weak == Weak::Int && static_cast<int64_t>(step.e->int_bits) <= 0)
        fail(dims[d][2]->loc, "the parallel loop's step must be positive",
             "iterate upwards and compute the index: for k in range(n): i = n - 1 - k");
      dim.step = host_bound(std::move(step), dims[d][2]->loc);
    } else {
      dim.step = ir::make_int(Type::i64(), 1, loc);
    }
    if (targets[d]->kind != ast::Expr::Kind::Name)
      fail(targets[d]->loc, "a loop variable must be a name", "write for i in range(n):");
    if (is_local(targets[d]->name) || params_.count(targets[d]->name))
      fail(targets[d]->loc,
           fmt::format("the loop variable '{}' is already bound", targets[d]->name),
           "choose a fresh name for the loop variable");
    dim.var = new_local(targets[d]->name, Type::i64());
    k_.dims.push_back(std::move(dim));
  }
  // Locals bound before the loop that it assigns: a copy per iteration, or a reduction's lane.
  begin_loop_locals(k_.body, s.loc);
  // Local arrays declared before the loop are fresh (zero) in every iteration, as each iteration
  // is a thread of its own.
  for (int a : prelude_local_arrays_) zero_local_array(a, s.loc, k_.body);
  // `continue` directly in the parallel loop ends the iteration: the body goes into a one-pass
  // `while True: ...; break` and such a continue becomes its break.
  std::function<bool(const ast::Block&)> continues = [&](const ast::Block& b) {
    for (const auto& x : b)
      if (x->kind == K::Continue ||
          (x->kind == K::If && (continues(x->body) || continues(x->orelse))))
        return true;
    return false;
  };
  if (!continues(s.body)) {
    block(s.body, k_.body);
  } else {
    auto wrapper = std::make_unique<ir::Stmt>(ir::Stmt::Kind::While, s.loc);
    wrapper->cond = ir::make_bool(true, s.loc);
    iteration_depth_ = ++loop_depth_;
    block(s.body, wrapper->body);
    wrapper->body.push_back(std::make_unique<ir::Stmt>(ir::Stmt::Kind::Break, s.loc));
    --loop_depth_;
    iteration_depth_ = -1;
    k_.body.push_back(std::move(wrapper));
  }
  end_loop_locals(s.loc);
  if (!s.orelse.empty()) fail(s.loc, "for ... else is not supported", "remove the else block");
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
  if (target.kind != EK::Name)
    fail(target.loc, "only names, array elements and vector components can be assigned",
         "write x = ..., a[i] = ... or v.x = ...");
  const std::string& name = target.name;
  if (params_.count(name) && !is_local(name) && k_.params[params_[name]].is_local_array())
    fail(target.loc, fmt::format("'{}' is a local array and cannot be rebound", name),
         fmt::format("assign its elements: {}[k] = v", name));
  if (params_.count(name) && !is_local(name))
    fail(target.loc, fmt::format("cannot assign to the argument '{}'", name),
         fmt::format("assign to a new local instead, e.g. {}_local = ...", name));
  if (module_.lookup(name).kind == lang::Symbol::Kind::Constant && !is_local(name))
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
    if (params_.count(name))
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
      if (const ast::FunctionDef* f = called_func(*s.value)) {
        (void)inline_call(*f, *s.value);  // for its stores; results, if any, are dropped
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
        if (const ast::FunctionDef* f = called_func(*s.value)) {
          std::vector<Value> results = inline_call(*f, *s.value);
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
        if (params_.count(target.name))
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

std::vector<ArgType> parse_arg_types(const std::string& text) {
  std::vector<ArgType> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(',', pos);
    // Commas inside brackets belong to the rank: f32[,] has rank 2.
    size_t bracket = text.find('[', pos);
    if (bracket != std::string::npos && bracket < end) end = text.find(']', bracket) + 1;
    if (end == std::string::npos || end == 0) end = text.size();
    std::string item = text.substr(pos, end - pos);
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    size_t b = item.find('[');
    auto dt = dtype_from_name(item.substr(0, b));
    if (!dt)
      throw TypeError(fmt::format("'{}' is not an argument type: write f32, i64[], f32[,]", item));
    if (b == std::string::npos) {
      out.push_back(ArgType::scalar(*dt));
    } else {
      int rank = 1;
      for (size_t i = b; i < item.size(); ++i) rank += item[i] == ',';
      // A digit before the closing bracket gives the last extent of an array of vectors.
      size_t close = item.find(']', b);
      int lanes = close != std::string::npos && close > b + 1 && std::isdigit(item[close - 1])
                      ? item[close - 1] - '0'
                      : 0;
      if (lanes && (rank < 2 || lanes < 2 || lanes > 4))
        throw TypeError(
            fmt::format("'{}': only the last of two or more dimensions may be given, "
                        "as 2, 3 or 4: write f32[,3]",
                        item));
      out.push_back(ArgType::array(*dt, rank, lanes));
    }
    pos = end;
    if (pos < text.size() && text[pos] == ',') ++pos;
  }
  return out;
}

std::string to_string(std::span<const ArgType> args) {
  std::string s;
  for (const ArgType& a : args) {
    if (!s.empty()) s += ",";
    s += dtype_name(a.dtype);
    if (a.kind == ArgType::Kind::Array) {
      s += '[';
      s.append(a.rank - 1, ',');
      if (a.lanes) s += std::to_string(a.lanes);
      s += ']';
    }
  }
  return s;
}

ir::Kernel specialize(const lang::ResolvedModule& module, const std::string& kernel,
                      std::span<const ArgType> args, const TargetRules& target) {
  const ast::FunctionDef* def = module.function(kernel);
  if (!def || module.kind_of(*def) != lang::FunctionKind::Kernel) {
    std::string known;
    for (const auto& n : module.kernel_names()) known += (known.empty() ? "" : ", ") + n;
    throw TypeError(fmt::format("{} has no kernel named '{}' (kernels: {})", module.source().name(),
                                kernel, known.empty() ? "none" : known));
  }
  ir::Kernel k = Lowerer(module, *def, args, target).run();
  ir::fold_constants(k);
  ir::verify(k, "constant folding");
  return k;
}

}  // namespace tack::sema
