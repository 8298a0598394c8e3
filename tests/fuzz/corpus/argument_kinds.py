import tack


@tack.kernel
def kinds(x, s, out):
    for i in range(len(x)):
        out[i] = x[i] * s + x.shape[0]
