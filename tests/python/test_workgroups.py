"""The workgroup suite (tests/kernels/workgroups.py) through @tack.kernel on every available
backend: run against NumPy references on backends with workgroups (block collectives following the
documented tree and Hillis-Steele orders, docs/language.md), rejected on the others (the CPU) with
the message pointing at tack.local_array. Also the launch check for complete groups and the device
reductions (Array.sum/min/max/mean)."""
import numpy as np
import pytest

import tack
from support import bits_equal
from tack.runtime.dispatch import get_backend

import workgroups

pytestmark = pytest.mark.usefixtures("backend")

f32 = np.float32
LANES = 256


@pytest.fixture
def groups(backend):
    """The backend, for tests that need workgroups; skipped (with the reason) where it has none."""
    if not get_backend().supports_workgroups:
        pytest.skip(f"{backend} has no workgroups: its rejection is test_cpu_rejects_every_kernel")
    return backend


def tree(v, op):
    """block_sum/min/max: for h = 128, ..., 1, lane l < h sets v[l] = op(v[l], v[l + h])."""
    v = v.copy()
    h = len(v) // 2
    while h >= 1:
        v[:h] = op(v[:h], v[h : 2 * h])
        h //= 2
    return v[0]


def hillis_steele(v):
    v = v.copy()
    d = 1
    while d < len(v):
        nxt = v.copy()
        nxt[d:] = v[:-d] + v[d:]
        v = nxt
        d *= 2
    return v


def per_group(x, f):
    return np.concatenate([np.full(LANES, f(g)) for g in x.reshape(-1, LANES)])


def test_reverse_tiles(groups, rng):
    x = rng.standard_normal(4 * LANES).astype(f32)
    out = tack.zeros(x.shape)
    workgroups.reverse_tiles(tack.asarray(x), out)
    bits_equal(out.numpy(), x.reshape(-1, LANES)[:, ::-1].reshape(-1))


def test_block_reductions_of_floats(groups, rng):
    x = (rng.standard_normal(8 * LANES) * 100).astype(f32)
    x[300] = np.nan
    sums, mins, maxs = (tack.zeros(x.shape) for _ in range(3))
    workgroups.block_reductions(tack.asarray(x), sums, mins, maxs)
    bits_equal(sums.numpy(), per_group(x, lambda g: tree(g, np.add)).astype(f32))
    bits_equal(mins.numpy(), per_group(x, lambda g: tree(g, np.minimum)).astype(f32))
    bits_equal(maxs.numpy(), per_group(x, lambda g: tree(g, np.maximum)).astype(f32))
    assert np.isnan(sums.numpy()[256:512]).all() and not np.isnan(sums.numpy()[:256]).any()


def test_block_reductions_of_integers_wrap(groups, rng):
    x = rng.integers(-1000, 1000, 2 * LANES, dtype=np.int32)
    x[7] = x[8] = 2**31 - 1
    sums, mins, maxs = (tack.zeros(x.shape, dtype=tack.i32) for _ in range(3))
    workgroups.block_reductions(tack.asarray(x), sums, mins, maxs)
    with np.errstate(over="ignore"):
        want = per_group(x, lambda g: g.sum(dtype=np.int32)).astype(np.int32)
    np.testing.assert_array_equal(sums.numpy(), want)
    np.testing.assert_array_equal(mins.numpy(), per_group(x, np.min))
    np.testing.assert_array_equal(maxs.numpy(), per_group(x, np.max))


def test_block_scan(groups, rng):
    x = rng.standard_normal(4 * LANES).astype(f32)
    out = tack.zeros(x.shape)
    workgroups.block_prefix(tack.asarray(x), out)
    want = np.concatenate([hillis_steele(g) for g in x.reshape(-1, LANES)])
    bits_equal(out.numpy(), want)
    xi = rng.integers(-50, 50, 2 * LANES, dtype=np.int32)
    outi = tack.zeros(xi.shape, dtype=tack.i32)
    workgroups.block_prefix(tack.asarray(xi), outi)
    np.testing.assert_array_equal(outi.numpy(), np.cumsum(xi.reshape(-1, LANES), axis=1).ravel())


def test_tiled_matmul(groups, rng):
    a = rng.standard_normal((48, 64)).astype(f32)
    b = rng.standard_normal((64, 32)).astype(f32)
    c = tack.zeros((48, 32))
    workgroups.matmul_tiled(tack.asarray(a), tack.asarray(b), c)
    # The kernel adds a[r, k] * b[k, c] in order of k, without FMA: the same bits as this loop.
    want = np.zeros((48, 32), f32)
    for k in range(64):
        want += a[:, k : k + 1] * b[k : k + 1, :]
    bits_equal(c.numpy(), want)


def test_collectives_in_a_sequential_loop(groups, rng):
    x = rng.integers(0, 10, 3 * LANES, dtype=np.int32)
    out = tack.zeros(x.shape, dtype=tack.i32)
    workgroups.iterated_sums(tack.asarray(x), out, 5)
    want = x.reshape(-1, LANES).copy()
    for _ in range(5):
        for v in want:
            total = v.sum(dtype=np.int32)
            v[:] = v % 7 if total > 1000 else v + total % 5
    np.testing.assert_array_equal(out.numpy(), want.ravel())


