"""Parallel primitives on any backend: reductions, scans, histograms, sorts, segmented operations
(docs/algorithms.md).

    import numpy as np
    import tack
    from tack.algorithms import histogram, inclusive_scan, sum

    x = tack.asarray(np.random.default_rng(0).standard_normal(1 << 20, dtype=np.float32))
    total = sum(x)                                  # a Python float, f32 arithmetic
    counts, edges = histogram(x, bins=64)
    out = tack.empty_like(x)
    inclusive_scan(x, out)                          # returns the total

The kernels are written in Tack's language (tack/algorithms/kernels.py) and run on the arrays'
device; this module is a thin layer over the C++ library's tack::algorithms. Arguments that are not
tack arrays (NumPy arrays, lists) are copied to the default device first. Every float reduction and
scan has one fixed order: the same input gives the same bits on every backend and thread count.
"""

import math as _math
import warnings as _warnings

from .. import _tack
from .._arrays import asarray as _asarray

_native = _tack.algorithms

__all__ = [
    "sum", "min", "max", "mean", "dot", "norm", "var", "std", "absmax", "count_nonzero",
    "inclusive_scan", "exclusive_scan", "scan_dtype", "histogram", "argsort", "sort", "sort_by_key",
    "gather", "unique", "reduce_by_key", "segmented_reduce", "segmented_scan", "concat", "copy",
    "fill",
]


def _array(a):
    return a if isinstance(a, _tack.Array) else _asarray(a)


def _warn_empty(what):
    # NumPy's warning for the same call, so that code moving between the two behaves alike.
    _warnings.warn(f"{what} of an empty array", RuntimeWarning, stacklevel=3)


def _warn_degrees(a, ddof, what):
    if a.size == 0:
        _warnings.warn(f"{what} of an empty array", RuntimeWarning, stacklevel=3)
    elif a.size - ddof <= 0:
        _warnings.warn("degrees of freedom <= 0", RuntimeWarning, stacklevel=3)


def sum(a):
    """The sum of every element: f32 in f32, f64 in f64, integers in i64 (u64 when unsigned),
    wrapping. 0 for an empty array."""
    return _native.sum(_array(a))


def min(a):
    """The smallest element (NaN if any is NaN; -0.0 below +0.0). ValueError when empty."""
    return _native.min(_array(a))


def max(a):
    """The largest element (NaN if any is NaN; +0.0 above -0.0). ValueError when empty."""
    return _native.max(_array(a))


def absmax(a):
    """The largest magnitude |x| (exact for integers, as an int). ValueError when empty."""
    return _native.absmax(_array(a))


def count_nonzero(a):
    """The number of elements that are not zero (NaN counts)."""
    return _native.count_nonzero(_array(a))


def dot(a, b):
    """The sum of a[i] * b[i]: two arrays of one dtype and size, accumulated as sum() does."""
    return _native.dot(_array(a), _array(b))


def mean(a):
    """sum(a) / size, in f32 for f32 data and f64 otherwise. NaN (with a RuntimeWarning) when empty."""
    a = _array(a)
    if a.size == 0:
        _warn_empty("mean")
    return _native.mean(a)


def var(a, ddof=0):
    """The variance, mean((x - mean(x))**2) with size - ddof as divisor, in f32 for f32 data and f64
    otherwise. NaN (with a RuntimeWarning) when empty."""
    a = _array(a)
    _warn_degrees(a, ddof, "var")
    return _native.var(a, int(ddof))


def std(a, ddof=0):
    """sqrt(var(a, ddof))."""
    a = _array(a)
    _warn_degrees(a, ddof, "std")
    return _native.std(a, int(ddof))


def norm(a, ord=2):
    """The vector norm of the elements: ord=1 (sum |x|), 2 (sqrt of the sum of squares) or
    math.inf (max |x|), as numpy.linalg.norm of the flattened data; 0.0 when empty."""
    if ord in ("inf", _math.inf):
        ord = _math.inf
    return _native.norm(_array(a), float(ord))


def inclusive_scan(src, dst):
    """dst[i] = src[0] + ... + src[i]; returns the total (dst's dtype). dst may be src. dst's dtype
    accumulates and must hold src's values (scan_dtype(src.dtype) always does)."""
    return _native.inclusive_scan(_array(src), dst)


def exclusive_scan(src, dst):
    """dst[i] = src[0] + ... + src[i - 1] (dst[0] = 0); returns the total of all of src."""
    return _native.exclusive_scan(_array(src), dst)


def scan_dtype(dtype):
    """The dtype numpy.cumsum gives: i64 for bools and signed integers, u64 for unsigned ones,
    floats their own."""
    return _native.scan_dtype(dtype)


def histogram(data, bins=10, range=None):
    """(counts, edges) as numpy.histogram(data, bins, range) computes them for `bins` equal bins:
    counts an i64 array, edges bins + 1 values (f32 for f32 data, else f64), the last bin closed,
    both tack arrays on the data's device. Values outside the range and NaNs are not counted."""
    if range is not None:
        lo, hi = range
        range = (float(lo), float(hi))
    return _native.histogram(_array(data), int(bins), range)


def argsort(keys):
    """The stable permutation (an i64 array) that sorts keys: an LSD radix sort of integer or float
    keys, floats in NumPy's order (-0.0 and +0.0 equal, NaNs last), as
    numpy.argsort(keys, kind="stable")."""
    return _native.argsort(_array(keys))


def sort(keys):
    """The keys sorted (stable, NumPy's order), a new array."""
    return _native.sort(_array(keys))


def sort_by_key(keys, values):
    """(sorted_keys, values_in_that_order), the stable order of keys."""
    return _native.sort_by_key(_array(keys), _array(values))


def gather(values, perm):
    """out[i] = values[perm[i]]; IndexError when an index is outside values."""
    return _native.gather(_array(values), _array(perm))


def unique(keys):
    """(keys, counts): the distinct keys, sorted, and how many times each occurs (i64), as
    numpy.unique(keys, return_counts=True) (all NaNs one key, -0.0 and +0.0 one key)."""
    return _native.unique(_array(keys))


def reduce_by_key(keys, values, op="sum"):
    """(keys, reduced) over each run of equal adjacent keys: the run's key and its values reduced
    with op ("sum", "min" or "max") in element order, in sum()'s accumulator dtype."""
    return _native.reduce_by_key(_array(keys), _array(values), op)


def segmented_reduce(values, offsets, op="sum"):
    """For offsets of n + 1 non-decreasing indices, segment k = values[offsets[k]:offsets[k + 1]]
    reduced with op ("sum", "min" or "max") in element order: n values in sum()'s accumulator dtype
    (an empty segment gives op's identity)."""
    return _native.segmented_reduce(_array(values), _array(offsets), op)


def segmented_scan(values, offsets):
    """The inclusive scan of each segment (see segmented_reduce), an array like values; elements
    outside every segment keep their values."""
    return _native.segmented_scan(_array(values), _array(offsets))


def concat(arrays):
    """The elements of the arrays (one dtype) one after the other, a new 1-D array."""
    return _native.concat([_array(a) for a in arrays])


def copy(src, dst):
    """src's elements into dst (one dtype, as many elements)."""
    _native.copy(_array(src), dst)


def fill(dst, value, begin=0, end=None):
    """value into the elements [begin, end) of dst (end None: to the end)."""
    _native.fill(dst, value, begin, -1 if end is None else end)
