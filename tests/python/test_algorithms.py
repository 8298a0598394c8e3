"""tack.algorithms against NumPy, on every backend (docs/algorithms.md): the reductions over every
dtype, scans, histograms; empty input, one element, sizes that are not a multiple of any block,
NaNs and infinities; and the determinism claim: the same bits with 1 and 2 CPU threads and on the
CPU and OpenCL."""
import math
import os
import pathlib
import subprocess
import sys
import warnings

import numpy as np
import pytest

import tack
from tack import algorithms as al

pytestmark = pytest.mark.usefixtures("backend")

DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
          np.uint64, np.float32, np.float64]
SIZES = [1, 2, 7, 4095, 4097, 70001]


def data(rng, dtype, n):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(n) < 0.3
    if dtype.kind == "f":
        return (rng.standard_normal(n) * 100).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)


def accumulator(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return dtype
    return np.dtype(np.uint64) if dtype.kind == "u" else np.dtype(np.int64)


def rel(dtype):
    return 2e-5 if np.dtype(dtype) == np.float32 else 1e-12


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_reductions_match_numpy(rng, dtype, n):
    x = data(rng, dtype, n)
    a = tack.asarray(x)
    wide = x.astype(accumulator(dtype))
    if np.dtype(dtype).kind == "f":
        scale = float(np.abs(x.astype(np.float64)).sum()) + 1e-30
        assert al.sum(a) == pytest.approx(float(x.astype(np.float64).sum()), abs=rel(dtype) * scale)
        assert type(al.sum(a)) is float
        assert al.dot(a, a) == pytest.approx(float((x.astype(np.float64) ** 2).sum()), rel=rel(dtype))
        assert al.mean(a) == pytest.approx(float(x.astype(np.float64).mean()), abs=rel(dtype) * scale / n)
    else:
        with np.errstate(over="ignore"):
            assert al.sum(a) == int(wide.sum())  # wrapping, as NumPy's i64/u64 sum
            assert al.dot(a, a) == int((wide * wide).sum())
        assert type(al.sum(a)) is int
        assert al.mean(a) == pytest.approx(float(x.astype(np.float64).mean()), rel=1e-12)
    assert al.min(a) == x.min() and al.max(a) == x.max()
    assert a.min() == x.min() and a.max() == x.max()
    assert al.count_nonzero(a) == np.count_nonzero(x)
    magnitude = np.abs(x.astype(np.float64)) if np.dtype(dtype).kind != "f" else np.abs(x)
    assert al.absmax(a) == magnitude.max()
    f = x.astype(np.float64) if np.dtype(dtype).kind != "f" else x
    assert al.var(a) == pytest.approx(float(np.var(f)), rel=1e-3 if dtype == np.float32 else 1e-9, abs=1e-6)
    assert al.std(a) == pytest.approx(float(np.std(f)), rel=1e-3 if dtype == np.float32 else 1e-9, abs=1e-6)
    for ord in (1, 2, math.inf):
        want = float(np.linalg.norm(f, ord))
        assert al.norm(a, ord) == pytest.approx(want, rel=1e-4 if dtype == np.float32 else 1e-9)


def test_numpy_inputs_and_2d_arrays(rng):
    x = rng.standard_normal((37, 41))
    assert al.sum(x) == pytest.approx(x.sum())
    assert al.max(tack.asarray(x)) == x.max()
    assert tack.asarray(x).sum() == al.sum(x)


def test_sum_of_minus_zero_and_zero_signs():
    assert math.copysign(1, al.sum(np.array([-0.0], np.float32))) == -1
    assert math.copysign(1, al.sum(np.zeros(0, np.float32))) == 1
    assert math.copysign(1, al.min(np.array([0.0, -0.0]))) == -1
    assert math.copysign(1, al.max(np.array([-0.0, 0.0]))) == 1


def test_nan_and_infinities():
    x = np.ones(9000, np.float32)
    x[4321] = np.nan
    for f in (al.sum, al.min, al.max, al.mean, al.var, al.absmax):
        assert math.isnan(f(x)), f.__name__
    assert al.count_nonzero(x) == 9000
    y = np.array([1, np.inf, -2], np.float64)
    assert al.sum(y) == math.inf and al.max(y) == math.inf and al.min(y) == -2
    assert math.isnan(al.sum(np.array([np.inf, -np.inf])))
    assert al.norm(y, math.inf) == math.inf


def test_empty_inputs():
    e = tack.empty((0,))
    assert al.sum(e) == 0 and al.count_nonzero(e) == 0 and al.norm(e) == 0
    for f in (al.min, al.max, al.absmax):
        with pytest.raises(ValueError, match="empty"):
            f(e)
    with pytest.warns(RuntimeWarning):
        assert math.isnan(al.mean(e))
    with pytest.warns(RuntimeWarning):
        assert math.isnan(al.var(e))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert math.isnan(e.mean())
    assert al.sum(tack.empty((0,), dtype=tack.i32)) == 0


def test_big_integers_are_exact():
    x = np.array([2**62, 2**62, 5], np.int64)
    assert al.sum(x) == -(2**63) + 5  # wraps, as NumPy
    u = np.array([2**63, 2**62, 1], np.uint64)
    assert al.sum(u) == 2**63 + 2**62 + 1 and tack.asarray(u).sum() == 2**63 + 2**62 + 1
    assert al.absmax(np.array([-(2**63), 1], np.int64)) == 2**63


def test_errors():
    with pytest.raises(TypeError, match="same dtype"):
        al.dot(np.ones(3, np.float32), np.ones(3, np.float64))
    with pytest.raises(ValueError, match="as many"):
        al.dot(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="ord"):
        al.norm(np.ones(3), 3)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [0, 1, 5, 4096, 4097, 70001])
