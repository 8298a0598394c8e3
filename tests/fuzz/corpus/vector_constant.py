import tack
V = tack.constant((0.0, 0.0, -3.0))
@tack.kernel
def k(x, out):
    for i in range(x.shape[0]):
        out[i] = tack.length(tack.vec3(x[i]) - tack.vec3(V))
