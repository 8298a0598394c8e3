import tack
@tack.kernel
def k(x, out, n):
    for i in range(n):
        out[i] = (x[i] << 3) >> 1
        out[i] += 1 << 40 >> 39
