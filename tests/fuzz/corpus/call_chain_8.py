import tack
@tack.func
def f0(a):
    return a + 1.0
@tack.func
def f1(a):
    if a > 10.0:
        return f0(a) - 1.0
    return f0(a) + 1.0
@tack.func
def f2(a):
    if a > 10.0:
        return f1(a) - 1.0
    return f1(a) + 1.0
@tack.func
def f3(a):
    if a > 10.0:
        return f2(a) - 1.0
    return f2(a) + 1.0
@tack.func
def f4(a):
    if a > 10.0:
        return f3(a) - 1.0
    return f3(a) + 1.0
@tack.func
def f5(a):
    if a > 10.0:
        return f4(a) - 1.0
    return f4(a) + 1.0
@tack.func
def f6(a):
    if a > 10.0:
        return f5(a) - 1.0
    return f5(a) + 1.0
@tack.func
def f7(a):
    if a > 10.0:
        return f6(a) - 1.0
    return f6(a) + 1.0
@tack.kernel
def k(x, out):
    for i in range(x.shape[0]):
        out[i] = f7(x[i])
