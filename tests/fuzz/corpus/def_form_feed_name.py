import tack
@tack.kernel
def k(a): pass
@tack.kernel
deff(a): pass
