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
  auto saved_params = std::move(params_);
  locals_.clear();
  params_ = std::move(callee_params);
  InlineFrame frame{&f, &module_.source_of(f), 0, -1, {}, 0};
  for (auto& [name, value] : scalars) {
    ir::ExprPtr e = materialize(std::move(value));
    k_.locals.push_back({fmt::format("{}.{}", f.name, name), e->type});
    int id = static_cast<int>(k_.locals.size()) - 1;
    locals_[name] = id;
    out.push_back(ir::make_assign(id, std::move(e), call.loc));
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
  params_ = std::move(saved_params);

  std::vector<Value> results;
  for (int r : frame.results) results.push_back({ir::make_local(r, k_.locals[r].type, call.loc)});
  return results;
}

void Lowerer::return_from_function(const ast::Stmt& s, ir::Block& out) {
  InlineFrame& frame = inline_stack_.back();
  std::vector<const ast::Expr*> values;
  if (s.value) {
    if (s.value->kind == ast::Expr::Kind::Tuple)
      for (const auto& v : s.value->args) values.push_back(v.get());
    else
      values.push_back(s.value.get());
  }
  if (frame.returns > 0 && values.size() != frame.results.size())
    fail(s.loc,
         fmt::format("this return gives {} value{}, an earlier one {}", values.size(),
                     values.size() == 1 ? "" : "s", frame.results.size()),
         "return the same number of values everywhere");
  // All values first, then the assignments, as with tuple assignment.
  std::vector<Value> lowered;
  for (const ast::Expr* v : values) lowered.push_back(expr(*v));
  for (size_t i = 0; i < lowered.size(); ++i) {
    if (frame.returns == 0) {
      ir::ExprPtr e = materialize(std::move(lowered[i]));
      k_.locals.push_back({fmt::format("{}.result{}", frame.def->name, i), e->type});
      frame.results.push_back(static_cast<int>(k_.locals.size()) - 1);
      out.push_back(ir::make_assign(frame.results.back(), std::move(e), s.loc));
    } else {
      int r = frame.results[i];
      out.push_back(ir::make_assign(
          r, convert_for_local(std::move(lowered[i]), k_.locals[r], values[i]->loc), s.loc));
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
