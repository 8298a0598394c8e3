import tack


@tack.func
def inner(v):
    return v * 2.0


@tack.func
def f0(a):
    return inner(a) + 1.0


@tack.func
def f1(a):
    if a > 0.0:
        return f0(a) - 1.0
    return f0(f0(a))


@tack.func
def pair(a):
    return inner(a), f1(a)


@tack.kernel
def k(x, out):
    for i in range(x.shape[0]):
        p, q = pair(x[i])
        out[i] = f1(x[i]) + p + q