@pytest.mark.parametrize("inclusive", [True, False])
def test_scans_match_numpy(rng, dtype, n, inclusive):
    x = data(rng, dtype, n)
    out_dtype = al.scan_dtype(tack.dtype(np.dtype(dtype)))
    src = tack.asarray(x)
    dst = tack.empty((n,), dtype=out_dtype)
    scan = al.inclusive_scan if inclusive else al.exclusive_scan
    total = scan(src, dst)
    with np.errstate(over="ignore"):
        want = np.cumsum(x, dtype=dst.numpy().dtype)
    if not inclusive:
        want = np.concatenate([np.zeros(1, want.dtype), want[:-1]])[:n]
    got = dst.numpy()
    kind = np.dtype(dtype).kind
    if kind != "f" or n <= 4096:
        # Exact, and within one block the floats are NumPy's sequential sums bit for bit.
        np.testing.assert_array_equal(got, want)
    else:
        scale = np.cumsum(np.abs(x.astype(np.float64)))
        if not inclusive:
            scale = np.concatenate([[0], scale[:-1]])
        assert np.all(np.abs(got - want) <= rel(dtype) * 10 * (scale + 1))
    if n:
        with np.errstate(over="ignore"):
            last = got[-1] if inclusive else got[-1] + x[-1]
        if kind == "f":
            assert total == pytest.approx(float(last), rel=rel(dtype) * 10)
        else:
            assert total == int(np.array(last).astype(got.dtype))
    else:
        assert total == 0


def test_scan_in_place_and_errors(rng):
    x = rng.standard_normal(10000).astype(np.float32)
    a = tack.asarray(x)
    out = tack.empty((10000,))
    t = al.inclusive_scan(a, out)
    assert al.inclusive_scan(a, a) == t
    np.testing.assert_array_equal(a.numpy(), out.numpy())
    with pytest.raises(TypeError, match="cannot accumulate"):
        al.inclusive_scan(tack.asarray(np.ones(4, np.int64)), tack.empty((4,), dtype=tack.i32))
    with pytest.raises(ValueError, match="elements"):
        al.exclusive_scan(a, tack.empty((3,)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8, np.int64])
@pytest.mark.parametrize("bins", [1, 10, 37])
@pytest.mark.parametrize("n", [1, 1000, 70001])
def test_histogram_matches_numpy(rng, dtype, bins, n):
    x = data(rng, dtype, n)
    try:
        want_counts, want_edges = np.histogram(x, bins)
    except ValueError:  # bins too narrow for the dtype (one huge value): refused alike
        with pytest.raises(ValueError, match="width"):
            al.histogram(x, bins)
        return
    counts, edges = al.histogram(x, bins)
    assert counts.dtype == tack.i64
    np.testing.assert_array_equal(counts.numpy(), want_counts)
    np.testing.assert_array_equal(edges.numpy(), want_edges)
    assert edges.numpy().dtype == want_edges.dtype
    lo, hi = float(np.quantile(x, 0.2)), float(np.quantile(x, 0.7))
    counts, edges = al.histogram(tack.asarray(x), bins, range=(lo, hi))
    want_counts, want_edges = np.histogram(x, bins, range=(lo, hi))
    np.testing.assert_array_equal(counts.numpy(), want_counts)
    np.testing.assert_array_equal(edges.numpy(), want_edges)


