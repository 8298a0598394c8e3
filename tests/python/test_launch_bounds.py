"""Index ranges proven at launch: a call whose affine accesses would leave an array raises
IndexError before anything runs; correct kernels, guarded accesses and empty launches run.
On every available backend."""
import numpy as np
import pytest

import tack

import kernels

pytestmark = pytest.mark.usefixtures("backend")


@tack.kernel
def shifted(x, out, n, c):
    for i in range(n):
        out[i] = x[2 * i + c]


@tack.kernel
def stencil3(x, out):
    for i in range(1, x.shape[0] - 1):
        out[i] = x[i - 1] + x[i] + x[i + 1]


@tack.kernel
def laplace(u, out):
    for i, j in tack.ndrange((1, u.shape[0] - 1), (1, out.shape[1] - 1)):
        out[i, j] = u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1]


@tack.kernel
def guarded(x, out):
    for i in range(out.shape[0]):
        if i < x.shape[0]:
            out[i] = x[i]


def test_the_case_that_crashed_is_refused_and_writes_nothing():
    x = np.ones(10**6, np.float32)
    y = np.ones(10**6, np.float32)
    out = np.full(4, 7, np.float32)
    with pytest.raises(IndexError, match=r"store to 'out' at indices 0 to 999999 in dimension 0, "
                                         r"but its shape is \(4,\)") as e:
        kernels.vector_add(x, y, out)
    assert "in kernel 'vector_add'" in str(e.value) and "nothing ran" in str(e.value)
    assert out.tolist() == [7] * 4
    # 8 against 4 (the silent heap corruption), and an input shorter than the loop.
    with pytest.raises(IndexError, match="'out'"):
        kernels.vector_add(np.ones(8, np.float32), np.ones(8, np.float32), out)
    with pytest.raises(IndexError, match=r"load from 'y' at indices 0 to 7"):
        kernels.vector_add(np.ones(8, np.float32), np.ones(4, np.float32), np.zeros(8, np.float32))


def test_off_by_one_at_each_end_a_scalar_offset_and_a_step():
    x = tack.asarray(np.arange(10, dtype=np.float32))
    out = tack.zeros((4,))
    shifted(x, out, 4, 3)  # 3, 5, 7, 9
    assert out.numpy().tolist() == [3, 5, 7, 9]
    with pytest.raises(IndexError, match="indices 4 to 10 in dimension 0"):
        shifted(x, out, 4, 4)
    with pytest.raises(IndexError, match="indices -1 to 5 in dimension 0"):
        shifted(x, out, 4, -1)
    assert out.numpy().tolist() == [3, 5, 7, 9]


def test_a_stencil_under_an_inner_range_runs():
    x = np.arange(10, dtype=np.float32)
    out = tack.zeros((10,))
    stencil3(tack.asarray(x), out)
    want = np.zeros(10, np.float32)
    want[1:-1] = x[:-2] + x[1:-1] + x[2:]
    assert out.numpy().tolist() == want.tolist()


def test_each_ndrange_dimension():
    u = tack.ones((6, 5))
    laplace(u, tack.zeros((6, 5)))
    with pytest.raises(IndexError, match=r"load from 'u' at indices 1 to 5 in dimension 1, but its "
                                         r"shape is \(6, 5\)"):
        laplace(u, tack.zeros((6, 7)))
    with pytest.raises(IndexError, match=r"store to 'out' at indices 1 to 4 in dimension 0"):
        laplace(u, tack.zeros((4, 5)))


def test_guarded_accesses_and_empty_launches_run():
    out = tack.zeros((8,))
    guarded(tack.ones((3,)), out)
    assert out.numpy().tolist() == [1, 1, 1, 0, 0, 0, 0, 0]
    kernels.vector_add(tack.zeros((0,)), tack.zeros((0,)), tack.zeros((0,)))
    kernels.vector_add(np.zeros(0, np.float32), np.zeros(0, np.float32), np.zeros(0, np.float32))
