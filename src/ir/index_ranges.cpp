#include "ir/index_ranges.hpp"

#include <map>
#include <memory>
#include <optional>

#include "ir/builder.hpp"
#include "ir/passes.hpp"
#include "ir/verifier.hpp"

namespace tack::ir {

Linear Linear::clone() const {
  Linear out;
  out.offset = offset->clone();
  for (const Term& t : terms) out.terms.push_back({t.var, t.coef->clone()});
  return out;
}

namespace {

AffineIndex clone(const AffineIndex& a) {
  AffineIndex out;
  out.value = a.value.clone();
  for (const auto& f : a.fits) out.fits.push_back({f.value.clone(), f.type});
  return out;
}

// Whether `b` may leave the loop that directly encloses it (a `break` outside nested loops).
bool may_break(const Block& b) {
  for (const auto& s : b) {
    if (s->kind == Stmt::Kind::Break) return true;
    if (s->kind == Stmt::Kind::If && (may_break(s->body) || may_break(s->orelse))) return true;
  }
  return false;
}

// Index expressions are small; a deeper one (a generated or adversarial kernel) is left
// unchecked rather than analysed in time quadratic in its depth, or with deep recursion.
constexpr int kMaxDepth = 32;

bool shallow(const Expr& e, int depth = 0) {
  if (depth > kMaxDepth) return false;
  for (const auto& o : e.operands)
    if (!shallow(*o, depth + 1)) return false;
  return true;
}

void count_assignments(const Block& b, std::vector<int>& count, size_t from = 0) {
  for (size_t i = from; i < b.size(); ++i) {
    const Stmt* s = b[i].get();
    if ((s->kind == Stmt::Kind::Assign || s->kind == Stmt::Kind::For) && s->index >= 0)
      ++count[static_cast<size_t>(s->index)];
    count_assignments(s->body, count);
    count_assignments(s->orelse, count);
  }
}

// Operations on constants folded, so that a launch evaluates most offsets and coefficients
// without walking an expression.
ExprPtr folded(ExprPtr e) {
  for (const auto& o : e->operands)
    if (!is_const(*o) || !o->type.is_int()) return e;
  if (!e->type.is_int() || e->operands.empty()) return e;
  const auto& ops = e->operands;
  if (e->op == Op::Cast) return make_int(e->type, ops[0]->int_bits, e->loc);
  if (e->op == Op::Neg) return make_int(e->type, 0 - ops[0]->int_bits, e->loc);
  if (ops.size() == 2)
    if (auto v = fold_int_binary(e->op, e->type.dtype, ops[0]->int_bits, ops[1]->int_bits))
      return make_int(e->type, *v, e->loc);
  return e;
}

ExprPtr negated(ExprPtr e) {
  SourceLoc loc = e->loc;
  return folded(make_unary(Op::Neg, std::move(e), loc));
}

ExprPtr cast_to(ExprPtr e, Type t) {
  return folded(make_cast(std::move(e), t));
}

class Prover {
 public:
  explicit Prover(const Kernel& k) : k_(k), assignments_(k.locals.size(), 0) {}

  IndexProof run() {
    count_assignments(k_.prelude, assignments_);
    // Sema starts each iteration by zeroing the locals the body binds (docs/language.md,
    // "Locals"). Those constant stores come before every other statement, and a local is followed
    // only from the statement that binds it, so they do not count as a second assignment.
    size_t first = 0;
    while (first < k_.body.size() && k_.body[first]->kind == Stmt::Kind::Assign &&
           is_const(*k_.body[first]->value))
      ++first;
    count_assignments(k_.body, assignments_, first);
    // Locals the prelude binds once to a host value are that value wherever they are read.
    for (const auto& s : k_.prelude)
      if (s->kind == Stmt::Kind::Assign && assigned_once(s->index) && shallow(*s->value))
        if (ExprPtr h = host_clone(*s->value)) host_locals_[s->index] = std::move(h);
    for (size_t d = 0; d < k_.dims.size(); ++d) {
      int var = k_.dims[d].var;
      if (assignments_[static_cast<size_t>(var)] != 0) continue;  // reassigned in the body
      RangedVar r;
      r.local = var;
      r.parallel_dim = static_cast<int>(d);
      known_[var] = Known{add_var(std::move(r)), nullptr};
    }
    block(k_.body, true);
    return std::move(proof_);
  }

 private:
  // What a local read in the body stands for: a ranged loop variable, or an affine value.
  struct Known {
    int var = -1;
    std::shared_ptr<const AffineIndex> value;
  };

