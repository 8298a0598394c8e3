#include "backends/cpu/work_estimate.hpp"

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "ir/passes.hpp"

namespace tack::cpu {
namespace {

using ir::Op;
using Kind = ir::Stmt::Kind;

// An estimate only: integer expressions are evaluated in 128 bits, without the dtype's wrapping.
__extension__ typedef __int128 Wide;

constexpr int64_t kUnknownTrips = 64;
constexpr int64_t kMostSteps = int64_t{1} << 40;

int64_t clamp_steps(Wide v) {
  return static_cast<int64_t>(std::clamp<Wide>(v, 0, kMostSteps));
}

class Estimator {
 public:
  Estimator(const ir::Kernel& k, const detail::LaunchArgs& a) : k_(k), a_(a) {}

  // The steps of the body with the parallel loop's variables at their first iteration, or with
  // `last` at their last.
  int64_t at(bool last) {
    known_.clear();
    for (size_t d = 0; d < k_.dims.size(); ++d) {
      const Wide i = last ? a_.count[d] - 1 : 0;
      known_[k_.dims[d].var] = a_.start[d] + i * a_.step[d];
    }
    return std::max<int64_t>(1, block(k_.body));
  }

 private:
  std::optional<Wide> eval(const ir::Expr& e) {
    if (!is_integer(e.type.dtype) && e.type.dtype != DType::Bool) return std::nullopt;
    auto operand = [&](size_t i) { return eval(*e.operands[i]); };
    switch (e.op) {
      case Op::Const:
        return static_cast<int64_t>(e.int_bits);
      case Op::Param:
        return static_cast<int64_t>(ir::wrap_to(e.type.dtype, a_.params[e.index].scalar));
      case Op::ArrayDim:
        return a_.params[e.index].shape[e.dim];
      case Op::Local: {
        auto it = known_.find(e.index);
        return it == known_.end() ? std::nullopt : std::optional<Wide>(it->second);
      }
      case Op::Cast:
        return operand(0);
      default:
        break;
    }
    if (e.operands.size() != 2) return std::nullopt;
    const auto x = operand(0), y = operand(1);
    if (!x || !y) return std::nullopt;
    switch (e.op) {
      case Op::Add:
        return *x + *y;
      case Op::Sub:
        return *x - *y;
      case Op::Mul:
        return *x * *y;
      case Op::Min:
        return std::min(*x, *y);
      case Op::Max:
        return std::max(*x, *y);
      case Op::FloorDiv:
        return *y > 0 ? *x / *y : std::optional<Wide>();
      default:
        return std::nullopt;
    }
  }

  std::optional<Wide> trips(const ir::Stmt& s) {
    const auto start = eval(*s.start), stop = eval(*s.stop), step = eval(*s.step);
    if (!start || !stop || !step || *step == 0) return std::nullopt;
    const Wide span = *step > 0 ? *stop - *start : *start - *stop;
    const Wide by = *step > 0 ? *step : -*step;
    return span > 0 ? (span - 1) / by + 1 : 0;
  }

  // A loop-free block counts 0: the caller counts it as one step.
  int64_t block(const ir::Block& b) {
    Wide steps = 0;
    for (const auto& s : b) steps += statement(*s);
    return clamp_steps(steps);
  }

  int64_t statement(const ir::Stmt& s) {
    switch (s.kind) {
      case Kind::Assign:
        if (auto v = s.value ? eval(*s.value) : std::nullopt)
          known_[s.index] = *v;
        else
          known_.erase(s.index);
        return 0;
      case Kind::If:
        return inside([&] { return std::max(block(s.body), block(s.orelse)); }, s);
      case Kind::For: {
        const auto n = trips(s);  // before the loop's variable is forgotten
        return inside([&] { return loop(n, s.body); }, s);
      }
      case Kind::While:
        return inside([&] { return loop(std::nullopt, s.body); }, s);
      default:
        return 0;
    }
  }

  // A loop's steps: its trip count (64 when unknown) times its body's, a loop-free body one.
  int64_t loop(std::optional<Wide> trips, const ir::Block& body) {
    return clamp_steps(trips.value_or(kUnknownTrips) *
                       static_cast<Wide>(std::max<int64_t>(1, block(body))));
  }

  // Runs `count` over a compound statement; in it and afterwards, a `for`'s variable and what
  // its blocks assign are unknown.
  template <typename F>
  int64_t inside(F count, const ir::Stmt& s) {
    const auto before = known_;
    if (s.kind == Kind::For) known_.erase(s.index);
    const int64_t steps = count();
    known_ = before;
    forget_assigned(s.body);
    forget_assigned(s.orelse);
    if (s.kind == Kind::For) known_.erase(s.index);
    return steps;
  }

  void forget_assigned(const ir::Block& b) {
    for (const auto& s : b) {
      if (s->kind == Kind::Assign || s->kind == Kind::For) known_.erase(s->index);
      forget_assigned(s->body);
      forget_assigned(s->orelse);
    }
  }

  const ir::Kernel& k_;
  const detail::LaunchArgs& a_;
  std::unordered_map<int, Wide> known_;  // locals whose value is known here
};

}  // namespace

int64_t steps_per_iteration(const ir::Kernel& k, const detail::LaunchArgs& a) {
  for (int64_t c : a.count)
    if (c <= 0) return 1;
  Estimator e(k, a);
  return std::max<int64_t>(1, (e.at(false) + e.at(true)) / 2);
}

}  // namespace tack::cpu
