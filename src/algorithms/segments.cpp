// Segmented reductions and scans (one iteration of the parallel loop per segment, in element
// order), and the array operations concat, copy and fill.
#include <fmt/format.h>

#include <cstdint>
#include <limits>

#include "algorithms/kernels.hpp"
#include "tack/algorithms.hpp"
#include "tack/error.hpp"

namespace tack::algorithms {

namespace {

DType accumulator(DType t) {
  if (is_float(t)) return t;
  return is_unsigned(t) ? DType::U64 : DType::I64;
}

// A one-element array of dtype t holding op's identity.
Array identity(const Array& like, DType t, Op op) {
  Array out = detail::like(like, 1, t);
  if (is_float(t)) {
    double v = op == Op::Sum   ? -0.0
               : op == Op::Min ? std::numeric_limits<double>::infinity()
                               : -std::numeric_limits<double>::infinity();
    out.fill(v);  // exact in f32 too
  } else if (t == DType::U64) {
    uint64_t v = op == Op::Min ? std::numeric_limits<uint64_t>::max() : 0;
    copyto(out, std::vector<uint64_t>{v});
  } else {
    int64_t v = op == Op::Sum   ? 0
                : op == Op::Min ? std::numeric_limits<int64_t>::max()
                                : std::numeric_limits<int64_t>::min();
    copyto(out, std::vector<int64_t>{v});
  }
  return out;
}

// offsets: integers, at least one, non-decreasing, within [0, n].
Array checked_offsets(const Array& offsets, int64_t n, const char* function) {
  if (!is_integer(offsets.dtype()))
    throw TypeError(fmt::format("tack.algorithms.{}(): offsets is a {} array: give integers",
                                function, dtype_name(offsets.dtype())));
  if (offsets.size() == 0)
    throw ValueError(
        fmt::format("tack.algorithms.{}(): offsets is empty: n segments need n + 1 "
                    "offsets (one 0 for none)",
                    function));
  Array o = detail::flat(offsets);
  int64_t bad = detail::kernel("offsets_violations")(o, n).int_value;
  if (bad != 0)
    throw ValueError(
        fmt::format("tack.algorithms.{}(): {} offsets are outside [0, {}] or below "
                    "the offset before them: offsets must be non-decreasing indices "
                    "into values",
                    function, bad, n));
  return o;
}

const char* op_name(Op op) {
  return op == Op::Sum ? "sum" : op == Op::Min ? "min" : "max";
}

}  // namespace

Array segmented_reduce(const Array& values, const Array& offsets, Op op) {
  Array o = checked_offsets(offsets, values.size(), "segmented_reduce");
  DType acc = accumulator(values.dtype());
  Array out = detail::like(values, o.size() - 1, acc);
  if (out.size() == 0) return out;
  detail::kernel(fmt::format("segmented_{}", op_name(op)))(detail::flat(values), o,
                                                           identity(values, acc, op), out);
  return out;
}

Array segmented_scan(const Array& values, const Array& offsets) {
  if (is_bool(values.dtype()))
    throw TypeError(
        "tack.algorithms.segmented_scan(): bool values have no sum in their own dtype: convert "
        "them (astype(tack.i64))");
  Array o = checked_offsets(offsets, values.size(), "segmented_scan");
  Array out = values.copy();
  if (o.size() > 1 && values.size() > 0)
    detail::kernel("segmented_inclusive_scan")(detail::flat(values), o, out.reshape({out.size()}));
  return out;
}

Array concat(const std::vector<Array>& arrays) {
  if (arrays.empty())
    throw ValueError(
        "tack.algorithms.concat(): no arrays: give at least one (its dtype and "
        "device are the result's)");
  int64_t total = 0;
  for (const Array& a : arrays) {
    if (a.dtype() != arrays[0].dtype())
      throw TypeError(
          fmt::format("tack.algorithms.concat(): a {} array among {} ones: convert "
                      "them to one dtype",
                      dtype_name(a.dtype()), dtype_name(arrays[0].dtype())));
    total += a.size();
  }
  Array out = detail::like(arrays[0], total, arrays[0].dtype());
  int64_t at = 0;
  for (const Array& a : arrays) {
    if (a.size() == 0) continue;
    Array part = out.rows(at, at + a.size());
    copyto(part, a.reshape({a.size()}));
    at += a.size();
  }
  return out;
}

void copy(const Array& src, Array& dst) {
  if (src.dtype() != dst.dtype())
    throw TypeError(
        fmt::format("tack.algorithms.copy(): a {} src into a {} dst: convert src "
                    "with astype first",
                    dtype_name(src.dtype()), dtype_name(dst.dtype())));
  if (src.size() != dst.size())
    throw ValueError(fmt::format("tack.algorithms.copy(): src has {} elements and dst {}",
                                 src.size(), dst.size()));
  Array whole = dst.reshape({dst.size()});
  copyto(whole, src.reshape({src.size()}));
}

void fill(Array& dst, double value, int64_t begin, int64_t end) {
  int64_t n = dst.size();
  if (end == -1) end = n;
  if (begin < 0 || begin > end || end > n)
    throw ValueError(
        fmt::format("tack.algorithms.fill(): [{}, {}) is not a range of the {} "
                    "elements",
                    begin, end, n));
  if (begin == end) return;
  dst.reshape({n}).rows(begin, end).fill(value);
}

}  // namespace tack::algorithms
