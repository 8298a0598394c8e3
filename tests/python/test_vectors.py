"""Vectors and matrices (tests/kernels/vectors.py) against NumPy, on every available backend.

Bit for bit wherever NumPy computes the same float operations in the same order (the language fixes
the order: sums of products left to right, no contraction); within a tolerance for determinant and
inverse, where NumPy factorizes and Tack expands cofactors."""

import numpy as np
import pytest

import tack
from support import bits_equal, line_of
from tack.runtime.dispatch import get_backend

import vectors

pytestmark = pytest.mark.usefixtures("backend")

f32 = np.float32
N = 257


def run(kernel, inputs, outputs):
    """Calls kernel with the NumPy inputs copied to the device and fresh output arrays of the given
    (shape, dtype); returns the outputs as NumPy arrays."""
    outs = [tack.zeros(shape, dtype=dtype) for shape, dtype in outputs]
    kernel(*[tack.asarray(x) for x in inputs], *outs)
    return [o.numpy() for o in outs]


def dot3(a, b):
    return (a[:, 0] * b[:, 0] + a[:, 1] * b[:, 1]) + a[:, 2] * b[:, 2]


def test_componentwise_arithmetic_with_scalars(rng):
    a, b = rng.standard_normal((2, N, 3)).astype(f32)
    s, m, neg = run(vectors.arithmetic, [a, b], [((N, 3), "f32")] * 3)
    bits_equal(s, a + b * f32(2) - f32(1))
    bits_equal(m, (a * b) / (b + f32(4)))
    bits_equal(neg, -a)


def test_constructors_swizzles_and_component_assignment(rng):
    a = rng.standard_normal((N, 3)).astype(f32)
    out4, out2, out3 = run(vectors.construct_and_swizzle, [a],
                           [((N, 4), "f32"), ((N, 2), "f32"), ((N, 3), "f32")])
    x, y, z = a[:, 0], a[:, 1], a[:, 2]
    bits_equal(out4, np.stack([np.ones(N, f32), z, y, x], axis=1))
    bits_equal(out2, np.stack([x + y, z * f32(1)], axis=1))
    bits_equal(out3, np.stack([y, x * f32(2), x + f32(0.5)], axis=1))


def test_a_component_index_known_only_at_run_time(rng):
    a = rng.standard_normal((N, 3)).astype(f32)
    k = rng.integers(0, 3, N).astype(np.int32)
    out, out_vec = run(vectors.dynamic_index, [a, k], [((N,), "f32"), ((N, 3), "f32")])
    bits_equal(out, a[np.arange(N), k])
    want = a.copy()
    want[np.arange(N), k] = 10
    bits_equal(out_vec, want)


def test_masks_any_all_and_select(rng):
    a, b = rng.integers(0, 3, (2, N, 3)).astype(f32)
    lt, any_, all_, sel = run(vectors.masks, [a, b],
                              [((N, 3), "f32"), ((N,), "i32"), ((N,), "i32"), ((N, 3), "f32")])
    bits_equal(lt, np.where(a < b, f32(1), f32(0)))
    bits_equal(any_, (a < b).any(axis=1).astype(np.int32))
    bits_equal(all_, (a >= b).all(axis=1).astype(np.int32))
    bits_equal(sel, np.where(a == b, a, np.maximum(a, b)))


def test_geometry_helpers(rng):
    a, b = rng.standard_normal((2, N, 3)).astype(f32)
    d, c, ln, dist, nrm, refl = run(
        vectors.geometry, [a, b],
        [((N,), "f32"), ((N, 3), "f32"), ((N,), "f32"), ((N,), "f32"), ((N, 3), "f32"),
         ((N, 3), "f32")])
    bits_equal(d, dot3(a, b))
    bits_equal(c, np.stack([a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1],
                            a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2],
                            a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]], axis=1))
    length = np.sqrt(dot3(a, a))
    bits_equal(ln, length)
    bits_equal(dist, np.sqrt(dot3(a - b, a - b)))
    bits_equal(nrm, a / length[:, None])
    n = b / np.sqrt(dot3(b, b))[:, None]
    bits_equal(refl, a - (f32(2) * dot3(n, a))[:, None] * n)
    np.testing.assert_allclose(c, np.cross(a, b), rtol=1e-5, atol=1e-6)