# Values on the edges and one ulp either side, where the estimate of the bin must be checked
# against the edges: over ranges where the edges are fine (the check is rare) and coarse (always).
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bins", [7, 256, 1000])
@pytest.mark.parametrize("lo,hi", [(0.0, 1.0), (-3.7, 12.1), (1e6, 1e6 + 64), (1e-3, 2e-3)])
def test_histogram_at_the_edges(rng, dtype, bins, lo, hi):
    edges = np.histogram(np.zeros(0, dtype), bins, range=(lo, hi))[1].astype(dtype)
    x = np.concatenate([edges, np.nextafter(edges, dtype(np.inf)),
                        np.nextafter(edges, dtype(-np.inf)),
                        rng.uniform(lo, hi, 5000).astype(dtype)])
    counts, got_edges = al.histogram(x, bins, range=(lo, hi))
    want_counts, want_edges = np.histogram(x, bins, range=(lo, hi))
    np.testing.assert_array_equal(counts.numpy(), want_counts)
    np.testing.assert_array_equal(got_edges.numpy(), want_edges)
    # The data's own range: f32 edges computed in f32.
    np.testing.assert_array_equal(al.histogram(x, bins)[0].numpy(), np.histogram(x, bins)[0])


# More values than one slab of bins (2^20), a count that is no multiple of a chunk, and more bins
# than 16-bit bin numbers hold.
@pytest.mark.parametrize("bins", [256, 40000])
def test_histogram_of_several_slabs(rng, bins):
    x = rng.standard_normal((1 << 21) + 12345).astype(np.float32)
    counts, _ = al.histogram(x, bins, range=(-3.0, 3.0))
    np.testing.assert_array_equal(counts.numpy(), np.histogram(x, bins, range=(-3.0, 3.0))[0])


def test_histogram_edges_nan_and_errors():
    x = np.array([0, 1, 0.5, np.nan, 2, -1, 0.25], np.float32)
    counts, _ = al.histogram(x, 4, range=(0, 1))
    np.testing.assert_array_equal(counts.numpy(), np.histogram(x, 4, range=(0, 1))[0])
    with pytest.raises(ValueError, match="not finite"):
        al.histogram(x)
    with pytest.raises(ValueError, match="larger"):
        al.histogram(x, 3, range=(1, 0))
    counts, edges = al.histogram(np.zeros(0, np.float64), 3)
    np.testing.assert_array_equal(counts.numpy(), np.histogram(np.zeros(0), 3)[0])
    np.testing.assert_array_equal(edges.numpy(), np.histogram(np.zeros(0), 3)[1])
    counts, edges = al.histogram(np.full(5, 7.0), 2)
    np.testing.assert_array_equal(counts.numpy(), np.histogram(np.full(5, 7.0), 2)[0])
    np.testing.assert_array_equal(edges.numpy(), np.histogram(np.full(5, 7.0), 2)[1])


def test_supports_device_reductions():
    from tack.runtime.dispatch import get_backend

    assert get_backend().supports_device_reductions is True


# ---- sorting, unique, reduce_by_key, segments, arrays ----

SORT_DTYPES = [np.int8, np.uint8, np.int16, np.int32, np.uint32, np.int64, np.uint64, np.float32,
               np.float64]


def sort_data(rng, dtype, n):
    x = data(rng, dtype, n)
    if np.dtype(dtype).kind == "f":
        x[::7] = np.round(x[::7] / 50)  # repeated keys and zeros of both signs
        x[3::11] = -0.0
        x[5::13] = np.nan
        x[6::17] = -np.inf
        x[8::19] = np.inf
    elif n:
        x[::5] = x[0]  # repeated keys
    return x


