"""Kernels that target the masks of the CPU's SIMD lanes (the widened path, issue 20): lanes that
leave loops at different times, break and continue in nested loops, stores under divergent ifs,
atomics under a mask, gathers and scatters, every dtype, tails and launches that start mid-gang.
Each has an independent reference in tests/cpp/test_lanes.cpp; the suite runs on both paths."""
import tack


@tack.kernel
def collatz(x, out):
    for i in range(x.shape[0]):
        n = x[i]
        steps = 0
        while n != 1 and steps < 500:
            if n % 2 == 0:
                n = n // 2
            else:
                n = 3 * n + 1
            steps += 1
        out[i] = steps


@tack.kernel
def nested_exits(x, out):
    for i in range(x.shape[0]):
        s = tack.i64(0)
        for j in range(x[i] % 9):
            if j == 3:
                continue
            if (i + j) % 5 == 4:
                break
            k = 0
            while True:
                k += 1
                if k > j:
                    break
                if k % 2 == 0:
                    continue
                s += k * (j + 1)
        out[i] = s


@tack.kernel
def divergent_stores(x, out, only_positive):
    for i in range(x.shape[0]):
        v = x[i]
        if v > 0.0:
            out[i] = v * 2.0
            only_positive[i] = v
        elif v < -1.0:
            out[i] = -v
        else:
            out[i] = 7.0


@tack.kernel
def gathers(x, idx, out, scattered):
    n = x.shape[0]
    for i in range(n):
        j = idx[i]
        out[i] = x[j] + x[(i * 7) % n] + x[0]
        scattered[j] = x[i]


@tack.kernel
def guarded_select(x, out):
    n = x.shape[0]
    for i in range(n):
        out[i] = x[i + 1] - x[i] if i + 1 < n else x[n - 1]


@tack.kernel
def mixed(x, out):
    n = x.shape[0]
    for i in range(n):
        v = x[i]
        w = x[(i + 3) % n]
        if v > w:
            r = v - w
        else:
            r = w - v + 1
        while r > 5:
            r = r // 2
        out[i] = max(r, min(v, w))


@tack.kernel
def bools(a, b, out):
    for i in range(a.shape[0]):
        out[i] = (a[i] and not b[i]) or (i % 3 == 0 and b[i])


@tack.kernel
def from_start(s, x, out):
    for i in range(s, x.shape[0]):
        out[i] = x[i] * 3 + i


@tack.kernel
def every_other(s, x, out):
    for i in range(s, x.shape[0], 2):
        out[i] = x[i] + 1


@tack.kernel
def rows(x, out):
    for i, j in tack.ndrange(x.shape[0], x.shape[1]):
        v = x[i, j]
        steps = 0
        while v > 1.0:
            v = v * 0.5
            steps += 1
        out[i, j] = steps + i * 100


@tack.kernel
def marked(x, out, counter):
    for i in range(x.shape[0]):
        if x[i] % 3 == 0:
            out[i] = tack.atomic_add(counter, 0, 1)


@tack.kernel
def transcendental(x, out):
    for i in range(x.shape[0]):
        v = x[i]
        if v > 0.5:
            out[i] = sin(v) + exp(v * 0.1)
        else:
            out[i] = cos(v) * log(v + 2.0)


@tack.func
def first_at_least(arr, n, v):
    for k in range(n):
        if arr[k] >= v:
            return k
    return -1


@tack.kernel
def search(table, x, out):
    n = table.shape[0]
    for i in range(x.shape[0]):
        out[i] = first_at_least(table, n, x[i])


@tack.kernel
def printed(x):
    for i in range(x.shape[0]):
        if x[i] % 2 == 0:
            print("lane", i, x[i])


@tack.kernel
def tickets(x, out, counter):
    for i in range(x.shape[0]):
        t = tack.i64(0)
        k = tack.i64(0)
        while k < x[i]:
            t += tack.atomic_add(counter, 0, 1)
            k += 1
        out[i] = t
