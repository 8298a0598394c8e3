"""Device classes (@tack.data_oriented) on every available backend: the cell average of
tests/kernels/cells.py over a computed and an explicit cell set against NumPy, the variant cache
(instance numbers are arguments, class constants compile a new variant), methods, static methods,
inheritance, nested objects, functions in attributes, kernels as methods, indexing, iteration,
the implicit arrays of tack.arrays, and the errors, in Python's spelling."""
import numpy as np
import pytest

import tack
from support import bits_equal, line_of
from tack.runtime.dispatch import get_backend

import cells

pytestmark = pytest.mark.usefixtures("backend")

f32 = np.float32


def quads(nx, ny):
    """The quads of an nx x ny grid of points, x fastest, counter-clockwise."""
    j, i = np.meshgrid(np.arange(ny - 1), np.arange(nx - 1), indexing="ij")
    i, j = i.ravel(), j.ravel()
    base = j * nx + i
    return np.stack([base, base + 1, base + nx + 1, base + nx], axis=1).astype(np.int32)


def cell_means(connectivity, values):
    """The kernel's sum, in its order: f32, point by point."""
    total = np.zeros(len(connectivity), f32)
    for k in range(connectivity.shape[1]):
        total += values[connectivity[:, k]]
    return total / f32(connectivity.shape[1])


@pytest.fixture
def values(rng):
    return (rng.standard_normal(7 * 5) * 10).astype(f32)


def test_cell_average_over_structured_and_explicit_cells(values):
    conn = quads(7, 5)
    expected = cell_means(conn, values)
    out = tack.zeros(len(conn))
    cells.cell_average(cells.StructuredCells(7, 5), tack.asarray(values), out)
    bits_equal(out.numpy(), expected)
    out = tack.zeros(len(conn))
    cells.cell_average(cells.ExplicitCells(tack.asarray(conn)), tack.asarray(values), out)
    bits_equal(out.numpy(), expected)
    tris = np.array([[0, 1, 8], [1, 9, 8], [30, 31, 24]], np.int32)
    out = tack.zeros(3)
    cells.cell_average(cells.ExplicitTriangles(tack.asarray(tris)), tack.asarray(values), out)
    bits_equal(out.numpy(), cell_means(tris, values))


def compiled():
    s = tack.cache_stats()
    return s.compiles + s.disk_hits  # a new variant: compiled now, or loaded from the disk cache


def test_instance_numbers_reuse_the_variant_class_constants_compile_a_new_one(values):
    v = tack.asarray(values)
    out = tack.zeros(64)
    cells.cell_average(cells.StructuredCells(4, 3), v, out)
    before, hits = compiled(), tack.cache_stats().memory_hits
    cells.cell_average(cells.StructuredCells(7, 5), v, out)  # other numbers: the same variant
    assert compiled() == before
    assert tack.cache_stats().memory_hits > hits

    class Hexahedra(cells.StructuredCells):  # a subclass with another constant
        points_per_cell = 3

    cells.cell_average(Hexahedra(7, 5), v, out)
    assert compiled() == before + 1
    # The class's own constant, changed on the live class: another variant again.
    original = cells.StructuredCells.points_per_cell
    try:
        cells.StructuredCells.points_per_cell = 2
        out = tack.zeros(24)
        cells.cell_average(cells.StructuredCells(7, 5), v, out)
        assert compiled() == before + 2
        conn = quads(7, 5)[:, :2]
        bits_equal(out.numpy(), cell_means(conn, values))
    finally:
        cells.StructuredCells.points_per_cell = original


# ---- the language ----


@tack.func
def twice(x):
    return 2 * x


@tack.data_oriented
class Scale:
    factor = 3

    def __init__(self, offset, data=None):
        self.offset = offset
        if data is not None:
            self.data = data

    @tack.func
    def apply(self, x):
        return self.helper(x) * self.factor + self.offset

    @staticmethod
    @tack.func
    def helper(x):
        return x + 1

    @tack.func
    def __getitem__(self, i):
        return self.apply(self.data[i])

    @tack.func
    def __len__(self):
        return len(self.data)

    def host_only(self, x):
        return x

    @tack.kernel
    def fill(self, out):
        for i in range(len(self)):
            out[i] = self[i]


