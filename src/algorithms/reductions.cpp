// The reductions: each one call of a scalar-reduction kernel (kernels.py), whose order the
// language fixes (docs/language.md, "Reductions"), plus the host arithmetic NumPy does after it.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "algorithms/kernels.hpp"
#include "tack/algorithms.hpp"
#include "tack/error.hpp"

namespace tack::algorithms {

using detail::flat;
using detail::kernel;
using detail::kind;
using detail::zero;

namespace {

// The dtype a reduction accumulates in (NumPy's rule for sums).
DType accumulator(DType t) {
  if (is_float(t)) return t;
  return is_unsigned(t) ? DType::U64 : DType::I64;
}

// A kernel's result relabelled with the dtype it was computed in (float kernels return f64, which
// holds an f32 result exactly).
Scalar as(Scalar s, DType t) {
  s.dtype = t;
  return s;
}

// The float type NumPy computes a mean or a norm in: f32 for f32 data, else f64.
DType float_type(DType t) {
  return t == DType::F32 ? DType::F32 : DType::F64;
}

double nan() {
  return std::numeric_limits<double>::quiet_NaN();
}

Scalar reduce(const char* op, const Array& a) {
  Array x = flat(a);
  return as(kernel(fmt::format("{}_{}", op, kind(a.dtype())))(x), accumulator(a.dtype()));
}

}  // namespace

Scalar sum(const Array& a) {
  if (a.size() == 0) return zero(accumulator(a.dtype()));
  return reduce("sum", a);
}

Scalar min(const Array& a) {
  detail::require_elements(a, "min");
  return reduce("min", a);
}

Scalar max(const Array& a) {
  detail::require_elements(a, "max");
  return reduce("max", a);
}

Scalar absmax(const Array& a) {
  detail::require_elements(a, "absmax");
  Array x = flat(a);
  if (is_float(a.dtype())) return as(kernel("absmax_float")(x), a.dtype());
  if (is_unsigned(a.dtype())) return as(kernel("max_unsigned")(x), DType::U64);
  return as(kernel("absmax_signed")(x), DType::U64);
}

int64_t count_nonzero(const Array& a) {
  if (a.size() == 0) return 0;
  return kernel("count_nonzero")(flat(a)).int_value;
}

Scalar dot(const Array& a, const Array& b) {
  if (a.dtype() != b.dtype())
    throw TypeError(
        fmt::format("tack.algorithms.dot() of {} and {} arrays: give both the same "
                    "dtype (convert one with astype)",
                    dtype_name(a.dtype()), dtype_name(b.dtype())));
  if (a.size() != b.size())
    throw ValueError(
        fmt::format("tack.algorithms.dot() of arrays of {} and {} elements: they "
                    "must have as many",
                    a.size(), b.size()));
  if (a.size() == 0) return zero(accumulator(a.dtype()));
  Array x = flat(a), y = flat(b);
  return as(kernel(fmt::format("dot_{}", kind(a.dtype())))(x, y), accumulator(a.dtype()));
}

double mean(const Array& a) {
  if (a.size() == 0) return nan();
  auto n = static_cast<double>(a.size());
  if (a.dtype() == DType::F32) return static_cast<float>(sum(a).value) / static_cast<float>(n);
  if (a.dtype() == DType::F64) return sum(a).value / n;
  // Integers as NumPy takes them: converted to f64 and summed there, without wrapping.
  return kernel("sum_as_float")(flat(a), detail::like(a, 0, DType::F64)).value / n;
}

double var(const Array& a, int64_t ddof) {
  if (a.size() == 0) return nan();
  DType ft = float_type(a.dtype());
  Array m = detail::like(a, 1, ft);
  m.fill(mean(a));
  double ssd = kernel("sum_squared_deviations")(flat(a), m).value;
  double count = static_cast<double>(std::max<int64_t>(a.size() - ddof, 0));
  if (ft == DType::F32) return static_cast<float>(ssd) / static_cast<float>(count);
  return ssd / count;
}

double stddev(const Array& a, int64_t ddof) {
  double v = var(a, ddof);
  if (float_type(a.dtype()) == DType::F32) return std::sqrt(static_cast<float>(v));
  return std::sqrt(v);
}

double norm(const Array& a, double ord) {
  const char* name = ord == 1                                         ? "sum_abs"
                     : ord == 2                                       ? "sum_squares"
                     : ord == std::numeric_limits<double>::infinity() ? "absmax_as_float"
                                                                      : nullptr;
  if (!name)
    throw ValueError(fmt::format("tack.algorithms.norm(): ord={} is not one of 1, 2 and inf", ord));
  if (a.size() == 0) return 0;
  DType ft = float_type(a.dtype());
  double v = kernel(name)(flat(a), detail::like(a, 0, ft)).value;
  if (ord != 2) return v;
  return ft == DType::F32 ? std::sqrt(static_cast<float>(v)) : std::sqrt(v);
}

}  // namespace tack::algorithms
