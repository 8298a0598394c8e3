// numpy.histogram's equal bins: the edges computed on the host as numpy.linspace computes them, the
// counts on the device: each value's bin (one iteration per value, in SIMD lanes on the CPU), each
// chunk of those into a private row of counts, then the rows summed per bin (integers: exact in
// any order). The bins are found a slab at a time, so that they are still in the cache when
// counted.
#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "algorithms/kernels.hpp"
#include "tack/algorithms.hpp"
#include "tack/error.hpp"

namespace tack::algorithms {

namespace {

constexpr int64_t kHistogramChunk = 16384;
// The private counts stay under this many (16 MiB of i32): more bins mean longer chunks.
constexpr int64_t kMaxPrivateCounts = int64_t{1} << 22;
// Values whose bins are found, then counted, at a time (a whole number of chunks).
constexpr int64_t kSlab = int64_t{1} << 20;

// How far from a bin's border, in bins, the estimate (v - first) * bins / span may be wrong. The
// kernel computes in the edges' type, whose unit roundoff is `unit`: the estimate's rounding is a
// few units of at most `bins`, and the edges' (numpy.linspace in that type) and `first`'s a few
// units of the largest edge, measured in bins. Twice their sum, so that a value farther from a
// border than this is in the estimate's bin; 1 (always check against the edges) where the edges
// are too coarse for the estimate to be trusted.
double near_a_border(double first, double last, double span, int64_t bins, double unit) {
  const double per_bin = static_cast<double>(bins) / span;
  const double edges = 8 * unit * (std::fabs(first) + std::fabs(last)) * per_bin;
  const double estimate = 8 * unit * static_cast<double>(bins);
  const double near = 2 * (edges + estimate) + 1e-12;
  return std::isfinite(near) && near < 0.25 ? near : 1.0;
}

// numpy.linspace(first, last, bins + 1) computed in T: the last edge exactly `last`.
template <typename T>
std::vector<T> linspace(T first, T last, int64_t bins) {
  std::vector<T> edges(static_cast<size_t>(bins + 1));
  T delta = last - first, step = delta / static_cast<T>(bins);
  for (int64_t i = 0; i <= bins; ++i) {
    auto k = static_cast<T>(i);
    edges[static_cast<size_t>(i)] =
        (step == 0 ? k / static_cast<T>(bins) * delta : k * step) + first;
  }
  edges.back() = last;
  return edges;
}

template <typename T>
void require_widths(const std::vector<T>& edges, DType t, double first, double last) {
  for (size_t i = 0; i + 1 < edges.size(); ++i)
    if (edges[i] >= edges[i + 1])
      throw ValueError(
          fmt::format("tack.algorithms.histogram(): {} bins of [{}, {}] would not all "
                      "have a width in {}: give fewer bins or a wider range",
                      edges.size() - 1, first, last, dtype_name(t)));
}

void finite_or_throw(double first, double last, bool from_data) {
  if (std::isfinite(first) && std::isfinite(last)) return;
  if (from_data)
    throw ValueError(
        fmt::format("tack.algorithms.histogram(): the data's range [{}, {}] is not "
                    "finite: give range=(lo, hi)",
                    first, last));
  throw ValueError(
      fmt::format("tack.algorithms.histogram(): the range [{}, {}] is not finite", first, last));
}

}  // namespace

// NumPy computes in the types its edges come in: an f32 array's own min and max give f32 edges
// computed in f32; a range (Python floats) or integer data give f64 edges (cast to f32 for f32
// data), and the span of integer data is their exact difference.
Histogram histogram(const Array& data, int64_t bins,
                    std::optional<std::pair<double, double>> range) {
  if (bins < 1)
    throw ValueError(fmt::format("tack.algorithms.histogram(): bins={} must be at least 1", bins));
  bool from_data = !range && data.size() > 0;
  DType edge_type = data.dtype() == DType::F32 ? DType::F32 : DType::F64;
  Histogram h;
  h.edges = detail::like(data, bins + 1, edge_type);
  double first = 0, span = 1;
  if (from_data && edge_type == DType::F32) {
    auto lo = static_cast<float>(min(data).value), hi = static_cast<float>(max(data).value);
    finite_or_throw(lo, hi, true);
    if (lo == hi) lo -= 0.5f, hi += 0.5f;
    std::vector<float> edges = linspace(lo, hi, bins);
    require_widths(edges, edge_type, lo, hi);
    copyto(h.edges, edges);
    first = lo;
    span = hi - lo;  // in f32
  } else {
    double lo = 0, hi = 1;
    bool exact_span = false;
    if (range) {
      std::tie(lo, hi) = *range;
      if (lo > hi)
        throw ValueError(
            fmt::format("tack.algorithms.histogram(): range ({}, {}): its max must be "
                        "larger than its min",
                        lo, hi));
      finite_or_throw(lo, hi, false);
    } else if (from_data) {
      Scalar a = min(data), b = max(data);
      lo = a.as<double>();
      hi = b.as<double>();
      finite_or_throw(lo, hi, true);
      // Integers: the exact difference, converted once.
      exact_span = !is_float(data.dtype());
      span = static_cast<double>(static_cast<uint64_t>(b.int_value) -
                                 static_cast<uint64_t>(a.int_value));
    }
    if (lo == hi) {
      lo -= 0.5, hi += 0.5;
      exact_span = false;
    }
    if (!exact_span) span = hi - lo;
    std::vector<double> edges = linspace(lo, hi, bins);
    if (edge_type == DType::F32) {
      std::vector<float> narrow(edges.begin(), edges.end());
      require_widths(narrow, edge_type, lo, hi);
      copyto(h.edges, narrow);
    } else {
      require_widths(edges, edge_type, lo, hi);
      copyto(h.edges, edges);
    }
    first = lo;
  }
  h.counts = detail::like(data, bins, DType::I64);
  if (data.size() == 0) {
    h.counts.fill(0);
    return h;
  }
  const int64_t n = data.size();
  const int64_t chunk =
      std::max(kHistogramChunk, (n + 1) / std::max<int64_t>(1, kMaxPrivateCounts / bins) + 1);
  const int64_t chunks = (n + chunk - 1) / chunk;
  const int64_t slab = chunk * std::max<int64_t>(1, kSlab / chunk);
  const double scale = static_cast<double>(bins) / span;
  const double near = near_a_border(first, first + span, span, bins,
                                    std::ldexp(1.0, edge_type == DType::F32 ? -24 : -53));
  Device d = data.device();
  Array x = detail::flat(data);
  Array counts = zeros({chunks, bins}, DType::I32, &d);
  Array found = empty({std::min(n, slab)}, bins < 32767 ? DType::I16 : DType::I32, &d);
  for (int64_t start = 0; start < n; start += slab) {
    const int64_t m = std::min(slab, n - start);
    Array slab_bins = m == found.size() ? found : found.rows(0, m);
    detail::kernel("histogram_bins")(x, h.edges, slab_bins, start, first, scale, near);
    detail::kernel("histogram_count")(
        slab_bins, counts.rows(start / chunk, (start + m + chunk - 1) / chunk), chunk);
  }
  detail::kernel("histogram_total")(counts, h.counts);
  return h;
}

}  // namespace tack::algorithms
