// Inlining @tack.func device functions at each call site.
//
// A call becomes the function's body inside a one-pass `while True:` wrapper: `return v` assigns
// the result locals, sets a `done` flag and breaks out; a return from inside one of the function's
// own loops breaks that loop, and the statement after the loop leaves the wrapper when `done` is
// set. Scalars are passed by value (a fresh local per parameter), arrays by reference (the
// parameter names the caller's array), so a function can store into an array it is given.
#include <fmt/format.h>

#include <functional>

#include "sema/lowerer.hpp"

namespace tack::sema {

using ir::Type;

std::vector<const ast::Expr*> Lowerer::call_args(const ast::Expr& call, const Callee& f) const {
  if (!call.keywords.empty())
    fail(call.keywords[0].loc, fmt::format("{}() takes its arguments by position", f.name),
         "pass the arguments in order");
  std::vector<const ast::Expr*> args;
  for (const auto& a : call.args) args.push_back(a.get());
  return args;
}

Value Lowerer::call_value(const Callee& f, const std::vector<const ast::Expr*>& args,
                          SourceLoc loc) {
  std::vector<Value> results = inline_call(f, args, loc);
  if (results.size() != 1)
    fail(loc,
         results.empty()
             ? fmt::format("'{}' returns no value", f.name)
             : fmt::format("'{}' returns {} values; unpack them", f.name, results.size()),
         results.empty() ? "call it as a statement, or return a value from it"
                         : "write a, b = f(...)");
  return std::move(results[0]);
}

std::vector<Value> Lowerer::inline_call(const Callee& c, const std::vector<const ast::Expr*>& args,
                                        SourceLoc loc) {
  const ast::FunctionDef& f = *c.def;
  for (const InlineFrame& frame : inline_stack_)
    if (frame.def == &f)
      fail(
          loc,
          fmt::format("'{}' calls itself; device functions are inlined and cannot recurse", c.name),
          "rewrite the recursion as a loop");
  if (inline_stack_.size() >= kMaxInlineDepth)
    fail(loc,
         fmt::format("more than {} @tack.func calls inside each other: each call is inlined into "
                     "its caller, and the chain is too long to compile",
                     kMaxInlineDepth),
         "call the functions one after another from the kernel, passing results through "
         "variables, or merge some of them into one function");
  size_t first = c.self >= 0 ? 1 : 0;  // a method's first parameter is its object
  if (args.size() + first != f.params.size())
    fail(loc,
         fmt::format("{}() takes {} argument{}{}, not {}", c.name, f.params.size() - first,
                     f.params.size() - first == 1 ? "" : "s",
                     first ? fmt::format(" besides '{}'", f.params[0].name) : "", args.size()),
         "pass one value per parameter");
  if (!block_) return inline_as_expression(c, args, loc);
  ir::Block& out = *block_;

  // Arguments are evaluated in the caller's scope, left to right, before the body runs. Arrays
  // and objects are passed by reference.
  std::map<std::string, int> callee_params;
  std::map<std::string, int> callee_objects;
  if (c.self >= 0) callee_objects[f.params[0].name] = c.self;
  std::vector<std::pair<std::string, Value>> scalars;
  for (size_t i = 0; i < args.size(); ++i) {
    const ast::Expr& a = *args[i];
    const std::string& param = f.params[i + first].name;
    if (int array = array_param(a); array >= 0) {
      callee_params[param] = array;
      continue;
    }
    if (int object = object_of(a); object >= 0) {
      callee_objects[param] = object;
      continue;
    }
    scalars.emplace_back(param, expr(a));
  }

  // The callee's scope: its parameters and its own locals, nothing of the caller's.
  auto saved_locals = std::move(locals_);
  auto saved_composites = std::move(composites_);
  auto saved_params = std::move(params_);
  auto saved_objects = std::move(object_names_);
  locals_.clear();
  composites_.clear();
  params_ = std::move(callee_params);
  object_names_ = std::move(callee_objects);
  InlineFrame frame{&f, c.module, c.name, &c.module->source_of(f), 0, -1, {}, 0};
  for (auto& [name, value] : scalars) {
    std::vector<ir::ExprPtr> parts;
    if (value.is_composite())
      parts = std::move(value.comps);
    else
      parts.push_back(materialize(std::move(value)));
    CompositeLocal local{{}, value.rows, value.cols};
    for (size_t k = 0; k < parts.size(); ++k) {
      std::string local_name = value.is_composite() ? fmt::format("{}.{}.{}", f.name, name, k)
                                                    : fmt::format("{}.{}", f.name, name);
      k_.locals.push_back({local_name, parts[k]->type});
      local.ids.push_back(static_cast<int>(k_.locals.size()) - 1);
      out.push_back(ir::make_assign(local.ids.back(), std::move(parts[k]), loc));
    }
    if (value.is_composite())
      composites_[name] = std::move(local);
    else
      locals_[name] = local.ids[0];
  }
  k_.locals.push_back({fmt::format("{}.done", f.name), Type::bool_()});
  frame.done = static_cast<int>(k_.locals.size()) - 1;
  out.push_back(ir::make_assign(frame.done, ir::make_bool(false, loc), loc));

  auto wrapper = std::make_unique<ir::Stmt>(ir::Stmt::Kind::While, loc);
  wrapper->cond = ir::make_bool(true, loc);
  ++loop_depth_;
  frame.body_depth = loop_depth_;
  inline_stack_.push_back(frame);
  Phase saved_phase = phase_;
  if (phase_ == Phase::AfterLoop) phase_ = Phase::Prelude;  // a result computation stores nothing
  block(f.body, wrapper->body);
  phase_ = saved_phase;
  wrapper->body.push_back(std::make_unique<ir::Stmt>(ir::Stmt::Kind::Break, loc));
  frame = inline_stack_.back();
  inline_stack_.pop_back();
  --loop_depth_;
  out.push_back(std::move(wrapper));
  locals_ = std::move(saved_locals);
  composites_ = std::move(saved_composites);
  params_ = std::move(saved_params);
  object_names_ = std::move(saved_objects);

  std::vector<Value> results;
  for (const CompositeLocal& r : frame.results) {
    std::vector<ir::ExprPtr> comps;
    for (int id : r.ids) comps.push_back(ir::make_local(id, k_.locals[id].type, loc));
    results.push_back(r.rows ? Value::composite(std::move(comps), r.rows, r.cols)
                             : Value{std::move(comps[0])});
  }
  return results;
}

// Where no statement can go (the parallel loop's bounds, computed on the host), a call whose
// inlined code is straight-line assignments (`return len(self.data)`) becomes its result's
// expression, the locals substituted by their values.
std::vector<Value> Lowerer::inline_as_expression(const Callee& c,
                                                 const std::vector<const ast::Expr*>& args,
                                                 SourceLoc loc) {
  ir::Block code;
  std::vector<Value> results = [&] {
    block_ = &code;
    struct Reset {
      ir::Block*& b;
      ~Reset() { b = nullptr; }
    } reset{block_};
    return inline_call(c, args, loc);
  }();
  auto refuse = [&] {
    fail(loc,
         fmt::format("'{}' cannot be called here: its code is more than one expression", c.name),
         "compute the value before the loop, or pass it as an argument");
  };
  std::map<int, ir::ExprPtr> values;
  std::function<ir::ExprPtr(const ir::Expr&)> substitute = [&](const ir::Expr& e) {
    if (e.op == ir::Op::Local) {
      auto it = values.find(e.index);
      if (it == values.end()) refuse();
      return ir::make_cast(it->second->clone(), e.type);
    }
    ir::ExprPtr out = e.clone();
    for (auto& o : out->operands) o = substitute(*o);
    return out;
  };
  std::function<bool(const ir::Block&)> run = [&](const ir::Block& b) {
    for (const auto& s : b) {
      if (s->kind == ir::Stmt::Kind::Break) return true;
      if (s->kind == ir::Stmt::Kind::Assign)
        values[s->index] = substitute(*s->value);
      else if (s->kind != ir::Stmt::Kind::While || s->cond->op != ir::Op::Const || !run(s->body))
        refuse();  // only the one-pass wrapper of an inlined body
    }
    return false;
  };
  if (run(code)) refuse();
  for (Value& v : results) {
    if (v.is_composite())
      for (auto& part : v.comps) part = substitute(*part);
    else
      v.e = substitute(*v.e);
  }
  return results;
}

void Lowerer::return_from_function(const ast::Stmt& s, ir::Block& out) {
  // The frame is found by position, and only after the values are lowered: a value that calls
  // another @tack.func pushes that function's frame, which may reallocate inline_stack_.
  const size_t depth = inline_stack_.size() - 1;
  std::vector<const ast::Expr*> values;
  if (s.value) {
    if (s.value->kind == ast::Expr::Kind::Tuple)
      for (const auto& v : s.value->args) values.push_back(v.get());
    else
      values.push_back(s.value.get());
  }
  if (inline_stack_[depth].returns > 0 && values.size() != inline_stack_[depth].results.size())
    fail(s.loc,
         fmt::format("this return gives {} value{}, an earlier one {}", values.size(),
                     values.size() == 1 ? "" : "s", inline_stack_[depth].results.size()),
         "return the same number of values everywhere");
  // All values first, then the assignments, as with tuple assignment.
  std::vector<Value> lowered;
  for (const ast::Expr* v : values) lowered.push_back(expr(*v));
  InlineFrame& frame = inline_stack_[depth];
  for (size_t i = 0; i < lowered.size(); ++i) {
    Value& v = lowered[i];
    std::vector<ir::ExprPtr> parts;
    if (v.is_composite())
      parts = std::move(v.comps);
    else
      parts.push_back(frame.returns == 0 ? materialize(std::move(v)) : nullptr);
    if (frame.returns == 0) {
      CompositeLocal r{{}, v.rows, v.cols};
      for (size_t k = 0; k < parts.size(); ++k) {
        k_.locals.push_back({fmt::format("{}.result{}.{}", frame.def->name, i, k), parts[k]->type});
        r.ids.push_back(static_cast<int>(k_.locals.size()) - 1);
        out.push_back(ir::make_assign(r.ids.back(), std::move(parts[k]), s.loc));
      }
      frame.results.push_back(std::move(r));
      continue;
    }
    const CompositeLocal& r = frame.results[i];
    if (r.rows != v.rows || r.cols != v.cols)
      fail(values[i]->loc,
           fmt::format("this return gives {} where an earlier one gave {}", v.type_name(),
                       r.rows ? fmt::format("a value of {} components", r.rows * r.cols)
                              : std::string(dtype_name(k_.locals[r.ids[0]].type.dtype))),
           "return values of one shape everywhere");
    for (size_t k = 0; k < r.ids.size(); ++k) {
      Value part = v.is_composite() ? Value{std::move(parts[k])} : std::move(v);
      out.push_back(ir::make_assign(
          r.ids[k], convert_for_local(std::move(part), k_.locals[r.ids[k]], values[i]->loc),
          s.loc));
    }
  }
  ++frame.returns;
  out.push_back(ir::make_assign(frame.done, ir::make_bool(true, s.loc), s.loc));
  out.push_back(std::make_unique<ir::Stmt>(ir::Stmt::Kind::Break, s.loc));
}

void Lowerer::propagate_return(ir::Block& out) {
  if (inline_stack_.empty()) return;
  const InlineFrame& frame = inline_stack_.back();
  auto leave = std::make_unique<ir::Stmt>(ir::Stmt::Kind::If, SourceLoc{});
  leave->cond = ir::make_local(frame.done, Type::bool_());
  leave->body.push_back(std::make_unique<ir::Stmt>(ir::Stmt::Kind::Break, SourceLoc{}));
  out.push_back(std::move(leave));
}

}  // namespace tack::sema
