"""Atomics: a histogram, and every operation returning the old value."""
import tack


@tack.kernel
def histogram(values, bins, counts):
    for i in range(values.shape[0]):
        b = int(values[i] * bins)
        if 0 <= b < bins:
            tack.atomic_add(counts, b, 1)


@tack.kernel
def every_op(x, out):
    for i in range(1):
        out[0] = tack.atomic_add(x, 0, 5)
        out[1] = tack.atomic_sub(x, 1, 3)
        out[2] = tack.atomic_min(x, 2, -7)
        out[3] = tack.atomic_max(x, 3, 9)
        out[4] = tack.atomic_and(x, 4, 6)
        out[5] = tack.atomic_or(x, 5, 6)
        out[6] = tack.atomic_xor(x, 6, 6)
        out[7] = tack.atomic_exchange(x, 7, 42)
        out[8] = tack.atomic_cas(x, 8, 10, 11)
        out[9] = tack.atomic_cas(x, 9, 0, 11)


@tack.kernel
def float_sum(x, total):
    for i in range(x.shape[0]):
        tack.atomic_add(total, (0, 0), x[i])


@tack.kernel
def float_ops(x, out):
    for i in range(1):
        out[0] = tack.atomic_add(x, 0, 0.5)
        out[1] = tack.atomic_sub(x, 1, 0.25)
        out[2] = tack.atomic_min(x, 2, -7.5)
        out[3] = tack.atomic_max(x, 3, 9.5)
        out[4] = tack.atomic_exchange(x, 4, 42.0)
        out[5] = tack.atomic_cas(x, 5, 10.0, 11.0)
        out[6] = tack.atomic_cas(x, 6, 0.0, 11.0)