@pytest.mark.parametrize("dtype", SORT_DTYPES)
@pytest.mark.parametrize("n", [0, 1, 7, 4097, 30001])
def test_argsort_and_sort_match_numpy(rng, dtype, n):
    x = sort_data(rng, dtype, n)
    perm = al.argsort(x)
    assert perm.dtype == tack.i64
    np.testing.assert_array_equal(perm.numpy(), np.argsort(x, kind="stable"))
    np.testing.assert_array_equal(al.sort(x).numpy(), np.sort(x, kind="stable"))
    values = np.arange(n, dtype=np.float32)
    keys, vals = al.sort_by_key(x, values)
    np.testing.assert_array_equal(vals.numpy(), values[np.argsort(x, kind="stable")])


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.int64, np.float32, np.float64])
def test_unique_matches_numpy(rng, dtype):
    x = sort_data(rng, dtype, 20000)
    if np.dtype(dtype).kind != "f":
        x = x % 97 if np.dtype(dtype).kind == "u" else (x % 97) - 40
    keys, counts = al.unique(x)
    want_keys, want_counts = np.unique(x, return_counts=True)
    np.testing.assert_array_equal(keys.numpy(), want_keys)
    np.testing.assert_array_equal(counts.numpy(), want_counts)
    k, c = al.unique(np.zeros(0, dtype))
    assert k.size == 0 and c.size == 0


@pytest.mark.parametrize("op", ["sum", "min", "max"])
def test_reduce_by_key_and_segmented_reduce(rng, op):
    keys = np.repeat(rng.integers(0, 5, 300), rng.integers(1, 40, 300))
    values = rng.standard_normal(len(keys)).astype(np.float32)
    k, r = al.reduce_by_key(keys, values, op)
    heads = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]]))
    np.testing.assert_array_equal(k.numpy(), keys[heads])
    ufunc = {"sum": np.add, "min": np.minimum, "max": np.maximum}[op]
    # Each run in element order (accumulate is sequential): the same bits.
    want = [ufunc.accumulate(seg)[-1] for seg in np.split(values, heads[1:])]
    np.testing.assert_array_equal(r.numpy(), np.array(want, np.float32))
    offsets = np.array([0, 3, 3, 100, len(values)], np.int64)
    got = al.segmented_reduce(values, offsets, op).numpy()
    for s in range(4):
        seg = values[offsets[s]:offsets[s + 1]]
        if len(seg):
            assert got[s] == ufunc.accumulate(seg)[-1]
        else:
            assert got[s] == {"sum": 0.0, "min": np.inf, "max": -np.inf}[op]
    ints = al.segmented_reduce(np.array([1, 2, 3], np.int32), np.array([0, 1, 3]), op)
    assert ints.dtype == tack.i64


def test_segmented_scan_and_errors(rng):
    values = rng.integers(-100, 100, 1000).astype(np.int64)
    offsets = np.array([0, 10, 10, 500, 1000])
    got = al.segmented_scan(values, offsets).numpy()
    want = np.concatenate([np.cumsum(values[a:b]) for a, b in zip(offsets[:-1], offsets[1:])])
    np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="non-decreasing"):
        al.segmented_reduce(values, np.array([0, 5, 3]))
    with pytest.raises(ValueError, match="op"):
        al.segmented_reduce(values, np.array([0, 5]), "mean")
    with pytest.raises(IndexError, match="outside"):
        al.gather(values, np.array([0, 1000]))
    with pytest.raises(TypeError):
        al.gather(values, np.array([0.0]))


def test_concat_copy_fill():
    a, b = np.arange(5, dtype=np.float32), np.arange(3, dtype=np.float32) + 10
    np.testing.assert_array_equal(al.concat([a, np.zeros(0, np.float32), b]).numpy(),
                                  np.concatenate([a, b]))
    with pytest.raises(TypeError):
        al.concat([a, np.arange(3)])
    dst = tack.zeros((8,))
    al.copy(np.arange(8, dtype=np.float32), dst)
    al.fill(dst, -1.0, 2, 4)
    np.testing.assert_array_equal(dst.numpy(), [0, 1, -1, -1, 4, 5, 6, 7])
    al.fill(dst, 3.0)
    np.testing.assert_array_equal(dst.numpy(), np.full(8, 3, np.float32))
    with pytest.raises(ValueError):
        al.fill(dst, 1.0, 5, 9)


# ---- Array.sum/min/max/mean are the same reductions ----


