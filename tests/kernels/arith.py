"""Kernels for the arithmetic-semantics tests: one operation each, over arrays of operand pairs.

Specialized for every dtype the tests pass; the expected values are computed independently by the
tests (Python's semantics written out in C++, or NumPy in Python).
"""
import tack


@tack.kernel
def int_binary(a, b, floordiv, mod, add, sub, mul, power):
    for i in range(a.shape[0]):
        floordiv[i] = a[i] // b[i]
        mod[i] = a[i] % b[i]
        add[i] = a[i] + b[i]
        sub[i] = a[i] - b[i]
        mul[i] = a[i] * b[i]
        power[i] = a[i] ** b[i]


@tack.kernel
def shifts(a, n, left, right):
    for i in range(a.shape[0]):
        left[i] = a[i] << n[i]
        right[i] = a[i] >> n[i]


@tack.kernel
def float_binary(a, b, floordiv, mod, div, power):
    for i in range(a.shape[0]):
        floordiv[i] = a[i] // b[i]
        mod[i] = a[i] % b[i]
        div[i] = a[i] / b[i]
        power[i] = a[i] ** b[i]


@tack.kernel
def to_i32(x, out):
    for i in range(x.shape[0]):
        out[i] = tack.i32(x[i])


# Float to each integer type, in SIMD lanes on the CPU (whole gangs and a tail).
@tack.kernel
def to_ints(x, i8, u8, i16, u16, i32, u32, i64, u64):
    for i in range(x.shape[0]):
        i8[i] = tack.i8(x[i])
        u8[i] = tack.u8(x[i])
        i16[i] = tack.i16(x[i])
        u16[i] = tack.u16(x[i])
        i32[i] = tack.i32(x[i])
        u32[i] = tack.u32(x[i])
        i64[i] = tack.i64(x[i])
        u64[i] = tack.u64(x[i])


@tack.kernel
def true_divide(a, b, out):
    for i in range(a.shape[0]):
        out[i] = a[i] / b[i]


@tack.kernel
def mixed_compare(a, b, out):
    for i in range(a.shape[0]):
        out[i] = a[i] < b[i]


@tack.kernel
def min_max_nan(a, b, lo, hi):
    for i in range(a.shape[0]):
        lo[i] = min(a[i], b[i])
        hi[i] = max(a[i], b[i])


@tack.kernel
def rounding(x, r, f, c, t):
    for i in range(x.shape[0]):
        r[i] = round(x[i])
        f[i] = floor(x[i])
        c[i] = ceil(x[i])
        t[i] = trunc(x[i])


@tack.kernel
def sequential_loops(n, out):
    for i in range(out.shape[0]):
        s = tack.i64(0)
        for k in range(i, n, 3):
            s += k
        for k in range(n, i, -2):
            if k % 5 == 0:
                continue
            if k < 4:
                break
            s += 1
        j = 0
        while True:
            j += 1
            if j >= i:
                break
        out[i] = s * 100 + j


@tack.kernel
def swap_and_chain(x, y, out):
    for i in range(x.shape[0]):
        a = x[i]
        b = y[i]
        a, b = b, a
        c = d = a - b
        out[i] = 1 if 0 <= a < b < 100 else 2 if c == d else 3


@tack.kernel
def sum_of(x) -> tack.f64:
    for _ in range(1):
        pass
    return x[0] + x[x.shape[0] - 1]


@tack.kernel
def grid(out):
    for i, j, k in tack.ndrange(out.shape[0], (1, out.shape[1]), out.shape[2]):
        out[i, j, k] = i * 100 + j * 10 + k


@tack.kernel
def glsl_helpers(x, y, out):
    for i in range(x.shape[0]):
        out[i, 0] = clamp(x[i], -1.0, 1.0)
        out[i, 1] = saturate(x[i])
        out[i, 2] = mix(x[i], y[i], 0.25)
        out[i, 3] = step(0.5, x[i])
        out[i, 4] = smoothstep(-1.0, 2.0, x[i])
        out[i, 5] = fract(x[i])
        out[i, 6] = sign(x[i])
        out[i, 7] = tack.select(x[i] > y[i], x[i], y[i])


@tack.kernel
def show(x, n):
    for i in range(n):
        print("x[", i, "] =", x[i], x[i] > 1.0, "100%")
        print(tack.u8(250) + tack.u8(10), tack.f64(0.1), sep=",", end=";\n")
