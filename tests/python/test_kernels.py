"""Kernels of the shared kernels files (examples/kernels.py, tests/kernels/arith.py) and kernels
written in the test, checked against NumPy: bit for bit where both compute the same operations in
the same order (the CPU backend contracts no multiply-add and uses no fast math)."""
import linecache
import math
import sys

import numpy as np
import pytest

import tack
from support import bits_equal

import arith
import kernels

pytestmark = pytest.mark.usefixtures("backend")

f32 = np.float32


# ---- examples/kernels.py ----


def test_vector_add(rng):
    x, y = rng.standard_normal((2, 10_000)).astype(f32)
    out = tack.empty((10_000,))
    kernels.vector_add(tack.asarray(x), tack.asarray(y), out)
    bits_equal(out.numpy(), x + y)


def test_saxpy(rng):
    x, y = rng.standard_normal((2, 4097)).astype(f32)
    out = tack.zeros((4097,))
    kernels.saxpy(2.5, tack.asarray(x), tack.asarray(y), out)
    bits_equal(out.numpy(), f32(2.5) * x + y)


def test_stencil5(rng):
    u = rng.random((67, 45), dtype=f32)
    out = tack.zeros(u.shape)
    kernels.stencil5(tack.asarray(u), out)
    want = np.zeros_like(u)
    want[1:-1, 1:-1] = f32(0.25) * (((u[:-2, 1:-1] + u[2:, 1:-1]) + u[1:-1, :-2]) + u[1:-1, 2:])
    bits_equal(out.numpy(), want)


def mandelbrot_reference(h, w, x0, y0, dx, dy, max_iter):
    j, i = np.meshgrid(np.arange(w, dtype=f32), np.arange(h, dtype=f32))
    cr = f32(x0) + j * f32(dx)
    ci = f32(y0) + i * f32(dy)
    zr = np.zeros_like(cr)
    zi = np.zeros_like(cr)
    n = np.zeros(cr.shape, np.int32)
    for _ in range(max_iter):
        active = zr * zr + zi * zi <= f32(4.0)
        if not active.any():
            break
        t = zr * zr - zi * zi + cr
        new_zi = f32(2.0) * zr * zi + ci
        zr = np.where(active, t, zr)
        zi = np.where(active, new_zi, zi)
        n += active
    return n


def test_mandelbrot():
    h, w = 48, 64
    out = tack.zeros((h, w), dtype=tack.i32)
    kernels.mandelbrot(out, -2.0, -1.2, 3.0 / w, 2.4 / h, 100)
    bits_equal(out.numpy(), mandelbrot_reference(h, w, -2.0, -1.2, 3.0 / w, 2.4 / h, 100))


def test_nbody_step(rng):
    n, dt = 64, f32(0.01)
    pos = rng.standard_normal((n, 3)).astype(f32)
    vel = rng.standard_normal((n, 3)).astype(f32) * f32(0.1)
    mass = rng.random(n, dtype=f32) + f32(0.5)
    new_pos, new_vel = tack.empty((n, 3)), tack.empty((n, 3))
    kernels.nbody_step(tack.asarray(pos), tack.asarray(vel), tack.asarray(mass), new_pos, new_vel,
                       0.01)
    # The same operations in the same order, vectorized over i only.
    xi, yi, zi = pos[:, 0], pos[:, 1], pos[:, 2]
    ax = np.zeros(n, f32)
    ay = np.zeros(n, f32)
    az = np.zeros(n, f32)
    soft = f32(1e-4)
    for j in range(n):
        dx, dy, dz = pos[j, 0] - xi, pos[j, 1] - yi, pos[j, 2] - zi
        r2 = dx * dx + dy * dy + dz * dz + soft
        s = mass[j] / (r2 * np.sqrt(r2))
        ax += dx * s
        ay += dy * s
        az += dz * s
    v = np.stack([vel[:, 0] + ax * dt, vel[:, 1] + ay * dt, vel[:, 2] + az * dt], axis=1)
    p = np.stack([xi + v[:, 0] * dt, yi + v[:, 1] * dt, zi + v[:, 2] * dt], axis=1)
    bits_equal(new_vel.numpy(), v)
    bits_equal(new_pos.numpy(), p)


# ---- tests/kernels/arith.py ----