  bool assigned_once(int local) const {
    return local >= 0 && assignments_[static_cast<size_t>(local)] == 1;
  }

  int add_var(RangedVar r) {
    proof_.vars.push_back(std::move(r));
    return static_cast<int>(proof_.vars.size()) - 1;
  }

  // `e` as a host expression (prelude locals replaced by their values), or null.
  ExprPtr host_clone(const Expr& e) const {
    if (e.op == Op::Local) {
      auto it = host_locals_.find(e.index);
      return it == host_locals_.end() ? nullptr : cast_to(it->second->clone(), e.type);
    }
    if (e.op == Op::Load || e.op == Op::Atomic || e.op == Op::Call || e.op == Op::TextureSample)
      return nullptr;
    auto out = std::make_unique<Expr>(e.op, e.type, e.loc);
    out->index = e.index;
    out->dim = e.dim;
    out->int_bits = e.int_bits;
    for (const auto& o : e.operands) {
      ExprPtr c = host_clone(*o);
      if (!c) return nullptr;
      out->operands.push_back(std::move(c));
    }
    return is_host_expr(*out) ? folded(std::move(out)) : nullptr;
  }

  static ExprPtr combine(Op op, const ExprPtr& a, const ExprPtr& b) {
    return folded(make_binary(op, a->clone(), b->clone(), a->loc));
  }

  // `e` as offset + sum(coef * var), or nothing when it is not affine in known variables.
  std::optional<AffineIndex> affine(const Expr& e) const {
    if (!e.type.is_int()) return std::nullopt;
    if (ExprPtr h = host_clone(e)) return AffineIndex{Linear{std::move(h), {}}, {}};
    switch (e.op) {
      case Op::Local: {
        auto it = known_.find(e.index);
        if (it == known_.end()) return std::nullopt;
        if (it->second.value) return clone(*it->second.value);
        AffineIndex a;
        a.value.offset = make_int(e.type, 0, e.loc);
        a.value.terms.push_back({it->second.var, make_int(e.type, 1, e.loc)});
        return a;
      }
      case Op::Add:
      case Op::Sub: {
        auto a = affine(*e.operands[0]);
        auto b = a ? affine(*e.operands[1]) : std::nullopt;
        if (!b) return std::nullopt;
        a->value.offset = combine(e.op, a->value.offset, b->value.offset);
        for (auto& t : b->value.terms) {
          ExprPtr coef = e.op == Op::Sub ? negated(std::move(t.coef)) : std::move(t.coef);
          add_term(a->value, t.var, std::move(coef));
        }
        for (auto& f : b->fits) a->fits.push_back(std::move(f));
        return a;
      }
      case Op::Mul: {
        auto a = affine(*e.operands[0]);
        auto b = a ? affine(*e.operands[1]) : std::nullopt;
        if (!b) return std::nullopt;
        if (!a->value.terms.empty() && !b->value.terms.empty()) return std::nullopt;
        if (a->value.terms.empty()) std::swap(a, b);  // b is now the host factor
        const ExprPtr& factor = b->value.offset;
        a->value.offset = combine(Op::Mul, a->value.offset, factor);
        for (auto& t : a->value.terms) t.coef = combine(Op::Mul, t.coef, factor);
        return a;
      }
      case Op::Neg: {
        auto a = affine(*e.operands[0]);
        if (!a) return std::nullopt;
        a->value.offset = negated(std::move(a->value.offset));
        for (auto& t : a->value.terms) t.coef = negated(std::move(t.coef));
        return a;
      }
      case Op::Cast: {
        const Expr& src = *e.operands[0];
        auto a = affine(src);
        if (!a) return std::nullopt;
        // Narrowing (or a change of sign at one width) keeps the value modulo the width, as the
        // affine form does; widening is exact only where the narrower value did not wrap.
        if (dtype_bits(e.type.dtype) > dtype_bits(src.type.dtype))
          a->fits.push_back({a->value.clone(), src.type.dtype});
        a->value.offset = cast_to(std::move(a->value.offset), e.type);
        for (auto& t : a->value.terms) t.coef = cast_to(std::move(t.coef), e.type);
        return a;
      }
      default:
        return std::nullopt;
    }
  }

  static void add_term(Linear& l, int var, ExprPtr coef) {
    for (auto& t : l.terms)
      if (t.var == var) {
        SourceLoc loc = t.coef->loc;
        t.coef = folded(make_binary(Op::Add, std::move(t.coef), std::move(coef), loc));
        return;
      }
    l.terms.push_back({var, std::move(coef)});
  }

