// tack::algorithms: parallel primitives on any backend, written in Tack's kernel language and run
// on the arrays' device (docs/algorithms.md). Arrays of any shape are taken as their flat,
// row-major elements. Every float reduction and scan has one fixed order, so the same input gives
// the same bits on every backend and every thread count.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "tack/array.hpp"
#include "tack/kernel.hpp"

namespace tack::algorithms {

// Reductions. Accumulators: f32 in f32, f64 in f64, bools and signed integers in i64, unsigned
// integers in u64 (wrapping); the Scalar has that dtype. NaN propagates; min(+0, -0) is -0.
Scalar sum(const Array& a);  // 0 for an empty array
Scalar min(const Array& a);  // ValueError for an empty array
Scalar max(const Array& a);  // ValueError for an empty array
Scalar absmax(
    const Array& a);  // max |x|: floats in their dtype, integers as u64; ValueError if empty
int64_t count_nonzero(const Array& a);
// a and b: the same dtype and element count.
Scalar dot(const Array& a, const Array& b);
// Float results: f32 data in f32 (returned as a double), everything else in f64. NaN when empty
// (mean, var, stddev), as NumPy, which also warns.
double mean(const Array& a);
double var(const Array& a, int64_t ddof = 0);
double stddev(const Array& a, int64_t ddof = 0);
// ord: 1, 2 or infinity. 0 for an empty array.
double norm(const Array& a, double ord = 2);

// Scans of src into dst (the same element count; dst may be src). dst's dtype accumulates and must
// hold src's values (f32 into f32 or f64, i32 into i32 or i64...). Returns the total, the value an
// inclusive scan ends with (the identity for an empty src), in dst's dtype.
Scalar inclusive_scan(const Array& src, Array& dst);
Scalar exclusive_scan(const Array& src, Array& dst);
// The dtype NumPy's cumsum gives src: i64 for bools and signed integers, u64 for unsigned, floats
// their own.
DType scan_dtype(DType src);

// numpy.histogram with `bins` equal bins over [range.first, range.second] (the data's min and max
// when not given): counts (i64, on the data's device) and the bins + 1 edges (f32 for f32 data,
// else f64), the last bin closed. Values outside the range and NaNs are not counted.
struct Histogram {
  Array counts;
  Array edges;
};
Histogram histogram(const Array& data, int64_t bins = 10,
                    std::optional<std::pair<double, double>> range = std::nullopt);

// Sorting. Keys: any integer dtype, f32 or f64, in NumPy's order for floats (-0.0 and +0.0 equal,
// NaNs last). argsort is a stable LSD radix sort: the i64 permutation that sorts `keys`.
Array argsort(const Array& keys);
Array sort(const Array& keys);
std::pair<Array, Array> sort_by_key(const Array& keys, const Array& values);
// out[i] = values[perm[i]] (perm: any integer dtype); IndexError for an index outside values.
Array gather(const Array& values, const Array& perm);
// The distinct keys, sorted, and how many times each occurs (i64), as
// numpy.unique(keys, return_counts=True) (all NaNs one key).
std::pair<Array, Array> unique(const Array& keys);

enum class Op { Sum, Min, Max };
// Over each run of equal adjacent keys (equal as unique() compares them): the run's key and its
// values reduced with `op` in element order, in the accumulator dtype of sum().
std::pair<Array, Array> reduce_by_key(const Array& keys, const Array& values, Op op = Op::Sum);

// Segments, CSR-style: offsets (any integer dtype) holds n + 1 non-decreasing indices into values,
// and segment k is values[offsets[k] : offsets[k + 1]]. ValueError for offsets that are not.
// segmented_reduce: n values in sum()'s accumulator dtype, each segment reduced in element order
// (an empty segment gives the identity: -0.0 or 0 for sums, +inf or the largest value for min...).
Array segmented_reduce(const Array& values, const Array& offsets, Op op = Op::Sum);
// The inclusive scan of each segment, in values' dtype; elements outside every segment are
// values' own.
Array segmented_scan(const Array& values, const Array& offsets);

// Arrays: the elements of 1-D arrays of one dtype one after the other; src into dst (as many
// elements); `value` into dst[begin, end) of a 1-D array (end -1: to the end).
Array concat(const std::vector<Array>& arrays);
void copy(const Array& src, Array& dst);
void fill(Array& dst, double value, int64_t begin = 0, int64_t end = -1);

}  // namespace tack::algorithms