def test_math_builtins_apply_componentwise(rng):
    a = (rng.standard_normal((N, 3)) * 3).astype(f32)
    outs = run(vectors.math_componentwise, [a], [((N, 3), "f32")] * 6)
    sq, fl, cl, mx, ab, fr = outs
    bits_equal(sq, np.sqrt(np.abs(a)))
    bits_equal(fl, np.floor(a))
    bits_equal(cl, np.minimum(np.maximum(a, f32(-0.5)), f32(0.5)))
    bits_equal(mx, a * f32(0.75) + np.array([1, 2, 3], f32) * f32(0.25))
    bits_equal(ab, np.abs(a))
    bits_equal(fr, a - np.floor(a))


def test_integer_vectors_wrap_and_floor(rng):
    a = rng.integers(-1000, 1000, (N, 3)).astype(np.int32)
    a[0] = [np.iinfo(np.int32).min, np.iinfo(np.int32).max, -1]
    (out,) = run(vectors.int_vectors, [a], [((N, 3), "i32")])
    w = np.array([7, -7, 3], np.int32)
    with np.errstate(over="ignore"):
        want = (a * w) // np.int32(4) + a % np.int32(5) - np.int32(3)
    bits_equal(out, want)


def test_unsigned_and_double_vectors_and_a_vector_constant(rng):
    u = rng.integers(0, 2**32 - 1, (N, 2), dtype=np.uint32, endpoint=True)
    d = rng.standard_normal((N, 3))
    out_u = tack.zeros((N, 2), dtype="u32")
    out_d = tack.zeros((N, 3), dtype="f64")
    vectors.uint_and_double(tack.asarray(u), out_u, tack.asarray(d), out_d)
    with np.errstate(over="ignore"):
        bits_equal(out_u.numpy(), u * np.uint32(3) + np.uint32(1))
    bits_equal(out_d.numpy(), np.array([0.5, -1.0, 2.0]) + d * 0.1)


def matvec(m, v):
    return np.stack([(m[:, r, 0] * v[:, 0] + m[:, r, 1] * v[:, 1]) + m[:, r, 2] * v[:, 2]
                     for r in range(3)], axis=1)


def test_matrix_products_transpose_determinant_inverse(rng):
    m = (rng.standard_normal((N, 3, 3)) + 3 * np.eye(3)).astype(f32)
    v = rng.standard_normal((N, 3)).astype(f32)
    mv, vm, mm, t, det, inv, elem = run(
        vectors.matrices, [m, v],
        [((N, 3), "f32"), ((N, 3), "f32"), ((N, 3, 3), "f32"), ((N, 3, 3), "f32"), ((N,), "f32"),
         ((N, 3, 3), "f32"), ((N, 2), "f32")])
    bits_equal(mv, matvec(m, v))
    bits_equal(vm, matvec(np.transpose(m, (0, 2, 1)), v))
    mt = np.transpose(m, (0, 2, 1))
    want_mm = np.empty_like(m)
    for c in range(3):
        want_mm[:, :, c] = matvec(m, mt[:, :, c])
    bits_equal(mm, want_mm)
    bits_equal(t, mt)
    np.testing.assert_allclose(det, np.linalg.det(m.astype(np.float64)), rtol=2e-5)
    np.testing.assert_allclose(inv, np.linalg.inv(m.astype(np.float64)), rtol=1e-4, atol=1e-5)
    bits_equal(elem, np.tile(np.array([11, 2], f32), (N, 1)))


def test_matrices_of_two_and_four_rows_and_double_precision(rng):
    m2 = rng.standard_normal((N, 2, 2)).astype(f32)
    m4 = (rng.standard_normal((N, 4, 4)) + 4 * np.eye(4)).astype(f32)
    det2, det4, inv4 = run(vectors.matrix_sizes, [m2, m4],
                           [((N,), "f32"), ((N,), "f32"), ((N, 4, 4), "f32")])
    bits_equal(det2, m2[:, 0, 0] * m2[:, 1, 1] - m2[:, 1, 0] * m2[:, 0, 1])
    np.testing.assert_allclose(det4, np.linalg.det(m4.astype(np.float64)), rtol=1e-4)
    np.testing.assert_allclose(inv4, np.linalg.inv(m4.astype(np.float64)), rtol=1e-3, atol=1e-5)
    md = rng.standard_normal((N, 3, 3)) + 3 * np.eye(3)
    (detd,) = run(vectors.double_matrix, [md], [((N,), "f64")])
    np.testing.assert_allclose(detd, np.linalg.det(md), rtol=1e-12)


