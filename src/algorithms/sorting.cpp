// Sorting: keys mapped to unsigned integers in NumPy's order (kernels.py, order_keys_*), then a
// stable LSD radix sort, 8 bits a pass, over fixed blocks of kSortBlock keys: each pass counts each
// block's digits (digit-major), scans the counts into where each block's keys of each digit go, and
// scatters each block's keys in element order. unique and reduce_by_key find the runs of equal
// ordered keys.
#include <fmt/format.h>

#include <utility>

#include "algorithms/kernels.hpp"
#include "tack/algorithms.hpp"
#include "tack/error.hpp"

namespace tack::algorithms {

namespace {

constexpr int64_t kSortBlock = 4096;

// The keys as unsigned integers whose order is NumPy's order of the keys: u32 for keys of up to 4
// bytes, u64 for 8.
Array ordered_keys(const Array& keys) {
  Array x = detail::flat(keys);
  DType t = keys.dtype();
  bool wide = dtype_size(t) == 8;
  DType kt = wide ? DType::U64 : DType::U32;
  Array out = detail::like(keys, x.size(), kt);
  if (x.size() == 0) return out;
  if (is_float(t)) {
    Array bits(x.buffer(), x.offset_bytes(), x.shape(), kt);  // the same bytes, as integers
    detail::kernel(t == DType::F32 ? "order_keys_float32" : "order_keys_float64")(bits, out);
  } else if (is_signed(t)) {
    detail::kernel(wide ? "order_keys_signed64" : "order_keys_signed32")(x, out);
  } else {
    detail::kernel("order_keys_unsigned")(x, out);
  }
  return out;
}

struct Sorted {
  Array perm;  // i64
  Array keys;  // the ordered keys, sorted
};

Sorted radix_sort(const Array& keys) {
  Sorted s{detail::like(keys, keys.size(), DType::I64), ordered_keys(keys)};
  int64_t n = keys.size();
  if (n == 0) return s;
  detail::kernel("iota")(s.perm);
  // The digits above the highest bit in which the smallest and largest keys differ are the same
  // in every key: those passes would change nothing.
  uint64_t differ =
      static_cast<uint64_t>(min(s.keys).int_value) ^ static_cast<uint64_t>(max(s.keys).int_value);
  int passes = 0;
  for (; differ != 0; differ >>= 8) ++passes;
  if (passes == 0) return s;
  int64_t blocks = (n + kSortBlock - 1) / kSortBlock;
  Device d = keys.device();
  Array counts = empty({256, blocks}, DType::I64, &d);
  Array flat_counts = counts.reshape({256 * blocks});
  Array keys2 = detail::like(keys, n, s.keys.dtype()), perm2 = detail::like(keys, n, DType::I64);
  for (int p = 0; p < passes; ++p) {
    counts.fill(0);
    detail::kernel("radix_count")(s.keys, counts, kSortBlock, 8 * p);
    exclusive_scan(flat_counts, flat_counts);
    detail::kernel("radix_scatter")(s.keys, s.perm, counts, keys2, perm2, kSortBlock, 8 * p);
    std::swap(s.keys, keys2);
    std::swap(s.perm, perm2);
  }
  return s;
}

void require_integers(const Array& a, const char* function, const char* what) {
  if (!is_integer(a.dtype()))
    throw TypeError(fmt::format("tack.algorithms.{}(): {} is a {} array: give integer indices",
                                function, what, dtype_name(a.dtype())));
}

void require_same_size(const Array& a, const Array& b, const char* function) {
  if (a.size() != b.size())
    throw ValueError(
        fmt::format("tack.algorithms.{}(): keys have {} elements and values {}: give "
                    "as many of each",
                    function, a.size(), b.size()));
}

struct Runs {
  Array starts;  // i64: where each run starts, then the element count
  int64_t count = 0;
};

// The runs of equal adjacent ordered keys.
Runs runs_of(const Array& ordered) {
  int64_t n = ordered.size();
  Array flags = detail::like(ordered, n, DType::I64),
        positions = detail::like(ordered, n, DType::I64);
  detail::kernel("run_heads")(ordered, flags);
  Runs r;
  r.count = exclusive_scan(flags, positions).int_value;
  r.starts = detail::like(ordered, r.count + 1, DType::I64);
  detail::kernel("run_starts")(flags, positions, r.starts);
  r.starts.rows(r.count, r.count + 1).fill(static_cast<double>(n));
  return r;
}

}  // namespace

Array argsort(const Array& keys) {
  return radix_sort(keys).perm;
}

Array sort(const Array& keys) {
  return gather(keys, argsort(keys));
}

std::pair<Array, Array> sort_by_key(const Array& keys, const Array& values) {
  require_same_size(keys, values, "sort_by_key");
  Array perm = argsort(keys);
  return {gather(keys, perm), gather(values, perm)};
}

Array gather(const Array& values, const Array& perm) {
  require_integers(perm, "gather", "perm");
  Array out = detail::like(values, perm.size(), values.dtype());
  if (perm.size() == 0) return out;
  int64_t bad =
      detail::kernel("gather_checked")(detail::flat(values), detail::flat(perm), out).int_value;
  if (bad != 0)
    throw IndexError(
        fmt::format("tack.algorithms.gather(): {} indices of perm are outside the {} "
                    "elements of values",
                    bad, values.size()));
  return out;
}

std::pair<Array, Array> unique(const Array& keys) {
  Sorted s = radix_sort(keys);
  if (keys.size() == 0)
    return {detail::like(keys, 0, keys.dtype()), detail::like(keys, 0, DType::I64)};
  Runs r = runs_of(s.keys);
  Array counts = detail::like(keys, r.count, DType::I64);
  detail::kernel("run_lengths")(r.starts, counts);
  // Each run's key: its first element in the stable order.
  Array first = gather(s.perm, r.starts.rows(0, r.count));
  return {gather(keys, first), counts};
}

std::pair<Array, Array> reduce_by_key(const Array& keys, const Array& values, Op op) {
  require_same_size(keys, values, "reduce_by_key");
  if (keys.size() == 0) {
    Array no_segments = detail::like(keys, 1, DType::I64);
    no_segments.fill(0);
    return {detail::like(keys, 0, keys.dtype()), segmented_reduce(values, no_segments, op)};
  }
  Runs r = runs_of(ordered_keys(keys));
  return {gather(keys, r.starts.rows(0, r.count)), segmented_reduce(values, r.starts, op)};
}

}  // namespace tack::algorithms
