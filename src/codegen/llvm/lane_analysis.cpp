#include "codegen/llvm/lane_analysis.hpp"

#include <fmt/format.h>

#include <span>

namespace tack::codegen {
namespace {

using ir::Op;
using Kind = ir::Stmt::Kind;

class Analyzer {
 public:
  explicit Analyzer(const ir::Kernel& k) : k_(k) { out_.varying_local.assign(k.locals.size(), 0); }

  LaneAnalysis run() {
    why_not();
    if (!out_.unsupported.empty()) return std::move(out_);
    out_.varying_local[k_.dims.back().var] = 1;
    // Each pass can only add varying locals and loops: a fixed point is reached.
    do {
      changed_ = false;
      block(k_.body, false);
    } while (changed_);
    gathers_in_loops(k_.body, false);
    return std::move(out_);
  }

 private:
  // ---- what the widened generator does not handle yet ----
  void why_not() {
    auto no = [&](std::string why) {
      if (out_.unsupported.empty()) out_.unsupported = std::move(why);
    };
    if (k_.dims.empty()) no("the kernel has no parallel loop");
    if (!k_.reductions.empty()) no("the kernel has a scalar reduction");
    if (k_.workgroup_size > 0 || k_.collectives) no("the kernel uses workgroups");
    if (k_.debug) no("debug mode checks every index in the order of the iterations");
    for (const ir::Param& p : k_.params)
      if (p.is_local_array()) no(fmt::format("'{}' is a local array (one per lane)", p.name));
    for (const ir::Local& l : k_.locals)
      if (!l.type.is_scalar()) no(fmt::format("the local '{}' is not a scalar", l.name));
    check(k_.body, no, false);
  }

  template <typename F>
  void check(const ir::Expr& e, const F& no) {
    if (e.checked) no(fmt::format("line {}: a checked index", e.loc.line));
    if (e.op == Op::ThreadId || e.op == Op::GroupId || e.op == Op::GroupSize ||
        e.op == Op::Collective)
      no("the kernel uses workgroups");
    if (!e.type.is_scalar())
      no(fmt::format("line {}: a value of type {}", e.loc.line, ir::to_string(e.type)));
    for (const auto& o : e.operands) check(*o, no);
  }

  template <typename F>
  void check(const ir::Block& b, const F& no, bool in_loop) {
    for (const auto& s : b) {
      if (s->kind == Kind::Barrier) no("the kernel uses workgroups");
      // A gang prints each statement's lines lane by lane: the lines keep the iterations' order
      // only when an iteration prints at most one line.
      if (s->kind == Kind::Print && (in_loop || ++prints_ > 1))
        no(fmt::format("line {}: more than one print per iteration (lines in iteration order)",
                       s->loc.line));
      if (s->checked) no(fmt::format("line {}: a checked index", s->loc.line));
      for (const ir::Expr* e :
           {s->value.get(), s->cond.get(), s->start.get(), s->stop.get(), s->step.get()})
        if (e) check(*e, no);
      for (const auto& e : s->indices) check(*e, no);
      bool loop = in_loop || s->kind == Kind::While || s->kind == Kind::For;
      check(s->body, no, loop);
      check(s->orelse, no, loop);
    }
  }

