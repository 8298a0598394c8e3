import tack
if __name__ == "__main__": pass
elif 1
@tack.kernel
def k(a): pass
