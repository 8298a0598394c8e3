"""Scalar reductions in the parallel loop (docs/language.md, "Reductions"), for the tests of every
backend and generator."""
import tack


@tack.kernel
def total(x) -> tack.f64:
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i]
    return s


@tack.kernel
def several(x, lo) -> tack.f64:
    """Several reductions of different operations and dtypes, under conditions, over ndrange."""
    n = tack.i64(0)
    low = 1.0e30
    prod = 1.0
    bits = tack.u32(0)
    for i, j in tack.ndrange(x.shape[0], x.shape[1]):
        if x[i, j] < lo:
            continue
        n += 1
        low = min(low, x[i, j])
        prod *= 1.0 + x[i, j] * 1.0e-3
        bits |= tack.u32(1) << tack.u32(j % 32)
    return n + low + prod + bits


@tack.kernel
def any_above(x, lo) -> bool:
    found = False
    for i in range(x.shape[0]):
        found |= x[i] > lo
    return found
