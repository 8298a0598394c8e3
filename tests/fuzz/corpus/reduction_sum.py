import tack


@tack.kernel
def total(x) -> tack.f32:
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i]
    return s