  void record(int array, const std::vector<ExprPtr>& indices, size_t rank, SourceLoc loc,
              bool is_store) {
    const Param& p = k_.params[static_cast<size_t>(array)];
    if (!p.type.is_array() || p.is_local_array() || indices.size() < rank) return;
    ProvenAccess access;
    access.array = array;
    access.loc = loc;
    access.is_store = is_store;
    access.guards = guards_;
    for (size_t d = 0; d < rank; ++d)
      if (auto a = shallow(*indices[d]) ? affine(*indices[d]) : std::nullopt) {
        access.dims.push_back(static_cast<int>(d));
        access.indices.push_back(std::move(*a));
      }
    if (!access.dims.empty()) proof_.accesses.push_back(std::move(access));
  }

  // Records the accesses of `e` that are performed whenever `e` is evaluated (`ok`).
  void expr(const Expr& e, bool ok) {
    if (e.op == Op::LogicalAnd || e.op == Op::LogicalOr || e.op == Op::Select) {
      expr(*e.operands[0], ok);
      for (size_t i = 1; i < e.operands.size(); ++i) expr(*e.operands[i], false);
      return;
    }
    for (const auto& o : e.operands) expr(*o, ok);
    if (!ok || (e.op != Op::Load && e.op != Op::Atomic)) return;
    size_t rank = k_.params[static_cast<size_t>(e.index)].type.rank;
    record(e.index, e.operands, rank, e.loc, e.op == Op::Atomic);
  }

  // Walks `b`, whose statements run in every iteration while `ok`. Returns whether it may
  // `break` or `continue` the loop that encloses it.
  bool block(const Block& b, bool ok) {
    std::map<int, Known> saved = known_;
    bool jumps = false;
    for (const auto& s : b) {
      switch (s->kind) {
        case Stmt::Kind::Assign:
          expr(*s->value, ok);
          if (assigned_once(s->index))
            if (auto a = shallow(*s->value) ? affine(*s->value) : std::nullopt)
              known_[s->index] = Known{-1, std::make_shared<const AffineIndex>(std::move(*a))};
          break;
        case Stmt::Kind::Store:
          for (const auto& i : s->indices) expr(*i, ok);
          expr(*s->value, ok);
          if (ok) record(s->index, s->indices, s->indices.size(), s->loc, true);
          break;
        case Stmt::Kind::If: {
          expr(*s->cond, ok);
          bool a = block(s->body, false);
          bool c = block(s->orelse, false);
          if (a || c) jumps = true, ok = false;
          break;
        }
        case Stmt::Kind::While: {
          expr(*s->cond, ok);
          // `while True:` (also how `continue` in the parallel loop and inlined functions are
          // lowered) runs its body at least once, up to the first jump.
          bool runs = ok && is_const(*s->cond) && s->cond->int_bits != 0;
          block(s->body, runs);
          break;
        }
        case Stmt::Kind::For:
          for_loop(*s, ok);
          break;
        case Stmt::Kind::Break:
        case Stmt::Kind::Continue:
          jumps = true;
          ok = false;
          break;
        case Stmt::Kind::Print:
          for (const auto& v : s->indices) expr(*v, ok);
          break;
        case Stmt::Kind::Barrier:
          break;
      }
    }
    known_ = std::move(saved);
    return jumps;
  }

  void for_loop(const Stmt& s, bool ok) {
    for (const Expr* e : {s.start.get(), s.stop.get(), s.step.get()}) expr(*e, ok);
    RangedVar r;
    r.local = s.index;
    r.type = k_.locals[static_cast<size_t>(s.index)].type.dtype;
    auto host = [&](const Expr& e) { return shallow(e) ? host_clone(e) : nullptr; };
    r.start = host(*s.start);
    r.stop = host(*s.stop);
    r.step = host(*s.step);
    // A loop that may break stops at a point the host cannot know.
    bool ranged = ok && assigned_once(s.index) && is_signed(r.type) && r.start && r.stop &&
                  r.step && !may_break(s.body);
    if (!ranged) {
      block(s.body, false);
      return;
    }
    int var = add_var(std::move(r));
    known_[s.index] = Known{var, nullptr};
    guards_.push_back(var);
    block(s.body, true);
    guards_.pop_back();
    known_.erase(s.index);
  }

  const Kernel& k_;
  std::vector<int> assignments_;  // per local: the statements that assign it (Assign, For)
  std::map<int, ExprPtr> host_locals_;
  std::map<int, Known> known_;
  std::vector<int> guards_;
  IndexProof proof_;
};

}  // namespace

IndexProof prove_index_ranges(const Kernel& k) {
  return Prover(k).run();
}

}  // namespace tack::ir
