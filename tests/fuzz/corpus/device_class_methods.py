import tack

SCALE = tack.constant(2.0)


@tack.func
def clamp01(x):
    return min(max(x, 0.0), 1.0)


@tack.data_oriented
class Base:
    factor = 3
    offset = SCALE * 2
    __tack_iterate__ = ("count",)

    def __init__(self, count):
        self.count = [count]

    @tack.func
    def value(self, i):
        return self.helper(self.data[i]) * self.factor

    @staticmethod
    @tack.func
    def helper(x):
        return clamp01(x + 1.0)

    @tack.func
    def __getitem__(self, i):
        return self.value(i) + self.offset

    @tack.func
    def __len__(self):
        return len(self.data)


@tack.data_oriented
class Derived(Base):
    factor = 5

    @tack.func
    def value(self, i):
        return self.inner.value(i) - self.factor

    @tack.kernel
    def fill(self, out):
        for i in range(len(self)):
            out[i] = self[i] + self.f(i)


@tack.kernel
def over_cells(cells: tack.template(), out):
    for c in cells:
        local = tack.local_array(tack.f32, cells.factor)
        for k in range(cells.factor):
            local[k] = cells[c] * k
        out[c] = local[cells.factor - 1]