@tack.data_oriented
class Doubling(Scale):
    factor = 2

    @tack.func
    def apply(self, x):
        return self.factor * x


@tack.data_oriented
class Holder:
    def __init__(self, inner, f):
        self.inner = inner
        self.f = f

    @tack.func
    def run(self, x):
        return self.f(self.inner.apply(x))


@tack.kernel
def apply_all(s: tack.template(), x, out):
    for i in range(x.shape[0]):
        out[i] = s.apply(x[i])


@tack.kernel
def run_all(h, x, out):
    for i in range(x.shape[0]):
        out[i] = h.run(x[i])


@tack.data_oriented
class Slotted(Scale):
    __slots__ = ("offset",)  # instance attributes in slots, not in __dict__


def test_methods_static_methods_and_overrides():
    x = np.array([0, 1, 2, 3, -4], np.int32)
    out = tack.empty(5, tack.i32)
    apply_all(Scale(10), tack.asarray(x), out)
    np.testing.assert_array_equal(out.numpy(), (x + 1) * 3 + 10)
    apply_all(Doubling(10), tack.asarray(x), out)
    np.testing.assert_array_equal(out.numpy(), 2 * x)
    apply_all(Slotted(7), tack.asarray(x), out)
    np.testing.assert_array_equal(out.numpy(), (x + 1) * 3 + 7)


def test_nested_objects_functions_in_attributes_indexing_and_kernel_methods():
    x = np.array([1, 2, 3, 4], np.int32)
    out = tack.empty(4, tack.i32)
    run_all(Holder(Scale(1), twice), tack.asarray(x), out)
    np.testing.assert_array_equal(out.numpy(), 2 * ((x + 1) * 3 + 1))
    Scale(5, tack.asarray(x)).fill(out)  # a kernel that is a method: self is the object
    np.testing.assert_array_equal(out.numpy(), (x + 1) * 3 + 5)


@tack.data_oriented
class Volume:
    __tack_iterate__ = ("nx", "ny", "nz")

    def __init__(self, shape):
        self.nz, self.ny, self.nx = shape


@tack.kernel
def positions(v, out):
    for c in v:
        out[tack.ivec3(c.z, c.y, c.x)] = c.x + 10 * c.y + 100 * c.z  # a vector of indices


def test_iterating_three_names_gives_an_index_vector_fastest_first():
    out = tack.zeros((2, 3, 4), tack.i64)
    positions(Volume((2, 3, 4)), out)
    z, y, x = np.indices((2, 3, 4))
    np.testing.assert_array_equal(out.numpy(), x + 10 * y + 100 * z)


# ---- tack.arrays ----


@tack.kernel
def saxpy(a, x, y, out):
    for i in range(len(x)):
        out[i] = a * x[i] + y[i]


@tack.kernel
def add_rows(a, b, out):
    for i, j in tack.ndrange(a.shape[0], a.shape[1]):
        out[i, j] = a[i, j] + b[i, j]


@tack.kernel
def centroids(points, cells, out):
    for c in range(cells.shape[0]):
        total = points[cells[c, 0]]
        for k in range(1, cells.shape[1]):
            total += points[cells[c, k]]
        out[c] = total / cells.shape[1]


