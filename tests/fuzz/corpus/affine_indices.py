import tack


@tack.kernel
def affine(x, out, n, c, taps):
    half = n // 2
    for i, j in tack.ndrange((1, half - 1), (0, out.shape[1])):
        s = 0.0
        for t in range(taps):
            s += x[2 * i + c - t, j]
        k = i + half
        if k < out.shape[0]:
            out[k, j] = s + x[i - 1, j] + x[i + 1, j]
        out[i, j] = s if i > 0 else x[i, j]
