# A leading comment and a blank line: the class below keeps its lines.

import tack

@tack.data_oriented
class Scale:
    factor = 3

    @tack.func
    def apply(self, x):
        return x * self.factor + self.offset

@tack.kernel
def apply_all(s: tack.template(), x, out):
    for i in range(x.shape[0]):
        out[i] = s.apply(x[i])
