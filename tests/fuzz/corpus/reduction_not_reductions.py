import tack


@tack.kernel
def copies(x, out):
    s = 1.0
    for i in range(x.shape[0]):
        s += x[i]
        out[i] = s


@tack.kernel
def assigned(x) -> tack.f32:
    s = 0.0
    for i in range(x.shape[0]):
        s = x[i]
    return s


@tack.kernel
def mixed(x) -> tack.f32:
    s = 1.0
    for i in range(x.shape[0]):
        s += x[i]
        s *= 2.0
    return s


@tack.kernel
def loop_local(x) -> tack.f32:
    for i in range(x.shape[0]):
        t = x[i]
    return t + i
