import tack
BIG = tack.constant(1e-77777777777777777777777777)
@tack.kernel
def k(x):
    for i in range(x.shape[0]):
        x[i] = 99.9e9223372036854775807 + BIG
