"""Implicit arrays: device classes that a kernel indexes like arrays, computing each element
instead of reading it from memory.

    ones = tack.arrays.ConstantArray(1.0, 1000)       # ones[i] == 1.0
    ids = tack.arrays.CountingArray(0, 1, 1000)       # ids[i] == i
    points = tack.arrays.CartesianProduct(xs, ys, zs) # points[i] == vec3(xs[a], ys[b], zs[c])

Wherever a kernel indexes an array argument, `a[i]` (or `a[i, j]`, `a[i, j, k]` for more
dimensions), it can be given one of these instead; `len(a)` and `a.shape[k]` read the extents.
They are written in Tack itself (@tack.data_oriented classes, tack/_classes.py), so they compile
to the same code on every backend. Each class's constructor picks the subclass for its rank (ConstantArray2...) or
precision (CartesianProduct64), since an element has one number of indices and one type. This file
is also a kernels file: a C++ program may load it and build, say, a `ConstantArray1` by name.
"""
import tack


@tack.data_oriented
class ImplicitArray:
    """The base of the implicit arrays: `shape` (a tuple, read as a.shape[k] in a kernel too),
    `ndim`, and len(a)."""

    ndim = 1

    @staticmethod
    def _new(cls, shape, subclasses):
        """An object of the subclass for the rank of `shape` (an int or 1 to 3 extents)."""
        shape = (shape,) if not hasattr(shape, "__len__") else tuple(shape)
        if not 1 <= len(shape) <= 3:
            raise ValueError(f"an implicit array has one to three dimensions, not {len(shape)}")
        extents = tuple(int(n) for n in shape)
        if any(n < 0 for n in extents):
            raise ValueError(f"an implicit array's shape has no negative extent: {shape}")
        obj = object.__new__(subclasses[len(extents) - 1])
        obj.shape = extents
        obj.n0, obj.n1, obj.n2 = extents + (1,) * (3 - len(extents))
        return obj

    @tack.func
    def __len__(self):
        return self.n0


@tack.data_oriented
class ConstantArray(ImplicitArray):
    """Every element is `value` (a number): a[i] == value for every index of `shape`."""

    def __new__(cls, value, shape):
        return ImplicitArray._new(cls, shape, (ConstantArray1, ConstantArray2, ConstantArray3))

    def __init__(self, value, shape):
        self.value = value


@tack.data_oriented
class ConstantArray1(ConstantArray):
    ndim = 1

    @tack.func
    def __getitem__(self, i):
        return self.value


@tack.data_oriented
class ConstantArray2(ConstantArray):
    ndim = 2

    @tack.func
    def __getitem__(self, i, j):
        return self.value


@tack.data_oriented
class ConstantArray3(ConstantArray):
    ndim = 3

    @tack.func
    def __getitem__(self, i, j, k):
        return self.value


@tack.data_oriented
class CountingArray(ImplicitArray):
    """start, start + step, start + 2 step, ...: the element at a (row-major) flat index f is
    start + step * f, computed in the promoted type of start, step and the index (a float start
    gives floats, integers give i64)."""

    def __new__(cls, start, step, shape):
        return ImplicitArray._new(cls, shape, (CountingArray1, CountingArray2, CountingArray3))

    def __init__(self, start, step, shape):
        self.start = start
        self.step = step


@tack.data_oriented
class CountingArray1(CountingArray):
    ndim = 1

    @tack.func
    def __getitem__(self, i):
        return self.start + self.step * i


@tack.data_oriented
class CountingArray2(CountingArray):
    ndim = 2

    @tack.func
    def __getitem__(self, i, j):
        return self.start + self.step * (i * self.n1 + j)


@tack.data_oriented
class CountingArray3(CountingArray):
    ndim = 3

    @tack.func
    def __getitem__(self, i, j, k):
        return self.start + self.step * ((i * self.n1 + j) * self.n2 + k)


@tack.data_oriented
class CartesianProduct(ImplicitArray):
    """The points of a rectilinear grid: xs, ys and zs are 1-D arrays of coordinates, and point i
    (x fastest: i = a + nx * (b + ny * c)) is the vector (xs[a], ys[b], zs[c]), a vec3 for f32
    coordinates and a dvec3 for f64 ones, as a points array of shape (nx * ny * nz, 3) gives."""

    def __new__(cls, xs, ys, zs):
        f64 = any(tack.dtype(a.dtype) == tack.f64 for a in (xs, ys, zs))
        return object.__new__(CartesianProduct64 if f64 else CartesianProduct32)

    def __init__(self, xs, ys, zs):
        self.xs, self.ys, self.zs = xs, ys, zs
        self.n0 = len(xs) * len(ys) * len(zs)
        self.shape = (self.n0, 3)

    @tack.func
    def indices(self, i):
        nx = len(self.xs)
        ny = len(self.ys)
        return i % nx, (i // nx) % ny, i // (nx * ny)


@tack.data_oriented
class CartesianProduct32(CartesianProduct):
    @tack.func
    def __getitem__(self, i):
        a, b, c = self.indices(i)
        return tack.vec3(self.xs[a], self.ys[b], self.zs[c])


@tack.data_oriented
class CartesianProduct64(CartesianProduct):
    @tack.func
    def __getitem__(self, i):
        a, b, c = self.indices(i)
        return tack.dvec3(self.xs[a], self.ys[b], self.zs[c])
