"""Device functions (@tack.func): early returns, tuple returns, arrays by reference, loops."""
import tack


@tack.func
def clamp01(x):
    if x < 0.0:
        return 0.0
    if x > 1.0:
        return 1.0
    return x


@tack.func
def floor_divmod(a, b):
    return a // b, a % b


@tack.func
def first_negative(arr, n):
    for k in range(n):
        if arr[k] < 0:
            return k
    return -1


@tack.func
def write_twice(out, i, v):
    out[i] = v
    out[i] = out[i] * 2


@tack.func
def collatz_steps(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


@tack.func
def positive(x):
    return x > 0


@tack.kernel
def use_funcs(x, data, out_f, out_q, out_r, out_idx, out_w, out_c):
    for i in range(x.shape[0]):
        out_f[i] = clamp01(x[i])
        q, r = floor_divmod(tack.i32(i) - 5, 3)
        out_q[i] = q
        out_r[i] = r
        out_idx[i] = first_negative(data, data.shape[0])
        write_twice(out_w, i, x[i])
        out_c[i] = collatz_steps(i + 1) if positive(x[i]) and clamp01(x[i]) < 1.0 else -1
