#include "runtime/launch_bounds.hpp"

#include <fmt/format.h>

#include <optional>

#include "tack/error.hpp"

namespace tack::detail {
namespace {

// Exact arithmetic: an index range is computed without wrapping, so that one the generated
// code would wrap into range is still seen for what it is.
__extension__ typedef __int128 Wide;

struct Range {
  Wide lo = 0, hi = 0;
  bool empty = false;
};

std::optional<Wide> mul(Wide a, Wide b) {
  Wide r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::optional<Wide> add(Wide a, Wide b) {
  Wide r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// The values start, start + step, ... before stop (Python's range), as [lo, hi].
Range range_of(int64_t start, int64_t stop, int64_t step) {
  Wide count = 0;
  if (step > 0 && stop > start) count = (Wide(stop) - start - 1) / step + 1;
  if (step < 0 && start > stop) count = (Wide(start) - stop - 1) / -Wide(step) + 1;
  if (count == 0) return {0, 0, true};
  Wide last = Wide(start) + (count - 1) * step;
  return {std::min<Wide>(start, last), std::max<Wide>(start, last), false};
}

std::optional<Range> linear_range(const ir::Linear& l, const std::vector<Range>& vars,
                                  const ir::HostValues& values) {
  Wide off = ir::eval_host(*l.offset, values);
  Range r{off, off, false};
  for (const auto& t : l.terms) {
    Wide c = ir::eval_host(*t.coef, values);
    const Range& v = vars[static_cast<size_t>(t.var)];
    auto a = mul(c, c >= 0 ? v.lo : v.hi), b = mul(c, c >= 0 ? v.hi : v.lo);
    auto lo = a ? add(r.lo, *a) : std::nullopt, hi = b ? add(r.hi, *b) : std::nullopt;
    if (!lo || !hi) return std::nullopt;
    r.lo = *lo;
    r.hi = *hi;
  }
  return r;
}

bool fits(const Range& r, DType t) {
  int bits = dtype_bits(t);
  Wide lo = is_signed(t) ? -(Wide(1) << (bits - 1)) : 0;
  Wide hi = is_signed(t) ? (Wide(1) << (bits - 1)) - 1 : (Wide(1) << bits) - 1;
  return r.lo >= lo && r.hi <= hi;
}

std::string text(Wide v) {
  if (v >= INT64_MIN && v <= INT64_MAX) return std::to_string(static_cast<int64_t>(v));
  std::string digits;
  for (Wide m = v < 0 ? -v : v; m > 0; m /= 10)
    digits.insert(digits.begin(), char('0' + int(m % 10)));
  return (v < 0 ? "-" : "") + digits;
}

std::string shape_text(const int64_t* shape, int rank) {
  std::string out = "(";
  for (int i = 0; i < rank; ++i) out += fmt::format("{}{}", i ? ", " : "", shape[i]);
  return out + (rank == 1 ? ",)" : ")");
}

}  // namespace

void check_index_ranges(const ir::Kernel& k, const ir::IndexProof& proof,
                        const ir::HostValues& values, const LaunchArgs& launch, int column_offset) {
  if (proof.accesses.empty()) return;
  for (int64_t c : launch.count)
    if (c == 0) return;  // an empty launch performs no access
  std::vector<Range> vars;
  vars.reserve(proof.vars.size());
  for (const ir::RangedVar& v : proof.vars) {
    if (v.parallel_dim >= 0) {
      auto d = static_cast<size_t>(v.parallel_dim);
      vars.push_back({launch.start[d],
                      Wide(launch.start[d]) + Wide(launch.count[d] - 1) * launch.step[d], false});
    } else {
      vars.push_back(range_of(ir::eval_host(*v.start, values), ir::eval_host(*v.stop, values),
                              ir::eval_host(*v.step, values)));
    }
  }
  for (const ir::ProvenAccess& a : proof.accesses) {
    bool runs = true;
    for (int g : a.guards) runs = runs && !vars[static_cast<size_t>(g)].empty;
    if (!runs) continue;
    const ir::Param& p = k.params[static_cast<size_t>(a.array)];
    const int64_t* shape = launch.params[static_cast<size_t>(a.array)].shape;
    for (size_t i = 0; i < a.dims.size(); ++i) {
      const ir::AffineIndex& index = a.indices[i];
      bool exact = true;
      for (const auto& f : index.fits) {
        auto r = linear_range(f.value, vars, values);
        exact = exact && r && fits(*r, f.type);
      }
      auto r = exact ? linear_range(index.value, vars, values) : std::nullopt;
      if (!r) continue;  // the generated code wraps: not an index this check can reason about
      int d = a.dims[i];
      if (r->lo >= 0 && r->hi < shape[d]) continue;
      throw IndexError(fmt::format(
          "{}:{}:{}: in kernel '{}': this call would {} '{}' at indices {} to {} in dimension {}, "
          "but its shape is {}: the launch was refused and nothing ran (make the loop's range "
          "match the arrays, or pass arrays large enough for it)",
          k.file, a.loc.line, a.loc.col + column_offset, k.name,
          a.is_store ? "store to" : "load from", p.name, text(r->lo), text(r->hi), d,
          shape_text(shape, p.type.rank)));
    }
  }
}

}  // namespace tack::detail