def test_implicit_arrays_wherever_a_kernel_indexes_an_array():
    n = 1000
    out = tack.empty(n)
    y = np.linspace(0, 1, n).astype(f32)
    saxpy(f32(2.0), tack.arrays.CountingArray(f32(0.5), f32(0.25), n), tack.asarray(y), out)
    bits_equal(out.numpy(), f32(2.0) * (f32(0.5) + f32(0.25) * np.arange(n, dtype=f32)) + y)
    saxpy(f32(3.0), tack.arrays.ConstantArray(f32(1.5), n), tack.asarray(y), out)
    bits_equal(out.numpy(), f32(3.0) * f32(1.5) + y)
    ones = tack.arrays.ConstantArray(1, (4, 5))
    assert ones.shape == (4, 5) and isinstance(ones, tack.arrays.ConstantArray)
    grid = tack.empty((4, 5), tack.i64)
    add_rows(ones, tack.arrays.CountingArray(10, 2, (4, 5)), grid)  # shape[k] of an object
    np.testing.assert_array_equal(grid.numpy(), 1 + 10 + 2 * np.arange(20).reshape(4, 5))

    xs, ys, zs = (np.array(v, f32) for v in ([0, 1, 3], [0, 2], [-1, 1]))
    points = tack.arrays.CartesianProduct(tack.asarray(xs), tack.asarray(ys), tack.asarray(zs))
    explicit = np.stack(np.meshgrid(xs, ys, zs, indexing="ij"), -1).transpose(2, 1, 0, 3)
    explicit = explicit.reshape(-1, 3)  # x fastest
    cell_list = np.array([[0, 1, 4, 3], [6, 7, 10, 9], [1, 2, 5, 4]], np.int32)
    cell_list = tack.asarray(cell_list)
    out = tack.empty((3, 3))
    centroids(points, cell_list, out)
    expected = tack.empty((3, 3))
    centroids(tack.asarray(explicit), cell_list, expected)
    bits_equal(out.numpy(), expected.numpy())
    p64 = tack.arrays.CartesianProduct(*(tack.asarray(a, tack.f64) for a in (xs, ys, zs)))
    out64 = tack.empty((3, 3), tack.f64)
    if get_backend().supports_f64:
        centroids(p64, cell_list, out64)
        np.testing.assert_allclose(out64.numpy(), expected.numpy(), rtol=1e-6)


# ---- errors ----


@tack.data_oriented
class Bad:
    def __init__(self, value):
        self.value = value
        self.unused = ["a list nobody reads"]

    def area(self):
        return 1.0


@tack.kernel
def read_value(b, out):
    for i in range(out.shape[0]):
        out[i] = b.value


@tack.kernel
def call_area(b, out):
    for i in range(out.shape[0]):
        out[i] = b.area()


@pytest.mark.parametrize(
    "value, what",
    [([1, 2], "a list"), ("text", "a str"), (np.zeros(3, np.float16), "float16")],
)
def test_an_attribute_kernels_cannot_take_is_a_type_error_naming_it(value, what):
    out = tack.zeros(4)
    with pytest.raises(TypeError) as e:
        read_value(Bad(value), out)
    message = str(e.value)
    assert "attribute 'value' of class 'Bad'" in message and what in message, message
    assert f":{line_of(read_value.__wrapped__, 'b.value')}:" in message
    np.testing.assert_array_equal(out.numpy(), 0)  # nothing ran
    read_value(Bad(2.5), out)  # the unused list is not read: the call runs
    np.testing.assert_array_equal(out.numpy(), 2.5)


def test_calling_a_method_that_is_not_a_tack_func_is_a_compile_error_naming_it():
    with pytest.raises(tack.CompileError) as e:
        call_area(Bad(1.0), tack.zeros(4))
    assert "'Bad.area' is not a @tack.func" in e.value.message
    assert e.value.kernel == "call_area"
    assert e.value.lineno == line_of(call_area.__wrapped__, "b.area()")
    assert "@tack.func" in e.value.hint


def test_an_object_that_contains_itself_is_a_type_error():
    s = Scale(1)
    s.me = s
    with pytest.raises(TypeError, match="contains it"):
        apply_all(s, tack.zeros(2, tack.i32), tack.empty(2, tack.i32))


def test_template_is_the_only_annotation():
    with pytest.raises(tack.CompileError, match="parameter annotations are not supported"):

        @tack.kernel
        def annotated(x: int, out):
            for i in range(1):
                out[i] = x

        annotated(1, tack.zeros(1))
    assert repr(tack.template()) == "tack.template()"


def test_data_oriented_checks_its_class():
    with pytest.raises(TypeError, match="decorates a class"):
        tack.data_oriented(lambda: 0)
    with pytest.raises(TypeError, match="__tack_iterate__"):

        @tack.data_oriented
        class TooMany:
            __tack_iterate__ = ("a", "b", "c", "d")