def test_shared_histogram(groups, rng):
    values = rng.integers(0, 1000, 4 * LANES, dtype=np.int32)
    counts = tack.zeros((16,), dtype=tack.i32)
    workgroups.shared_histogram(tack.asarray(values), counts)
    np.testing.assert_array_equal(counts.numpy(), np.bincount(values % 16, minlength=16))


def test_partial_groups_without_collectives(groups, rng):
    n = 300
    lanes = tack.zeros((n,), dtype=tack.i32)
    ids = tack.zeros((n,), dtype=tack.i64)
    sizes = tack.zeros((n,), dtype=tack.i32)
    workgroups.lane_ids(lanes, ids, sizes)
    np.testing.assert_array_equal(lanes.numpy(), np.arange(n) % LANES)
    np.testing.assert_array_equal(ids.numpy(), np.arange(n) // LANES)
    np.testing.assert_array_equal(sizes.numpy(), np.full(n, LANES))
    x = rng.standard_normal(n).astype(f32)
    out = tack.zeros((n,))
    workgroups.shared_scratch(tack.asarray(x), out)
    bits_equal(out.numpy(), x * f32(2) + f32(1))


def test_collectives_need_complete_groups(groups):
    x = tack.ones((300,))
    outs = [tack.full((300,), -7.0) for _ in range(3)]
    with pytest.raises(ValueError, match=r"kernel 'block_reductions'.*multiple of 256"):
        workgroups.block_reductions(x, *outs)
    tack.sync()
    for o in outs:
        np.testing.assert_array_equal(o.numpy(), np.full(300, -7, f32))


def test_cpu_rejects_every_kernel(backend):
    if get_backend().supports_workgroups:
        pytest.skip(f"{backend} has workgroups: the suite runs there")
    x = tack.ones((256,))
    out = tack.full((256,), -7.0)
    with pytest.raises(tack.CompileError, match=r"(?s)reverse_tiles.*local_array"):
        workgroups.reverse_tiles(x, out)
    with pytest.raises(tack.CompileError, match="local_array"):
        workgroups.block_prefix(x, out)
    with pytest.raises(tack.CompileError, match="local_array"):
        workgroups.lane_ids(tack.zeros((4,), dtype=tack.i32), tack.zeros((4,), dtype=tack.i64),
                            tack.zeros((4,), dtype=tack.i32))
    np.testing.assert_array_equal(out.numpy(), np.full(256, -7, f32))


# ---- device reductions (Array.sum/min/max/mean) ----


def device_order_sum(x):
    """The device reductions' order: each pass sums runs of 256 with the block_sum tree (padded
    with -0.0) until one value is left."""
    while True:
        n = -(-len(x) // LANES)
        padded = np.full(n * LANES, -0.0, x.dtype)
        padded[: len(x)] = x
        x = np.array([tree(g, np.add) for g in padded.reshape(n, LANES)], x.dtype)
        if n == 1:
            return x[0]


def test_reduction_flag_follows_workgroups(backend):
    be = get_backend()
    with_groups = be.supports_workgroups and be.max_workgroup_size >= 256
    assert be.supports_device_reductions == with_groups


@pytest.mark.parametrize("n", [1, 255, 257, 70_000])
def test_float_sums(backend, rng, n):
    x = rng.standard_normal(n).astype(f32)
    a = tack.asarray(x)
    s = a.sum()
    assert type(s) is float
    assert s == pytest.approx(float(x.astype(np.float64).sum()), rel=1e-5, abs=1e-4)
    if get_backend().supports_device_reductions:
        assert s == float(device_order_sum(x))
    assert a.mean() == s / n
    assert a.min() == float(x.min()) and a.max() == float(x.max())


def test_integer_sums_accumulate_in_64_bits(backend):
    big = np.full(1000, 2_000_000_000, np.int32)
    assert tack.asarray(big).sum() == 2_000_000_000_000
    assert type(tack.asarray(big).sum()) is int
    assert tack.asarray(np.full(700, 255, np.uint8)).sum() == 700 * 255
    assert tack.asarray(np.arange(600) % 3 == 0).sum() == 200
    assert tack.asarray(np.array([-(2**40), 5, 2**41], np.int64)).min() == -(2**40)
    assert tack.asarray(np.array([-300, 32767, -32768], np.int16)).max() == 32767
    # u64 results above 2^63 stay positive Python ints.
    assert tack.asarray(np.array([2**63, 3], np.uint64)).max() == 2**63


def test_nan_and_empty(backend):
    x = np.ones(1000, f32)
    x[600] = np.nan
    a = tack.asarray(x)
    assert np.isnan(a.sum()) and np.isnan(a.min()) and np.isnan(a.max()) and np.isnan(a.mean())
    assert tack.empty((0,)).sum() == 0
    for f in ("min", "max", "mean"):
        with pytest.raises(ValueError):
            getattr(tack.empty((0,)), f)()
