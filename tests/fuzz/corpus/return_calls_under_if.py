import tack
@tack.func
def inner(v):
    return v * 2.0
@tack.func
def outer(v):
    if v > 0.0:
        return inner(v) + 1.0
    return inner(v)
@tack.kernel
def k(x, out):
    for i in range(x.shape[0]):
        out[i] = outer(x[i])