def test_device_functions_take_and_return_vectors(rng):
    n, l = rng.standard_normal((2, N, 3)).astype(f32)
    h, d = run(vectors.vector_functions, [n, l], [((N, 3), "f32"), ((N,), "f32")])
    s = n + l
    bits_equal(h, s / np.sqrt(dot3(s, s))[:, None])
    bits_equal(d, np.maximum(dot3(n, l), f32(0)))


def test_augmented_store_into_an_array_of_vectors(rng):
    a = rng.standard_normal((N, 3)).astype(f32)
    out = tack.asarray(np.ones((N, 3), f32))
    vectors.accumulate(tack.asarray(a), out)
    acc = np.zeros_like(a)
    for k in range(4):
        acc = acc + a * f32(k)
    bits_equal(out.numpy(), np.ones_like(a) + acc)


def test_print_shows_vectors_and_matrices(capfd):
    a = np.array([[1.5, -2.0, 0.25]], f32)
    vectors.print_vector(tack.asarray(a))
    tack.sync()
    assert "v = (1.5, -2, 0.25) m = (1, 0, 0, 1)" in capfd.readouterr().out


# ---- rejections: each names the line and says what to write ----


@tack.kernel
def mixes_sizes(a, out):
    for i in range(a.shape[0]):
        out[i] = a[i] + tack.vec2(1.0, 2.0)  # MARK-sizes


@tack.kernel
def vector_as_condition(a, out):
    for i in range(a.shape[0]):
        if a[i] < out[i]:  # MARK-truth
            out[i] = a[i]


@tack.kernel
def vector_into_scalar_local(a, out):
    for i in range(a.shape[0]):
        s = 0.0
        s = a[i]  # MARK-local
        out[i, 0] = s


@tack.kernel
def vector_into_element(a, out):
    for i in range(a.shape[0]):
        out[i, 0] = a[i]  # MARK-element


@tack.kernel
def cross_of_vec2(a, out):
    for i in range(a.shape[0]):
        out[i] = tack.cross(tack.vec2(1.0, 0.0), tack.vec2(0.0, 1.0))  # MARK-cross


@tack.kernel
def missing_component(a, out):
    for i in range(a.shape[0]):
        v = tack.vec2(1.0, 2.0)
        out[i, 0] = v.z  # MARK-component


@tack.kernel
def wrong_constructor(a, out):
    for i in range(a.shape[0]):
        out[i] = tack.vec3(1.0, 2.0)  # MARK-constructor


@pytest.mark.parametrize("kernel, marker, words", [
    (mixes_sizes, "MARK-sizes", "shapes differ"),
    (vector_as_condition, "MARK-truth", "any(mask)"),
    (vector_into_scalar_local, "MARK-local", "cannot assign vec3"),
    (vector_into_element, "MARK-element", "one index fewer"),
    (cross_of_vec2, "MARK-cross", "3-component"),
    (missing_component, "MARK-component", "no component 'z'"),
    (wrong_constructor, "MARK-constructor", "needs 3 components"),
])
def test_vector_rejections_name_the_line(kernel, marker, words):
    a = tack.zeros((4, 3))
    out = tack.zeros((4, 3))
    with pytest.raises(tack.CompileError) as info:
        kernel(a, out)
    e = info.value
    assert e.lineno == line_of(kernel.__wrapped__, marker)
    assert words in str(e) + e.hint, str(e)
    assert e.hint
    np.testing.assert_array_equal(out.numpy(), 0)


def test_one_index_fewer_needs_a_last_dimension_of_two_to_four():
    a = tack.zeros((4, 5))
    with pytest.raises(TypeError, match="last dimension is 2, 3 or 4"):
        vectors.arithmetic(a, a, a, a, a)


# ---- textures: trilinear filtering with clamp-to-edge, recomputed in NumPy ----