INT_TYPES = ["i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64"]
NP = {"i8": np.int8, "u8": np.uint8, "i16": np.int16, "u16": np.uint16, "i32": np.int32,
      "u32": np.uint32, "i64": np.int64, "u64": np.uint64, "f32": np.float32, "f64": np.float64}


@pytest.mark.parametrize("name", INT_TYPES)
def test_integer_arithmetic_wraps_and_floors_like_numpy(name, rng):
    t = NP[name]
    info = np.iinfo(t)
    n = 257
    a = rng.integers(info.min, info.max, n, dtype=t, endpoint=True)
    b = rng.integers(info.min, info.max, n, dtype=t, endpoint=True)
    b[b == 0] = 3
    if info.min < 0:
        b[b == -1] = 5  # MIN // -1 overflows in C; not what this test is about
    e = rng.integers(0, 9, n).astype(t)  # exponents: non-negative
    outs = [tack.empty((n,), dtype=name) for _ in range(6)]
    arith.int_binary(tack.asarray(a), tack.asarray(b), *outs[:5], tack.empty((n,), dtype=name))
    floordiv, mod, add, sub, mul = (o.numpy() for o in outs[:5])
    with np.errstate(all="ignore"):
        bits_equal(floordiv, a // b)
        bits_equal(mod, a % b)
        bits_equal(add, a + b)
        bits_equal(sub, a - b)
        bits_equal(mul, a * b)
        power = tack.empty((n,), dtype=name)
        arith.int_binary(tack.asarray(a), tack.asarray(e), *(tack.empty((n,), dtype=name)
                                                             for _ in range(5)), power)
        bits_equal(power.numpy(), a ** e)


@pytest.mark.parametrize("name", ["i32", "u32", "i64", "u8"])
def test_shifts(name, rng):
    t = NP[name]
    info = np.iinfo(t)
    a = rng.integers(info.min, info.max, 100, dtype=t, endpoint=True)
    s = rng.integers(0, info.bits, 100).astype(t)
    left, right = tack.empty((100,), dtype=name), tack.empty((100,), dtype=name)
    arith.shifts(tack.asarray(a), tack.asarray(s), left, right)
    bits_equal(left.numpy(), np.left_shift(a, s))
    bits_equal(right.numpy(), np.right_shift(a, s))


@pytest.mark.parametrize("name", ["f32", "f64"])
def test_float_floor_division_modulo_and_division(name, rng):
    t = NP[name]
    a = (rng.standard_normal(500) * 100).astype(t)
    b = (rng.standard_normal(500) * 10).astype(t)
    b[b == 0] = 1
    fd, mod, div, power = (tack.empty((500,), dtype=name) for _ in range(4))
    arith.float_binary(tack.asarray(a), tack.asarray(b), fd, mod, div, power)
    bits_equal(fd.numpy(), np.floor_divide(a, b))
    bits_equal(mod.numpy(), np.mod(a, b))
    bits_equal(div.numpy(), a / b)
    with np.errstate(all="ignore"):
        want = np.power(a, b)
    np.testing.assert_allclose(power.numpy(), want, rtol=1e-6 if name == "f32" else 1e-14,
                               equal_nan=True)


def test_float_to_int_truncates():
    x = np.array([2.7, -2.7, 1e6 + 0.5, -0.5, 0.0, 123.999], np.float32)
    out = tack.empty((6,), dtype=tack.i32)
    arith.to_i32(tack.asarray(x), out)
    bits_equal(out.numpy(), np.trunc(x).astype(np.int32))


def test_integer_true_division_gives_f32():
    a = np.array([7, -7, 1, 0, 1 << 20], np.int32)
    b = np.array([2, 2, 3, 5, 7], np.int32)
    out = tack.empty((5,), dtype=tack.f32)
    arith.true_divide(tack.asarray(a), tack.asarray(b), out)
    bits_equal(out.numpy(), a.astype(f32) / b.astype(f32))


def test_signed_and_unsigned_compare_by_value():
    a = np.array([-1, 5, np.iinfo(np.int32).min, 7], np.int32)
    b = np.array([1, 4, 0, 7], np.uint32)
    out = tack.empty((4,), dtype=tack.bool_)
    arith.mixed_compare(tack.asarray(a), tack.asarray(b), out)
    bits_equal(out.numpy(), a.astype(np.int64) < b.astype(np.int64))


def test_min_max_propagate_nan():
    a = np.array([1, np.nan, -0.0, 3, 2], f32)
    b = np.array([np.nan, 2, 0.0, -4, 2], f32)
    lo, hi = tack.empty((5,)), tack.empty((5,))
    arith.min_max_nan(tack.asarray(a), tack.asarray(b), lo, hi)
    np.testing.assert_array_equal(lo.numpy(), np.minimum(a, b))
    np.testing.assert_array_equal(hi.numpy(), np.maximum(a, b))


@pytest.mark.parametrize("name", ["f32", "f64"])
def test_rounding_is_half_to_even(name, rng):
    t = NP[name]
    x = np.concatenate([np.array([0.5, 1.5, 2.5, -0.5, -1.5, 2.4, -2.6], t),
                        (rng.standard_normal(200) * 50).astype(t)])
    outs = [tack.empty(x.shape, dtype=name) for _ in range(4)]
    arith.rounding(tack.asarray(x), *outs)
    r, f, c, tr = (o.numpy() for o in outs)
    np.testing.assert_array_equal(r, np.round(x))
    np.testing.assert_array_equal(f, np.floor(x))
    np.testing.assert_array_equal(c, np.ceil(x))
    np.testing.assert_array_equal(tr, np.trunc(x))


def test_sequential_loops():
    n = 20
    out = tack.empty((12,), dtype=tack.i64)
    arith.sequential_loops(n, out)
    want = []
    for i in range(12):
        s = sum(range(i, n, 3))
        for k in range(n, i, -2):
            if k % 5 == 0:
                continue
            if k < 4:
                break
            s += 1
        j = 0
        while True:
            j += 1
            if j >= i:
                break
        want.append(s * 100 + j)
    assert out.numpy().tolist() == want


def test_swap_and_chain(rng):
    x = rng.uniform(-50, 150, 300).astype(f32)
    y = rng.uniform(-50, 150, 300).astype(f32)
    out = tack.empty((300,), dtype=tack.i32)
    arith.swap_and_chain(tack.asarray(x), tack.asarray(y), out)
    a, b = y, x
    want = np.where((0 <= a) & (a < b) & (b < 100), 1, 2).astype(np.int32)
    bits_equal(out.numpy(), want)


def test_kernel_return_value_is_a_host_number():
    r = arith.sum_of(tack.asarray(np.array([1.5, 2, 3, 4.25], f32)))
    assert type(r) is float and r == 5.75


def test_ndrange_with_a_start():
    out = tack.full((3, 4, 5), -1, dtype=tack.i32)
    arith.grid(out)
    i, j, k = np.meshgrid(np.arange(3), np.arange(4), np.arange(5), indexing="ij")
    want = (i * 100 + j * 10 + k).astype(np.int32)
    want[:, 0, :] = -1
    bits_equal(out.numpy(), want)


# ---- kernels written here: decorators, constants, device functions, arguments ----

SCALE = tack.constant(3)
BIG = tack.constant(2**63 + 5)
HALF = tack.constant(0.5, dtype=tack.f64)


@tack.func
def clamp01(v):
    return min(max(v, 0.0), 1.0)


@tack.func
def scaled(v):
    return v * SCALE


@tack.kernel
def uses_funcs_and_constants(x, out):
    for i in range(x.shape[0]):
        out[i] = clamp01(x[i]) + scaled(tack.f32(i))


def test_device_functions_and_constants():
    x = np.linspace(-1, 2, 50, dtype=f32)
    out = tack.empty((50,))
    uses_funcs_and_constants(tack.asarray(x), out)
    want = np.clip(x, 0, 1) + np.arange(50, dtype=f32) * f32(3)
    bits_equal(out.numpy(), want)


@tack.kernel
def big_constant(out):
    for i in range(out.shape[0]):
        out[i] = BIG


@tack.kernel
def f64_constant(out):
    for i in range(out.shape[0]):
        out[i] = HALF * i


def test_constants_with_dtypes():
    out = tack.empty((2,), dtype=tack.u64)
    big_constant(out)
    assert out.numpy().tolist() == [2**63 + 5] * 2
    d = tack.empty((4,), dtype=tack.f64)
    f64_constant(d)
    assert d.numpy().tolist() == [0.0, 0.5, 1.0, 1.5]


def test_kernel_defined_in_a_function_with_math_and_imported_names():
    from math import pi
    from tack import f64, sqrt

    @tack.kernel
    def nested(x, out):
        for i in range(x.shape[0]):
            out[i] = f64(sqrt(x[i])) + math.floor(pi) + tack.f64(math.e) * 0

    x = np.array([1, 4, 9, 2], np.float64)
    out = tack.empty((4,), dtype=tack.f64)
    nested(tack.asarray(x), out)
    np.testing.assert_array_equal(out.numpy(), np.sqrt(x) + 3)


@tack.kernel
def scalar_kinds(out, a, b, c, d):
    for i in range(out.shape[0]):
        out[i] = tack.f64(a) + tack.f64(b) + tack.f64(c) + (1.0 if d else 0.0)


def test_scalar_arguments_python_and_numpy():
    out = tack.empty((3,), dtype=tack.f64)
    scalar_kinds(out, 2, 2.5, np.int16(7), True)
    assert out.numpy().tolist() == [12.5] * 3
    scalar_kinds(out, np.int64(2**40), np.float32(0.25), np.uint8(1), np.bool_(False))
    assert out.numpy().tolist() == [2.0**40 + 1.25] * 3
    scalar_kinds(out, 2**63 + 1, np.float64(1.0), 2**40, False)  # u64 and i64 scalars
    assert out.numpy().tolist() == [float(2**63 + 1) + 1.0 + 2.0**40] * 3


def test_numpy_arrays_are_kernel_arguments_without_a_copy(rng):
    x = rng.standard_normal(100).astype(f32)
    y = rng.standard_normal(100).astype(f32)
    out = np.zeros(100, f32)
    kernels.vector_add(x, y, out)  # out is written in place: NumPy's memory, no copy
    bits_equal(out, x + y)
    mixed = tack.empty((100,))
    if tack.get_default_device() != tack.device("cpu"):
        with pytest.raises(TypeError, match="copy it"):  # NumPy memory is the CPU's
            kernels.vector_add(tack.asarray(x), y, mixed)
        return
    kernels.vector_add(tack.asarray(x), y, mixed)
    bits_equal(mixed.numpy(), x + y)


def test_row_slices_are_views_kernels_write_through(backend):
    a = tack.zeros((40,))
    ones = tack.ones((4,))
    kernels.vector_add(ones, ones, a[32:36])  # 128 bytes in: a view every backend passes
    assert a.numpy().tolist() == [0] * 32 + [2] * 4 + [0] * 4
    if backend == "opencl":  # sub-buffers start at the device's base alignment
        with pytest.raises(ValueError, match="pass a copy"):
            kernels.vector_add(ones, ones, a[3:7])
        return
    kernels.vector_add(ones, ones, a[3:7])
    assert a.numpy().tolist()[:8] == [0, 0, 0, 2, 2, 2, 2, 0]


def test_each_argument_type_is_a_variant_and_calls_are_cached():
    before = tack.cache_stats()
    for dtype in ("f32", "f64", "i32"):
        x = tack.ones((8,), dtype=dtype)
        out = tack.empty((8,), dtype=dtype)
        kernels.vector_add(x, x, out)
        kernels.vector_add(x, x, out)
        assert out.numpy().tolist() == [2] * 8
    after = tack.cache_stats()
    assert after.memory_hits - before.memory_hits >= 3


def test_inspect_modes(backend):
    x = tack.ones((8,))
    ir = tack.inspect(kernels.vector_add, x, x, x)
    assert "vector_add" in ir and "parallel for" in ir
    source = tack.inspect(kernels.vector_add, x, x, x, mode="source")
    assert {"cpu": "define", "opencl": "__kernel", "cuda": "__global__"}.get(backend, "") in source
    assert tack.inspect(kernels.vector_add, x, x, x, mode="optimized")
    with pytest.raises(ValueError, match="mode"):
        tack.inspect(kernels.vector_add, x, x, x, mode="ptx")


def test_kernel_object_looks_like_its_function():
    assert kernels.vector_add.__name__ == "vector_add"
    assert kernels.vector_add.__wrapped__.__code__.co_name == "vector_add"
    assert "vector_add" in repr(kernels.vector_add)
    assert isinstance(kernels.vector_add, tack.Kernel)
    assert math.isclose(float(kernels.SOFTENING2), 1e-4)


def test_continue_in_the_parallel_loop_ends_the_iteration(rng):
    @tack.kernel
    def skip_negatives(x, out):
        for i in range(x.shape[0]):
            if x[i] < 0.0:
                continue
            out[i] = x[i] * 2.0
            for k in range(3):
                if k == 1:
                    continue
                out[i] += 1.0

    x = rng.standard_normal(1000).astype(f32)
    out = tack.zeros((1000,))
    skip_negatives(tack.asarray(x), out)
    bits_equal(out.numpy(), np.where(x < 0, f32(0), x * f32(2) + f32(1) + f32(1)))


def test_break_in_the_parallel_loop_is_rejected():
    @tack.kernel
    def breaks(x):
        for i in range(x.shape[0]):
            if x[i] < 0.0:
                break
            x[i] = 1.0

    with pytest.raises(tack.CompileError, match="use `continue`"):
        breaks(tack.zeros((4,)))


OFFSET = tack.constant(2.0)


def test_the_resolver_is_asked_only_about_names_something_binds(monkeypatch):
    # Each question to Python's resolver costs microseconds at a first call. The kernel's locals
    # and builtins (bound to nothing in its module) are never asked. Where the core reads the
    # kernel's definition itself (a plain file that linecache does not hold), it also answers the
    # decorator's `tack` (which Python evaluates outside the function's code) without Python;
    # where Python reads it, its resolver answers `tack`. The module's constant is asked either way.
    asked = []
    lookup = tack._kernel._lookup

    def counting(fn, name):
        asked.append(name)
        return lookup(fn, name)

    monkeypatch.setattr(tack._kernel, "_lookup", counting)

    @tack.kernel
    def with_locals(x, out):
        for i in range(x.shape[0]):
            doubled = x[i] * 2.0
            shifted = doubled + OFFSET
            out[i] = shifted

    x = np.arange(4, dtype=np.float64)
    filename = with_locals.__wrapped__.__code__.co_filename
    for python_reads in (False, True):
        if python_reads:
            linecache.getlines(filename)
            # Another kernel object of the same function: made and resolved anew.
            kernel = tack._tack.Kernel(with_locals.__wrapped__)
        else:
            linecache.cache.pop(filename, None)
            kernel = with_locals
        asked.clear()
        out = tack.empty((4,), dtype=tack.f64)
        kernel(tack.asarray(x), out)
        np.testing.assert_array_equal(out.numpy(), x * 2 + 2)
        assert set(asked) == ({"tack", "OFFSET"} if python_reads else {"OFFSET"}), python_reads


RESOLVER_HELPERS = """
import tack
SCALE = tack.constant(3.0)

@tack.func
def scaled(v):
    return v * SCALE
"""

RESOLVER_KERNELS = """
import tack
from resolver_helpers import scaled

@tack.kernel
def plain(x, out):
    for i in range(x.shape[0]):
        out[i] = scaled(x[i]) + tack.math.sqrt(4.0)

def make(shift):
    SHIFT = tack.constant(shift)

    @tack.kernel
    def shifted(x, out):
        for i in range(x.shape[0]):
            out[i] = scaled(x[i]) + SHIFT
    return shifted
"""


def test_names_the_core_answers_mean_what_python_says(tmp_path, monkeypatch):
    # Kernels of plain files that linecache does not hold: the core reads their definitions and
    # answers `tack` and the unbound names itself, and leaves the rest to Python's resolver: a
    # device function from another module, a constant of that module (not bound in the kernel's),
    # a name of a closure and of the enclosing function's scope.
    (tmp_path / "resolver_helpers.py").write_text(RESOLVER_HELPERS)
    (tmp_path / "resolver_kernels.py").write_text(RESOLVER_KERNELS)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("resolver_kernels", "resolver_helpers"):  # this run's files, not an earlier run's
        monkeypatch.delitem(sys.modules, name, raising=False)
    import resolver_kernels

    x = np.arange(8, dtype=np.float32)
    out = tack.empty((8,))
    resolver_kernels.plain(tack.asarray(x), out)
    np.testing.assert_array_equal(out.numpy(), x * 3 + 2)
    resolver_kernels.make(5.0)(tack.asarray(x), out)
    np.testing.assert_array_equal(out.numpy(), x * 3 + 5)
