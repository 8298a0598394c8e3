import tack
@tack.kernel
def k(x, out):
    for i in range(x.shape[0]):
        v = x[i]
        out[i] = v.x + v.y