def sample_reference(texels, coords):
    """texels is (D, H, W) or (H, W); coords (n, dims) with x first. The language's definition:
    x = c * size - 0.5, i0 = floor(x), t = x - i0, indices clamped, blended along x, then y, z."""
    dims = texels.ndim
    axes = []
    for d in range(dims):
        size = texels.shape[dims - 1 - d]
        x = coords[:, d].astype(f32) * f32(size) - f32(0.5)
        fl = np.floor(x)
        t = x - fl
        base = fl.astype(np.int64)
        axes.append((np.clip(base, 0, size - 1), np.clip(base + 1, 0, size - 1), t))

    def blend(d, pick):
        if d < 0:
            return texels[tuple(pick[k] for k in range(dims - 1, -1, -1))]
        i0, i1, t = axes[d]
        a = blend(d - 1, {**pick, d: i0})
        b = blend(d - 1, {**pick, d: i1})
        return a * (f32(1) - t) + b * t

    return blend(dims - 1, {})


def hardware_textures():
    return get_backend().supports_hardware_textures


def close_to_reference(got, want, texels):
    """The documented bound of hardware filtering: |hardware - software| <= dims / 256 of the
    texel range."""
    bound = texels.ndim / 256 * (texels.max() - texels.min())
    assert np.max(np.abs(got - want)) <= bound


@pytest.mark.parametrize("interp", ["linear", "linear_exact"])
def test_texture3d_samples_trilinearly_with_clamped_edges(rng, interp):
    w, h, d = 5, 4, 3
    values = rng.standard_normal(w * h * d).astype(f32)
    tex = tack.texture3d(values, shape=(w, h, d), interp=interp)
    assert tex.interp == interp
    coords = rng.uniform(-0.2, 1.2, (N, 3)).astype(f32)  # outside [0, 1] too: clamped
    coords[:4] = [[0, 0, 0], [1, 1, 1], [0.5, 0.5, 0.5], [0.1, 0.9, 0.3]]
    out = tack.zeros((N,))
    vectors.sample3d(tex, tack.asarray(coords), out)
    want = sample_reference(values.reshape(d, h, w), coords)
    if interp == "linear" and hardware_textures():
        close_to_reference(out.numpy(), want, values.reshape(d, h, w))
    else:
        bits_equal(out.numpy(), want)
        assert out.numpy()[0] == values[0]  # a corner's centre region reads the corner texel


@pytest.mark.parametrize("interp", ["linear", "linear_exact"])
def test_texture2d_and_update_takes_a_new_snapshot(rng, interp):
    w, h = 7, 6
    values = rng.standard_normal(w * h).astype(f32)
    source = tack.asarray(values)
    tex = tack.texture2d(source, shape=(w, h), interp=interp)
    coords = rng.uniform(0, 1, (N, 2)).astype(f32)
    out = tack.zeros((N,))
    want = sample_reference(values.reshape(h, w), coords)

    def check(got):
        if interp == "linear" and hardware_textures():
            close_to_reference(got, want, values.reshape(h, w))
        else:
            bits_equal(got, want)

    vectors.sample2d(tex, tack.asarray(coords), out)
    check(out.numpy())
    source.fill(2.0)  # the texture is a snapshot until update()
    vectors.sample2d(tex, tack.asarray(coords), out)
    check(out.numpy())
    tex.update()  # the device's copy (an image where textures are hardware) too
    vectors.sample2d(tex, tack.asarray(coords), out)
    np.testing.assert_allclose(out.numpy(), 2.0, rtol=1e-6)


def test_texture_errors():
    with pytest.raises(ValueError, match="texels"):
        tack.texture2d(np.zeros(10, f32), shape=(3, 3))
    with pytest.raises(TypeError, match="f32"):
        tack.texture2d(tack.zeros((9,), dtype="i32"), shape=(3, 3))
    with pytest.raises(ValueError, match="linear_exact"):
        tack.texture2d(np.zeros(9, f32), shape=(3, 3), interp="nearest")
    assert isinstance(get_backend().supports_hardware_textures, bool)
    tex = tack.texture2d(np.zeros(9, f32), shape=(3, 3))
    with pytest.raises(tack.CompileError, match="only by sampling") as info:
        vectors.stores_into_texture(tex, tack.zeros((2,)))
    assert info.value.lineno == line_of(vectors.stores_into_texture.__wrapped__,
                                        "MARK-texture-store")
    with pytest.raises(tack.CompileError, match="2-D texture is sampled with 2"):
        vectors.sample3d(tex, tack.zeros((2, 3)), tack.zeros((2,)))
