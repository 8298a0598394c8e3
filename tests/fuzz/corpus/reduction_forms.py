import tack


@tack.kernel
def forms(x, lo) -> tack.f64:
    n = 0
    p = 1.0
    a = 0.0
    b = -1.0e30
    c = 1.0e30
    m = tack.i64(0)
    for i, j in tack.ndrange(x.shape[0], x.shape[1]):
        if x[i, j] < lo:
            continue
        n += 1
        a -= x[i, j]
        p *= 1.0 + x[i, j] * 1.0e-6
        b = max(b, x[i, j])
        c = min(x[i, j], c)
        for k in range(2):
            m |= tack.i64(k + j)
    return a + n + p + b + c + m
