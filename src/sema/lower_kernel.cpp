// Lowering the kernel's structure: the prelude, the one parallel loop, the result.
#include <fmt/format.h>
#include <array>
#include <functional>
#include <set>

#include "ir/passes.hpp"
#include "ir/verifier.hpp"
#include "lang/diagnostics.hpp"
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
}

void Lowerer::check_no_workgroup_primitives() {
  if (target_.supports_workgroups) return;
  // Every mention counts, even in dead code, in the kernel and in every @tack.func it calls: the
  // kernel must be portable as written. A method call `x.f(...)` may call the method `f` of any
  // class whose objects the call passes, so all of those are looked at.
  std::vector<const lang::DeviceClass*> classes;
  std::vector<const FunctionRef*> stored;  // @tack.func functions in attributes
  std::function<void(const ArgType&)> reach = [&](const ArgType& t) {
    if (t.kind != ArgType::Kind::Object) return;
    classes.push_back(t.object->cls.get());
    for (const ObjectType::Attribute& a : t.object->attributes) {
      if (a.kind == ObjectType::Attribute::Kind::Function) stored.push_back(&a.function);
      if (a.kind == ObjectType::Attribute::Kind::Value) reach(a.type);
    }
  };
  for (const ArgType& a : args_) reach(a);
  std::set<std::string> found;
  SourceLoc first;
  const SourceFile* first_file = &module_.source();
  std::string first_func;  // the @tack.func of the first mention, or "" for the kernel
  std::set<const ast::FunctionDef*> visited;
  const ast::FunctionDef* current = nullptr;
  const lang::ResolvedModule* mod = &module_;
  std::function<void(const ast::Block&)> visit_block;
  auto visit_def = [&](const ast::FunctionDef* f, const lang::ResolvedModule* in) {
    if (!f || !visited.insert(f).second) return;
    const ast::FunctionDef* saved = current;
    const lang::ResolvedModule* saved_mod = mod;
    current = f;
    mod = in;
    visit_block(f->body);
    current = saved;
    mod = saved_mod;
  };
  auto visit_methods = [&](const std::string& name) {
    for (const lang::DeviceClass* c : classes)
      if (std::optional<lang::Method> m = c->method(name);
          m && (m->kind == lang::Method::Kind::Func || m->kind == lang::Method::Kind::Static))
        visit_def(m->def, m->module);
  };
  // A parameter's name always means the parameter, never what the module binds to that name; not
  // looking it up spares a call into the host language for each one (Python's resolver).
  const auto module_symbol = [&](const std::string& name) {
    for (const ast::Param& p : (current ? current : &def_)->params)
      if (p.name == name) return lang::Symbol{};
    return mod->lookup(name);
  };
  std::function<void(const ast::Expr&)> visit_expr = [&](const ast::Expr& e) {
    std::string name;
    if (e.kind == ast::Expr::Kind::Attribute && e.operand->kind == ast::Expr::Kind::Name &&
        module_symbol(e.operand->name).kind == lang::Symbol::Kind::TackModule) {
      name = e.name;
    } else if (e.kind == ast::Expr::Kind::Name) {
      if (lang::Symbol s = module_symbol(e.name); s.kind == lang::Symbol::Kind::TackMember)
        name = s.member;
    }
    if (workgroup_primitives().count(name)) {
      if (found.empty()) {
        first = e.loc;
        first_file = current ? &mod->source_of(*current) : &module_.source();
        first_func = current ? current->name : "";
      }
      found.insert("tack." + name);
    }
    if (e.kind == ast::Expr::Kind::Call && e.operand->kind == ast::Expr::Kind::Name) {
      lang::Symbol f = module_symbol(e.operand->name);
      if (f.kind == lang::Symbol::Kind::Function &&
          mod->kind_of(*f.function) == lang::FunctionKind::Func)
        visit_def(f.function, mod);
      if (e.operand->name == "len") visit_methods("__len__");
    }
    if (!classes.empty() && e.kind == ast::Expr::Kind::Call &&
        e.operand->kind == ast::Expr::Kind::Attribute)
      visit_methods(e.operand->name);
    if (!classes.empty() && e.kind == ast::Expr::Kind::Subscript) visit_methods("__getitem__");
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
  for (const FunctionRef* f : stored) visit_def(f->def, f->module.get());
  if (found.empty()) return;
  std::string names;
  for (const auto& n : found) names += (names.empty() ? "" : ", ") + n;
  throw_compile_error(
      *first_file, def_.name, first,
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
  // Arguments become parameters; an object's arrays and scalars do too (lower_object.cpp).
  for (size_t i = 0; i < args_.size(); ++i) {
    const ArgType& a = args_[i];
    const std::string& name = def_.params[i].name;
    if (a.kind == ArgType::Kind::Object) {
      object_names_[name] = bind_object(*a.object, name);
      continue;
    }
    Type t = a.kind == ArgType::Kind::Array ? Type::array(a.dtype, a.rank) : Type::scalar(a.dtype);
    k_.params.push_back({name, t, false});
    leaf_types_.push_back(&a);
    params_[name] = static_cast<int>(k_.params.size()) - 1;
  }
  for (const ArgType* a : leaf_types_)
    if (a->kind == ArgType::Kind::Array && a->dtype == DType::F64) float_type_ = DType::F64;

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

void Lowerer::range_loop(const ast::Stmt& s) {
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
    fail(it.loc,
         "the parallel loop must iterate over range(...), tack.ndrange(...) or an object whose "
         "class declares __tack_iterate__",
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
    if (is_local(targets[d]->name) || is_param(targets[d]->name))
      fail(targets[d]->loc,
           fmt::format("the loop variable '{}' is already bound", targets[d]->name),
           "choose a fresh name for the loop variable");
    dim.var = new_local(targets[d]->name, Type::i64());
    k_.dims.push_back(std::move(dim));
  }
}

void Lowerer::parallel_loop(const ast::Stmt& s) {
  k_.loop_loc = s.loc;
  if (int object = object_of(*s.iter); object >= 0)
    object_loop(object, s);  // for c in cells: over the class's __tack_iterate__
  else
    range_loop(s);
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

}  // namespace tack::sema
