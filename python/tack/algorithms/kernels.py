"""The kernels of tack.algorithms, in Tack's own language, so that every backend compiles them
through the same compiler. The C++ library embeds this file at build time (src/algorithms) and
drives the kernels from there; docs/algorithms.md describes what each computes and in which order.

Conventions:
- A reduction is the language's scalar reduction (docs/language.md, "Reductions"): its order is
  fixed by the element count alone, the same on every backend and every thread count. A float
  accumulator is the array's own type (f32 sums in f32); `-> tack.f64` only widens the result.
- `ft` is an array whose dtype sets the kernel's float type (f64 for integer data): integer data
  is converted to it as NumPy converts it (`x[i] * 1.0`), floats keep their type.
- Scans, histograms and sorts cut the data into blocks of `bs` elements (a size the driver fixes,
  independent of the thread count); one iteration of the parallel loop owns one block and walks it
  in order, so every result is a fixed function of the input.
"""

import math

import tack

# ---- reductions ----


@tack.kernel
def sum_float(x) -> tack.f64:
    s = -0.0
    for i in range(x.shape[0]):
        s += x[i]
    return s


@tack.kernel
def sum_signed(x) -> tack.i64:
    s = tack.i64(0)
    for i in range(x.shape[0]):
        s += x[i]
    return s


@tack.kernel
def sum_unsigned(x) -> tack.u64:
    s = tack.u64(0)
    for i in range(x.shape[0]):
        s += x[i]
    return s


@tack.kernel
def min_float(x) -> tack.f64:
    m = math.inf
    for i in range(x.shape[0]):
        m = min(m, x[i])
    return m


@tack.kernel
def min_signed(x) -> tack.i64:
    m = tack.i64(9223372036854775807)
    for i in range(x.shape[0]):
        m = min(m, x[i])
    return m


@tack.kernel
def min_unsigned(x) -> tack.u64:
    m = tack.u64(18446744073709551615)
    for i in range(x.shape[0]):
        m = min(m, x[i])
    return m


@tack.kernel
def max_float(x) -> tack.f64:
    m = -math.inf
    for i in range(x.shape[0]):
        m = max(m, x[i])
    return m


@tack.kernel
def max_signed(x) -> tack.i64:
    m = tack.i64(-9223372036854775807 - 1)
    for i in range(x.shape[0]):
        m = max(m, x[i])
    return m


@tack.kernel
def max_unsigned(x) -> tack.u64:
    m = tack.u64(0)
    for i in range(x.shape[0]):
        m = max(m, x[i])
    return m


@tack.kernel
def absmax_float(x) -> tack.f64:
    m = 0.0
    for i in range(x.shape[0]):
        m = max(m, abs(x[i]))
    return m


@tack.kernel
def absmax_signed(x) -> tack.u64:
    # abs of the i64 minimum wraps to itself, whose u64 bits are its magnitude, 2^63.
    m = tack.u64(0)
    for i in range(x.shape[0]):
        m = max(m, tack.u64(abs(tack.i64(x[i]))))
    return m


@tack.kernel
def count_nonzero(x) -> tack.i64:
    n = tack.i64(0)
    for i in range(x.shape[0]):
        if x[i] != 0:
            n += 1
    return n


@tack.kernel
def dot_float(a, b) -> tack.f64:
    s = -0.0
    for i in range(a.shape[0]):
        s += a[i] * b[i]
    return s


@tack.kernel
def dot_signed(a, b) -> tack.i64:
    s = tack.i64(0)
    for i in range(a.shape[0]):
        s += tack.i64(a[i]) * tack.i64(b[i])
    return s


@tack.kernel
def dot_unsigned(a, b) -> tack.u64:
    s = tack.u64(0)
    for i in range(a.shape[0]):
        s += tack.u64(a[i]) * tack.u64(b[i])
    return s


@tack.kernel
def sum_as_float(x, ft) -> tack.f64:
    s = -0.0
    for i in range(x.shape[0]):
        s += x[i] * 1.0
    return s


@tack.kernel
def sum_abs(x, ft) -> tack.f64:
    s = 0.0
    for i in range(x.shape[0]):
        s += abs(x[i] * 1.0)
    return s


@tack.kernel
def sum_squares(x, ft) -> tack.f64:
    s = 0.0
    for i in range(x.shape[0]):
        v = x[i] * 1.0
        s += v * v
    return s


@tack.kernel
def absmax_as_float(x, ft) -> tack.f64:
    m = 0.0
    for i in range(x.shape[0]):
        m = max(m, abs(x[i] * 1.0))
    return m


@tack.kernel
def sum_squared_deviations(x, mean) -> tack.f64:
    c = mean[0]
    s = 0.0
    for i in range(x.shape[0]):
        d = x[i] - c
        s += d * d
    return s


# ---- scans: block totals, their exclusive scan, then each block from its offset ----


@tack.kernel
def scan_block_totals(x, part, bs):
    # part holds one value per block and the operation's identity after them, its own dtype
    # (the destination's): each block's total starts from that identity.
    for b in range(part.shape[0] - 1):
        s = part[part.shape[0] - 1]
        for k in range(b * bs, min(b * bs + bs, x.shape[0])):
            s += x[k]
        part[b] = s


@tack.kernel
def scan_exclusive_in_place(part):
    for _ in range(1):
        n = part.shape[0] - 1
        run = part[n]
        for b in range(n):
            v = part[b]
            part[b] = run
            run += v
        part[n] = run


@tack.kernel
def scan_inclusive_blocks(x, dst, part, total, bs):
    for b in range(part.shape[0] - 1):
        run = part[b]
        for k in range(b * bs, min(b * bs + bs, x.shape[0])):
            run += x[k]
            dst[k] = run
        if b == part.shape[0] - 2:
            total[0] = run


@tack.kernel
def scan_exclusive_blocks(x, dst, part, total, bs):
    for b in range(part.shape[0] - 1):
        run = part[b]
        for k in range(b * bs, min(b * bs + bs, x.shape[0])):
            v = x[k]
            dst[k] = run
            run += v
        if b == part.shape[0] - 2:
            total[0] = run


# ---- histogram: private counts per chunk, then summed per bin ----


@tack.kernel
def histogram_chunks(x, edges, counts, bs, first, span):
    # NumPy's uniform-bin computation (numpy.histogram) in the edges' dtype: an estimate from
    # (v - first) / span * bins, then corrected by one bin against the edges themselves.
    for c in range(counts.shape[0]):
        nbins = counts.shape[1]
        lo = edges[0]
        hi = edges[nbins]
        for k in range(c * bs, min(c * bs + bs, x.shape[0])):
            v = x[k] * 1.0
            if v >= lo and v <= hi:
                j = tack.i64((v - first) / span * nbins)
                j = min(max(j, 0), nbins - 1)
                if v < edges[j]:
                    j -= 1
                elif v >= edges[j + 1] and j != nbins - 1:
                    j += 1
                counts[c, j] += 1


@tack.kernel
def histogram_total(counts, out):
    for j in range(out.shape[0]):
        s = tack.i64(0)
        for c in range(counts.shape[0]):
            s += counts[c, j]
        out[j] = s
