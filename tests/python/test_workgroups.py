"""The workgroup suite (tests/kernels/workgroups.py) through @tack.kernel on every available
backend: run against NumPy references on backends with workgroups (block collectives following the
documented tree and Hillis-Steele orders, docs/language.md), rejected on the others (the CPU) with
the message pointing at tack.local_array. Also the launch check for complete groups. (Array.sum and
its kin are tack.algorithms' reductions now: test_algorithms.py.)"""
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
