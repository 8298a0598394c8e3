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


# ---- histogram: each value's bin, private counts per chunk, then summed per bin ----


@tack.kernel
def histogram_bins(x, edges, bins, start, first, scale, near):
    # The bin of each x[start + k] (-1 outside the edges and for NaN), the one numpy.histogram
    # finds. The estimate (v - first) * scale is that bin unless it lies within `near` of a
    # border (the host bounds the rounding of the estimate and of the edges by `near`, in bins);
    # there, it is corrected by one bin against the edges themselves, as NumPy corrects its own.
    for k in range(bins.shape[0]):
        nbins = edges.shape[0] - 1
        v = x[start + k] * 1.0
        f = (v - first) * scale
        j = tack.i64(f)
        r = f - j
        if r < near or r > 1.0 - near:
            j = min(max(j, 0), nbins - 1)
            if v < edges[j]:
                j -= 1
            elif v >= edges[j + 1] and j != nbins - 1:
                j += 1
        if not (v >= edges[0] and v <= edges[nbins]):
            j = -1
        bins[k] = j


@tack.kernel
def histogram_count(bins, counts, bs):
    # Chunk c of `bins` into row c of `counts`: one iteration of the parallel loop per chunk.
    for c in range(counts.shape[0]):
        for k in range(c * bs, min(c * bs + bs, bins.shape[0])):
            j = bins[k]
            if j >= 0:
                counts[c, j] += 1


@tack.kernel
def histogram_total(counts, out):
    for j in range(out.shape[0]):
        s = tack.i64(0)
        for c in range(counts.shape[0]):
            s += counts[c, j]
        out[j] = s


# ---- sorting: a stable LSD radix sort of ordered unsigned keys, 8 bits a pass ----


@tack.kernel
def order_keys_unsigned(x, keys):
    for i in range(x.shape[0]):
        keys[i] = x[i]


@tack.kernel
def order_keys_signed32(x, keys):
    # The sign bit flipped: the most negative value becomes 0, the largest 2^32 - 1.
    for i in range(x.shape[0]):
        keys[i] = tack.u32(tack.i32(x[i])) ^ tack.u32(2147483648)


@tack.kernel
def order_keys_signed64(x, keys):
    for i in range(x.shape[0]):
        keys[i] = tack.u64(x[i]) ^ tack.u64(9223372036854775808)


@tack.kernel
def order_keys_float32(bits, keys):
    # bits: the f32 keys' bits (a u32 view). NumPy's order: -0.0 and +0.0 one key, NaNs last.
    for i in range(bits.shape[0]):
        b = bits[i]
        magnitude = b & tack.u32(2147483647)
        k = b | tack.u32(2147483648)
        if magnitude > tack.u32(2139095040):
            k = tack.u32(4294967295)
        elif magnitude == 0:
            k = tack.u32(2147483648)
        elif b != magnitude:
            k = ~b
        keys[i] = k


@tack.kernel
def order_keys_float64(bits, keys):
    for i in range(bits.shape[0]):
        b = bits[i]
        magnitude = b & tack.u64(9223372036854775807)
        k = b | tack.u64(9223372036854775808)
        if magnitude > tack.u64(9218868437227405312):
            k = tack.u64(18446744073709551615)
        elif magnitude == 0:
            k = tack.u64(9223372036854775808)
        elif b != magnitude:
            k = ~b
        keys[i] = k


@tack.kernel
def iota(out):
    for i in range(out.shape[0]):
        out[i] = i


@tack.kernel
def radix_count(keys, counts, bs, shift):
    # counts[d, b]: how many keys of block b have digit d. Digit-major, so that the exclusive scan
    # of the flattened counts is where each block's keys of each digit go.
    for b in range(counts.shape[1]):
        for k in range(b * bs, min(b * bs + bs, keys.shape[0])):
            counts[(keys[k] >> shift) & 255, b] += 1


@tack.kernel
def radix_scatter(keys, index, offsets, keys_out, index_out, bs, shift):
    for b in range(offsets.shape[1]):
        for k in range(b * bs, min(b * bs + bs, keys.shape[0])):
            key = keys[k]
            d = (key >> shift) & 255
            p = offsets[d, b]
            offsets[d, b] = p + 1
            keys_out[p] = key
            index_out[p] = index[k]


@tack.kernel
def gather_checked(values, perm, out) -> tack.i64:
    # The number of indices outside values: the driver raises IndexError when there is any.
    bad = tack.i64(0)
    for i in range(out.shape[0]):
        j = perm[i]
        if j < 0 or j >= values.shape[0]:
            bad += 1
        else:
            out[i] = values[j]
    return bad


@tack.kernel
def run_heads(keys, flags):
    for i in range(keys.shape[0]):
        flags[i] = 1 if i == 0 or keys[i] != keys[i - 1] else 0


@tack.kernel
def run_starts(flags, positions, starts):
    for i in range(flags.shape[0]):
        if flags[i] != 0:
            starts[positions[i]] = i


@tack.kernel
def run_lengths(starts, counts):
    for r in range(counts.shape[0]):
        counts[r] = starts[r + 1] - starts[r]


# ---- segments: offsets[s] .. offsets[s + 1], one iteration per segment, in element order ----


@tack.kernel
def offsets_violations(offsets, n) -> tack.i64:
    bad = tack.i64(0)
    for s in range(offsets.shape[0]):
        o = offsets[s]
        if o < 0 or o > n:
            bad += 1
        elif s > 0 and offsets[s - 1] > o:
            bad += 1
    return bad


@tack.kernel
def segmented_sum(values, offsets, identity, out):
    for s in range(out.shape[0]):
        acc = identity[0]
        for k in range(offsets[s], offsets[s + 1]):
            acc += values[k]
        out[s] = acc


@tack.kernel
def segmented_min(values, offsets, identity, out):
    for s in range(out.shape[0]):
        acc = identity[0]
        for k in range(offsets[s], offsets[s + 1]):
            acc = min(acc, values[k])
        out[s] = acc


@tack.kernel
def segmented_max(values, offsets, identity, out):
    for s in range(out.shape[0]):
        acc = identity[0]
        for k in range(offsets[s], offsets[s + 1]):
            acc = max(acc, values[k])
        out[s] = acc


@tack.kernel
def segmented_inclusive_scan(values, offsets, out):
    for s in range(offsets.shape[0] - 1):
        lo = offsets[s]
        hi = offsets[s + 1]
        if lo < hi:
            acc = values[lo]
            out[lo] = acc
            for k in range(lo + 1, hi):
                acc += values[k]
                out[k] = acc
