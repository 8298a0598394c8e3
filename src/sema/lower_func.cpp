// Inlining @tack.func device functions at each call site.
//
// A call becomes the function's body inside a one-pass `while True:` wrapper: `return v` assigns
// the result locals, sets a `done` flag and breaks out; a return from inside one of the function's
// own loops breaks that loop, and the statement after the loop leaves the wrapper when `done` is
// set. Scalars are passed by value (a fresh local per parameter), arrays by reference (the
// parameter names the caller's array), so a function can store into an array it is given.
#include <fmt/format.h>

#include "sema/lowerer.hpp"

namespace tack::sema {

using ir::Type;

std::vector<Value> Lowerer::inline_call(const ast::FunctionDef& f, const ast::Expr& call) {
  for (const InlineFrame& frame : inline_stack_)
    if (frame.def == &f)
      fail(
          call.loc,
          fmt::format("'{}' calls itself; device functions are inlined and cannot recurse", f.name),
          "rewrite the recursion as a loop");
  if (inline_stack_.size() >= kMaxInlineDepth)
    fail(call.loc,
         fmt::format("more than {} @tack.func calls inside each other: each call is inlined into "
                     "its caller, and the chain is too long to compile",
                     kMaxInlineDepth),
         "call the functions one after another from the kernel, passing results through "
         "variables, or merge some of them into one function");
  if (!call.keywords.empty())
    fail(call.keywords[0].loc, fmt::format("{}() takes its arguments by position", f.name),
         "pass the arguments in order");
  if (call.args.size() != f.params.size())
    fail(call.loc,
         fmt::format("{}() takes {} argument{}, not {}", f.name, f.params.size(),
                     f.params.size() == 1 ? "" : "s", call.args.size()),
         "pass one value per parameter");
  if (!block_)
    fail(call.loc, "a device function cannot be called here", "call it inside the kernel's body");
  ir::Block& out = *block_;

  // Arguments are evaluated in the caller's scope, left to right, before the body runs.
  std::map<std::string, int> callee_params;
  std::vector<std::pair<std::string, Value>> scalars;
  for (size_t i = 0; i < call.args.size(); ++i) {
    const ast::Expr& a = *call.args[i];
    int array = array_param(a);
    if (array >= 0) {
      callee_params[f.params[i].name] = array;
      continue;
    }
    scalars.emplace_back(f.params[i].name, expr(a));
  }

  // The callee's scope: its parameters and its own locals, nothing of the caller's.
  auto saved_locals = std::move(locals_);
  auto saved_composites = std::move(composites_);
  auto saved_params = std::move(params_);
  locals_.clear();
  composites_.clear();
  params_ = std::move(callee_params);
  InlineFrame frame{&f, &module_.source_of(f), 0, -1, {}, 0};
  for (auto& [name, value] : scalars) {
    std::vector<ir::ExprPtr> parts;
    if (value.is_composite())
      parts = std::move(value.comps);
    else
      parts.push_back(materialize(std::move(value)));
    CompositeLocal c{{}, value.rows, value.cols};
    for (size_t k = 0; k < parts.size(); ++k) {
      std::string local = value.is_composite() ? fmt::format("{}.{}.{}", f.name, name, k)
                                               : fmt::format("{}.{}", f.name, name);
      k_.locals.push_back({local, parts[k]->type});
      c.ids.push_back(static_cast<int>(k_.locals.size()) - 1);
      out.push_back(ir::make_assign(c.ids.back(), std::move(parts[k]), call.loc));
    }
    if (value.is_composite())
      composites_[name] = std::move(c);
    else
      locals_[name] = c.ids[0];
  }
  k_.locals.push_back({fmt::format("{}.done", f.name), Type::bool_()});
  frame.done = static_cast<int>(k_.locals.size()) - 1;
  out.push_back(ir::make_assign(frame.done, ir::make_bool(false, call.loc), call.loc));

  auto wrapper = std::make_unique<ir::Stmt>(ir::Stmt::Kind::While, call.loc);
  wrapper->cond = ir::make_bool(true, call.loc);
  ++loop_depth_;
  frame.body_depth = loop_depth_;
  inline_stack_.push_back(frame);
  Phase saved_phase = phase_;
  if (phase_ == Phase::AfterLoop) phase_ = Phase::Prelude;  // a result computation stores nothing
  block(f.body, wrapper->body);
  phase_ = saved_phase;
  wrapper->body.push_back(std::make_unique<ir::Stmt>(ir::Stmt::Kind::Break, call.loc));
  frame = inline_stack_.back();
  inline_stack_.pop_back();
  --loop_depth_;
  out.push_back(std::move(wrapper));
  locals_ = std::move(saved_locals);
  composites_ = std::move(saved_composites);
  params_ = std::move(saved_params);

  std::vector<Value> results;
  for (const CompositeLocal& r : frame.results) {
    std::vector<ir::ExprPtr> comps;
    for (int id : r.ids) comps.push_back(ir::make_local(id, k_.locals[id].type, call.loc));
    results.push_back(r.rows ? Value::composite(std::move(comps), r.rows, r.cols)
                             : Value{std::move(comps[0])});
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