  // ---- where lanes would cost more than they give ----
  // An index that is not the innermost parallel variable plus or minus uniform values (the
  // contiguous form gang_codegen.cpp loads as one vector) makes a gather or scatter. In a loop,
  // where each lane then walks its own stretch of memory (a chunk of an array per lane, a row of
  // a sparse matrix), the scalar path, which walks one stretch at a time in order, is faster:
  // bench/compare's chunked sum took 1.8x as long in lanes.
  bool contiguous(const ir::Expr& e) const {
    if (e.op == Op::Local) return e.index == k_.dims.back().var;
    if (e.op == Op::Add)
      return (contiguous(*e.operands[0]) && !out_.varying(*e.operands[1])) ||
             (!out_.varying(*e.operands[0]) && contiguous(*e.operands[1]));
    if (e.op == Op::Sub) return contiguous(*e.operands[0]) && !out_.varying(*e.operands[1]);
    return false;
  }
  bool gather(std::span<const ir::ExprPtr> indices) const {
    bool varying = false;
    for (const auto& i : indices) varying = varying || out_.varying(*i);
    if (!varying) return false;
    for (size_t d = 0; d + 1 < indices.size(); ++d)
      if (out_.varying(*indices[d])) return true;
    return !contiguous(*indices.back());
  }
  void gathers_in_loops(const ir::Expr& e) {
    if (e.op == Op::Load && gather(e.operands))
      why(
          fmt::format("line {}: a gather in a loop (each lane would walk its own stretch of "
                      "memory)",
                      e.loc.line));
    for (const auto& o : e.operands) gathers_in_loops(*o);
  }
  void gathers_in_loops(const ir::Block& b, bool in_loop) {
    for (const auto& s : b) {
      bool loop = in_loop || s->kind == Kind::While || s->kind == Kind::For;
      if (in_loop) {
        if (s->kind == Kind::Store && gather(s->indices))
          why(
              fmt::format("line {}: a scatter in a loop (each lane would walk its own stretch "
                          "of memory)",
                          s->loc.line));
        for (const ir::Expr* e :
             {s->value.get(), s->cond.get(), s->start.get(), s->stop.get(), s->step.get()})
          if (e) gathers_in_loops(*e);
        for (const auto& e : s->indices) gathers_in_loops(*e);
      } else if (loop && s->cond) {
        gathers_in_loops(*s->cond);  // a while condition runs every round
      }
      gathers_in_loops(s->body, loop);
      gathers_in_loops(s->orelse, loop);
    }
  }
  void why(std::string reason) {
    if (out_.unsupported.empty()) out_.unsupported = std::move(reason);
  }

  // ---- varying values ----
  void mark_local(int id) {
    if (!out_.varying_local[id]) {
      out_.varying_local[id] = 1;
      changed_ = true;
    }
  }

  void mark_loop(const ir::Stmt& s) {
    if (out_.varying_loops.insert(&s).second) changed_ = true;
  }

  // A break or continue of this loop (not of a loop inside it) under a varying `if`.
  bool varying_exit(const ir::Block& b, bool under_varying_if) const {
    for (const auto& s : b) {
      switch (s->kind) {
        case Kind::Break:
        case Kind::Continue:
          if (under_varying_if) return true;
          break;
        case Kind::If: {
          bool v = under_varying_if || out_.varying(*s->cond);
          if (varying_exit(s->body, v) || varying_exit(s->orelse, v)) return true;
          break;
        }
        default:
          break;
      }
    }
    return false;
  }

  void block(const ir::Block& b, bool varying_control) {
    for (const auto& s : b) stmt(*s, varying_control);
  }

  void stmt(const ir::Stmt& s, bool vc) {
    switch (s.kind) {
      case Kind::Assign:
        if (vc || out_.varying(*s.value)) mark_local(s.index);
        return;
      case Kind::If: {
        bool v = vc || out_.varying(*s.cond);
        block(s.body, v);
        block(s.orelse, v);
        return;
      }
      case Kind::While:
        if (out_.varying(*s.cond) || varying_exit(s.body, false)) mark_loop(s);
        block(s.body, vc || out_.varying_loop(s));
        return;
      case Kind::For:
        if (out_.varying(*s.start) || out_.varying(*s.stop) || out_.varying(*s.step) ||
            varying_exit(s.body, false))
          mark_loop(s);
        if (vc || out_.varying_loop(s)) mark_local(s.index);
        block(s.body, vc || out_.varying_loop(s));
        return;
      default:
        return;
    }
  }

  const ir::Kernel& k_;
  LaneAnalysis out_;
  bool changed_ = false;
  int prints_ = 0;
};

}  // namespace

bool LaneAnalysis::varying(const ir::Expr& e) const {
  if (e.op == Op::Local) return varying_local[e.index] != 0;
  // Each lane's atomic operation returns its own old value.
  if (e.op == Op::Atomic) return true;
  for (const auto& o : e.operands)
    if (varying(*o)) return true;
  return false;
}

LaneAnalysis analyze_lanes(const ir::Kernel& k) {
  return Analyzer(k).run();
}

}  // namespace tack::codegen
