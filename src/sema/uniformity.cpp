// The uniformity analysis of the workgroup contract (spec language.md): a collective (a barrier
// or a block collective) must be reached by every lane of its group, the same number of times.
// The analysis is conservative: it rejects what it cannot prove uniform.
//
// A value is lane-dependent when it may differ between the lanes of one group. Lane-dependent
// are: the parallel loop's variables, tack.thread_id(), every array load (shared arrays
// included), atomics' results, block_scan's result, and any local assigned, anywhere in the
// kernel, from a lane-dependent value or under lane-dependent control (tack.random states seeded
// from the index are locals of this kind). Locals are tracked flow-insensitively: one
// lane-dependent assignment makes every use of the local lane-dependent. Uniform are constants,
// scalar parameters, array extents, tack.group_id(), tack.group_size() and the results of
// block_sum/min/max.
//
// Control is lane-dependent inside an `if` or `while` whose condition is lane-dependent, inside
// a `for` whose bounds are, and in the whole body of a loop that a lane-dependent `break` or
// `continue` may leave early (a `return` from a @tack.func is such a break). A collective there
// is rejected, as is a collective in one arm of a conditional expression (`a if c else b`,
// tack.select), in the second operand of `and`/`or`, or in a `while` condition
// (lower_stmt.cpp checks that one, before the condition is rewritten), whatever the condition.
#include <fmt/format.h>

#include <optional>
#include <set>

#include "ir/passes.hpp"
#include "sema/lowerer.hpp"

namespace tack::sema {
namespace {

using ir::Op;
using SK = ir::Stmt::Kind;

class Uniformity {
 public:
  explicit Uniformity(const ir::Kernel& k) : k_(k) {
    for (const ir::LoopDim& d : k.dims) varying_.insert(d.var);
    // Iterate to a fixed point: a local found lane-dependent may make others so.
    for (size_t before = SIZE_MAX; before != varying_.size();) {
      before = varying_.size();
      taint(k.prelude, false);
      taint(k.body, false);
    }
  }

  bool varies(const ir::Expr& e) const {
    switch (e.op) {
      case Op::Load:
      case Op::Atomic:
      case Op::ThreadId:
        return true;
      case Op::Local:
        return varying_.count(e.index) > 0;
      case Op::Collective:
        return e.collective == ir::Collective::Scan;
      default:
        break;
    }
    for (const auto& o : e.operands)
      if (varies(*o)) return true;
    return false;
  }

  // The first break or continue that leaves the loop with body `b` early under lane-dependent
  // control, or nothing. Breaks of nested loops leave only those.
  std::optional<SourceLoc> divergent_exit(const ir::Block& b, bool control) const {
    for (const auto& s : b) {
      switch (s->kind) {
        case SK::Break:
        case SK::Continue:
          if (control) return s->loc;
          break;
        case SK::If: {
          bool c = control || varies(*s->cond);
          if (auto l = divergent_exit(s->body, c)) return l;
          if (auto l = divergent_exit(s->orelse, c)) return l;
          break;
        }
        default:
          break;
      }
    }
    return std::nullopt;
  }

  // Why code in the body of loop `s` runs under lane-dependent control, or "".
  std::string loop_divergence(const ir::Stmt& s) const {
    if (s.kind == SK::While && varies(*s.cond))
      return fmt::format("in a while loop whose condition depends on the lane (line {})",
                         s.loc.line);
    if (s.kind == SK::For && (varies(*s.start) || varies(*s.stop) || varies(*s.step)))
      return fmt::format("in a loop whose bounds depend on the lane (line {})", s.loc.line);
    if (auto l = divergent_exit(s.body, false))
      return fmt::format(
          "in a loop that a break, continue or return under a lane-dependent condition (line "
          "{}) may leave early for some lanes only",
          l->line);
    return "";
  }

  const ir::Kernel& k_;
  std::set<int> varying_;

 private:
  void taint(const ir::Block& b, bool control) {
    for (const auto& s : b) {
      switch (s->kind) {
        case SK::Assign:
          if (control || varies(*s->value)) varying_.insert(s->index);
          break;
        case SK::If: {
          bool c = control || varies(*s->cond);
          taint(s->body, c);
          taint(s->orelse, c);
          break;
        }
        case SK::While:
        case SK::For: {
          bool c = control || !loop_divergence(*s).empty();
          if (s->kind == SK::For && c) varying_.insert(s->index);
          taint(s->body, c);
          break;
        }
        default:
          break;
      }
    }
  }
};

}  // namespace

void Lowerer::check_uniform_collectives() const {
  if (!k_.collectives) return;
  Uniformity u(k_);
  auto what = [](const ir::Expr& e) {
    return fmt::format("tack.block_{}()", ir::collective_name(e.collective));
  };
  const char* hint =
      "every lane of a group must reach each collective: compute the condition's inputs with "
      "collectives first (they give every lane the same value), or move the collective out of "
      "the condition and keep only its use inside";
  // `where` says why this expression is not reached by every lane ("" when it is).
  std::function<void(const ir::Expr&, const std::string&)> check_expr =
      [&](const ir::Expr& e, const std::string& where) {
        if (e.op == Op::Collective && !where.empty())
          fail(e.loc, fmt::format("{} is {}", what(e), where), hint);
        if (e.op == Op::Select) {
          check_expr(*e.operands[0], where);
          for (int i : {1, 2})
            check_expr(*e.operands[i], where.empty()
                                           ? "in one arm of a conditional expression, which "
                                             "only some lanes may evaluate"
                                           : where);
          return;
        }
        if (e.op == Op::LogicalAnd || e.op == Op::LogicalOr) {
          check_expr(*e.operands[0], where);
          check_expr(*e.operands[1], where.empty()
                                         ? "in the second operand of and/or, which only some lanes "
                                           "may evaluate"
                                         : where);
          return;
        }
        for (const auto& o : e.operands) check_expr(*o, where);
      };
  std::function<void(const ir::Block&, const std::string&)> check_block =
      [&](const ir::Block& b, const std::string& where) {
        for (const auto& s : b) {
          for (const ir::Expr* e :
               {s->value.get(), s->cond.get(), s->start.get(), s->stop.get(), s->step.get()})
            if (e) check_expr(*e, where);
          for (const auto& i : s->indices) check_expr(*i, where);
          switch (s->kind) {
            case SK::Barrier:
              if (!where.empty()) fail(s->loc, fmt::format("tack.barrier() is {}", where), hint);
              break;
            case SK::If: {
              std::string w = where;
              if (w.empty() && u.varies(*s->cond))
                w = fmt::format("under a condition that depends on the lane (line {})",
                                s->loc.line);
              check_block(s->body, w);
              check_block(s->orelse, w);
              break;
            }
            case SK::While:
            case SK::For: {
              std::string w = where.empty() ? u.loop_divergence(*s) : where;
              check_block(s->body, w);
              break;
            }
            default:
              break;
          }
        }
      };
  check_block(k_.prelude, "");
  check_block(k_.body, "");
}

}  // namespace tack::sema