def documented_sum(x):
    """The order of the language's scalar reductions (docs/language.md, "Reductions"): lane j of
    block b adds elements b*4096 + j + 16m in turn from -0.0; each block's 16 lanes by the tree of
    steps 8, 4, 2, 1; the blocks pairwise, level by level; then -0.0 + that."""
    n = len(x)
    blocks = -(-n // 4096)
    padded = np.full(blocks * 4096, -0.0, x.dtype)
    padded[:n] = x
    lanes = np.full((blocks, 16), -0.0, x.dtype)
    rows = padded.reshape(blocks, 256, 16)
    for m in range(256):  # in turn, as each lane does (padding with -0.0 changes nothing)
        lanes = lanes + rows[:, m, :]
    for h in (8, 4, 2, 1):
        lanes[:, :h] = lanes[:, :h] + lanes[:, h:2 * h]
    p = list(lanes[:, 0])
    while len(p) > 1:
        p = [p[i] + p[i + 1] for i in range(0, len(p) - 1, 2)] + ([p[-1]] if len(p) % 2 else [])
    return x.dtype.type(-0.0) + p[0]


@pytest.mark.parametrize("n", [1, 255, 4097, 70_000])
def test_array_sum_is_the_documented_order(rng, n):
    x = rng.standard_normal(n).astype(np.float32)
    a = tack.asarray(x)
    s = a.sum()
    assert type(s) is float
    assert s == float(documented_sum(x)) == al.sum(a)
    assert a.mean() == float(np.float32(s) / np.float32(n)) == al.mean(a)
    assert a.min() == float(x.min()) and a.max() == float(x.max())


def test_array_integer_sums_accumulate_in_64_bits():
    big = np.full(1000, 2_000_000_000, np.int32)
    assert tack.asarray(big).sum() == 2_000_000_000_000
    assert type(tack.asarray(big).sum()) is int
    assert tack.asarray(np.full(700, 255, np.uint8)).sum() == 700 * 255
    assert tack.asarray(np.arange(600) % 3 == 0).sum() == 200
    assert tack.asarray(np.array([-(2**40), 5, 2**41], np.int64)).min() == -(2**40)
    assert tack.asarray(np.array([-300, 32767, -32768], np.int16)).max() == 32767
    # u64 results above 2^63 stay positive Python ints.
    assert tack.asarray(np.array([2**63, 3], np.uint64)).max() == 2**63


def test_array_nan_and_empty():
    x = np.ones(1000, np.float32)
    x[600] = np.nan
    a = tack.asarray(x)
    assert np.isnan(a.sum()) and np.isnan(a.min()) and np.isnan(a.max()) and np.isnan(a.mean())
    assert tack.empty((0,)).sum() == 0
    for f in ("min", "max"):
        with pytest.raises(ValueError):
            getattr(tack.empty((0,)), f)()
    assert np.isnan(tack.empty((0,)).mean())


# ---- determinism: the same bits for any thread count and on every backend ----

DETERMINISM_SCRIPT = """
import hashlib, struct, sys
import numpy as np
import tack
from tack import algorithms as al
tack.set_default_device(sys.argv[1])
x = tack.asarray(np.random.default_rng(5).standard_normal(1 << 20).astype(np.float32))
out = tack.empty_like(x)
values = [al.sum(x), al.dot(x, x), al.mean(x), al.var(x), al.norm(x, 1), al.norm(x),
          al.inclusive_scan(x, out), al.exclusive_scan(x, out)]
scan = out.numpy()
print(" ".join(struct.pack("<d", v).hex() for v in values), hashlib.sha256(scan.tobytes()).hexdigest())
"""


def run_determinism(device, threads):
    env = dict(os.environ)
    # Only the package: tests/kernels would shadow the standard library's modules (random).
    env["PYTHONPATH"] = str(pathlib.Path(tack.__file__).resolve().parents[1])
    env["TACK_CPU_THREADS"] = str(threads)
    out = subprocess.run([sys.executable, "-c", DETERMINISM_SCRIPT, device], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_the_same_bits_with_one_and_two_threads_and_on_every_backend(backend):
    if backend != "cpu":
        pytest.skip("run once, from the cpu parametrization")
    one = run_determinism("cpu", 1)
    assert run_determinism("cpu", 2) == one
    available = [name for name, ok, _ in tack.backend_status() if ok]
    if "opencl" in available:
        assert run_determinism("opencl", 1) == one
