"""The small conventions Python users expect: tack.get_backend at the top level, 0-d arrays from
scalars, NumPy's strides, .T, len() and np.asarray."""
import numpy as np
import pytest

import tack


def test_get_backend_at_the_top_level():
    from tack.runtime.dispatch import get_backend

    assert tack.get_backend() is get_backend() or tack.get_backend().name == get_backend().name
    assert tack.get_backend("cpu").name == "cpu"
    assert tack.get_backend(tack.device("cpu")).supports_f64


@pytest.mark.parametrize("scalar, dtype", [
    (np.float32(2.5), tack.f32), (np.int64(-7), tack.i64), (np.bool_(True), tack.bool_),
    (np.float64(0.125), tack.f64),
])
def test_asarray_of_a_numpy_scalar_is_0d(scalar, dtype):
    a = tack.asarray(scalar, device="cpu")
    assert a.shape == () and a.ndim == 0 and a.size == 1 and a.dtype == dtype
    assert a.item() == scalar.item()
    assert np.asarray(a).shape == ()


def test_strides_are_numpys():
    for shape, dtype in [((5,), np.float32), ((3, 4), np.float64), ((2, 3, 4), np.int16),
                         ((), np.float32)]:
        a = tack.zeros(shape, dtype=dtype, device="cpu")
        assert a.strides == np.zeros(shape, dtype=dtype).strides, shape


def test_transpose_of_2d_is_a_read_only_copy():
    values = np.arange(12, dtype=np.float32).reshape(3, 4)
    a = tack.asarray(values, device="cpu")
    t = a.T
    assert t.shape == (4, 3)
    np.testing.assert_array_equal(t.numpy(), values.T)
    assert not t.writable
    with pytest.raises(ValueError, match="read-only"):
        t[0, 1] = 5.0
    np.testing.assert_array_equal(a.numpy(), values)  # untouched
    v = tack.arange(5, device="cpu")
    assert v.T is v or v.T.shape == (5,)
    with pytest.raises(TypeError, match="1-d and 2-d"):
        tack.zeros((2, 2, 2), device="cpu").T


def test_len_is_the_first_extent():
    assert len(tack.zeros((6, 2), device="cpu")) == 6
    with pytest.raises(TypeError, match="0-d"):
        len(tack.asarray(np.float32(1), device="cpu"))


def test_array_protocol_views_host_memory():
    a = tack.arange(8, device="cpu")
    view = np.asarray(a)
    view[0] = 42.0
    assert a[0] == 42.0  # no copy
    copied = np.array(a, copy=True) if np.lib.NumpyVersion(np.__version__) >= "2.0.0" else a.numpy()
    copied[1] = -1.0
    assert a[1] == 1.0
    assert "view" in tack.Array.__array__.__doc__
