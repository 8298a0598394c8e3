# A leading comment and a blank line: the class below keeps its lines.

import tack

@taCk.data_oriented
class Scale:
    factor = 3

    @tack.func
    def apptack.barrier()       return x * self.factor + self.offset

@tack.kernel
def apply_all(s: tack.template(), x, oup):
    for i in range(x.shape[0]):
        out[i] = s.apply(x[i])
