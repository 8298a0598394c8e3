"""The array API of docs/api: creation, dtypes, shapes, copies, views, reductions, devices, and the
backend's declared capabilities."""
import numpy as np
import pytest

import tack
from tack.runtime.dispatch import get_backend

ALL = ["bool_", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f32", "f64"]
NUMPY = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
         "float32", "float64"]


def test_creation_defaults_to_f32_on_the_default_device():
    for make in (tack.empty, tack.zeros, tack.ones):
        a = make((3, 4))
        assert a.dtype is tack.f32 and a.shape == (3, 4) and a.size == 12 and a.ndim == 2
        assert a.device == tack.get_default_device() == tack.device("cpu")
    assert tack.zeros(5).numpy().tolist() == [0] * 5
    assert tack.ones((2,), dtype=tack.i64).numpy().tolist() == [1, 1]
    assert tack.full((2, 2), 7.5).numpy().tolist() == [[7.5, 7.5], [7.5, 7.5]]
    assert tack.full((3,), 2**62 + 1, dtype="i64").numpy().tolist() == [2**62 + 1] * 3
    assert tack.arange(5).numpy().tolist() == [0, 1, 2, 3, 4]
    assert tack.arange(5).dtype is tack.f32
    assert tack.arange(2, 11, 3, dtype=tack.i32).numpy().tolist() == [2, 5, 8]
    x = tack.ones((2, 3), dtype=tack.u8)
    assert tack.empty_like(x).shape == (2, 3) and tack.empty_like(x).dtype is tack.u8
    assert tack.zeros_like(x).numpy().tolist() == [[0, 0, 0]] * 2
    assert tack.zeros_like(np.ones((4,), np.int16)).dtype is tack.i16
    assert tack.ones_like(x, dtype=tack.f64).numpy().dtype == np.float64
    assert tack.full_like(x, 9).numpy().tolist() == [[9, 9, 9]] * 2


@pytest.mark.parametrize("name,np_name", list(zip(ALL, NUMPY)))
def test_dtypes_accept_tack_numpy_and_strings(name, np_name):
    t = getattr(tack, name)
    assert tack.dtype(t) is t
    assert tack.dtype(np_name) is t
    assert tack.dtype(np.dtype(np_name)) is t
    assert tack.dtype(t.name) is t
    assert t == np_name and t == np.dtype(np_name)
    assert t.numpy == np.dtype(np_name)
    assert t.itemsize == np.dtype(np_name).itemsize
    a = tack.zeros((2,), dtype=np.dtype(np_name))
    assert a.dtype is t and a.numpy().dtype == np.dtype(np_name)
    assert t in get_backend().supported_dtypes


def test_dtype_details():
    assert tack.dtype(float) is tack.f64 and tack.dtype(int) is tack.i64  # NumPy's meaning
    assert tack.dtype(np.float32) is tack.f32
    assert repr(tack.f32) == "tack.f32" and str(tack.f32) == "f32"
    assert tack.f32(1.5) == np.float32(1.5) and type(tack.f32(1.5)) is np.float32
    with pytest.raises(TypeError, match="not a dtype"):
        tack.dtype("f16x")
    with pytest.raises(TypeError, match="no dtype"):
        tack.zeros((2,), dtype=np.float16)
    with pytest.raises(TypeError):
        tack.zeros((2,), dtype=np.complex64)


def test_asarray_copies_numpy_data_and_lists():
    src = np.arange(12, dtype=np.int32).reshape(3, 4)
    a = tack.asarray(src)
    assert a.shape == (3, 4) and a.dtype is tack.i32
    src[0, 0] = 100  # a copy: the tack array keeps its values
    assert a.numpy()[0, 0] == 0
    assert tack.asarray([1.5, 2.5]).dtype is tack.f64  # as NumPy reads a list of floats
    assert tack.asarray([1, 2], dtype=tack.u16).numpy().tolist() == [1, 2]
    assert tack.asarray(np.asfortranarray(src)).numpy().tolist() == src.tolist()
    assert tack.asarray(a) is a
    assert tack.asarray(a, dtype=tack.f64).dtype is tack.f64


def test_numpy_is_a_copy():
    a = tack.arange(4)
    n = a.numpy()
    n[0] = 9
    assert a.numpy()[0] == 0


def test_copyto_in_every_direction():
    a = tack.zeros((4,))
    tack.copyto(a, np.array([1, 2, 3, 4], np.float32))
    b = tack.empty((4,))
    tack.copyto(b, a)  # device to device
    host = np.zeros(4, np.float32)
    tack.copyto(host, b)  # device to host
    assert host.tolist() == [1, 2, 3, 4]
    tack.copyto(a, 5.0)  # a scalar broadcasts
    assert a.numpy().tolist() == [5] * 4
    tack.copyto(a, np.arange(4))  # int64 into f32: NumPy's 'same_kind' allows it
    assert a.numpy().tolist() == [0, 1, 2, 3]
    strided = np.zeros(8, np.float64)[::2]
    tack.copyto(strided, a)  # a host destination of another layout and dtype
    assert strided.tolist() == [0, 1, 2, 3]


def test_copyto_refuses_mismatches():
    a = tack.zeros((4,), dtype=tack.i32)
    with pytest.raises(TypeError, match="same_kind"):
        tack.copyto(a, np.ones(4, np.float64))
    with pytest.raises(TypeError, match="shape"):
        tack.copyto(a, np.ones(5, np.int32))
    with pytest.raises(TypeError):
        tack.copyto(a, tack.zeros((5,), dtype=tack.i32))
    with pytest.raises(TypeError):
        tack.copyto(a, tack.zeros((4,), dtype=tack.f32))


def test_fill_reshape_copy_astype():
    a = tack.zeros((2, 6))
    a.fill(3)
    assert a.numpy().tolist() == [[3] * 6] * 2
    r = a.reshape((3, 4))
    assert r.shape == (3, 4)
    assert a.reshape(4, -1).shape == (4, 3)
    r.fill(1)  # a view: the original sees it
    assert a.numpy().sum() == 12
    c = a.copy()
    c.fill(0)
    assert a.numpy().sum() == 12
    f = tack.asarray(np.array([1.7, -2.7, 300.5], np.float64)).astype(tack.i32)
    assert f.dtype is tack.i32 and f.numpy().tolist() == [1, -2, 300]
    with pytest.raises(ValueError):
        a.reshape((5, 5))


def test_row_slices_and_indexing():
    a = tack.asarray(np.arange(12, dtype=np.int64).reshape(4, 3))
    rows = a[1:3]
    assert rows.shape == (2, 3) and rows.numpy().tolist() == [[3, 4, 5], [6, 7, 8]]
    rows.fill(0)  # a view
    assert a.numpy()[1:3].sum() == 0
    assert a[-1:].numpy().tolist() == [[9, 10, 11]]
    assert a[5:].shape == (0, 3)
    assert a[2].shape == (3,)  # a row, as a view
    assert a[3, 2] == 11 and type(a[3, 2]) is int
    v = tack.asarray(np.array([1.5, 2.5, 3.5], np.float32))
    assert v[-1] == 3.5 and type(v[0]) is float
    assert len(v) == 3
    v[1] = 10
    v[0:1] = np.array([7], np.float32)
    assert v.numpy().tolist() == [7, 10, 3.5]
    assert tack.asarray(np.array([2**64 - 1], np.uint64))[0] == 2**64 - 1
    with pytest.raises(IndexError):
        a[4]
    with pytest.raises(IndexError):
        a[0, 0, 0]
    with pytest.raises(IndexError, match="step"):
        a[::2]


def test_reductions():
    x = np.array([3.0, -1.5, 8.25, 0.0], np.float32)
    a = tack.asarray(x)
    assert a.sum() == pytest.approx(float(x.sum()))
    assert a.min() == -1.5 and a.max() == 8.25
    assert a.mean() == pytest.approx(float(x.mean()))
    i = tack.asarray(np.array([4, -9, 2], np.int32))
    assert i.sum() == -3 and type(i.sum()) is int
    assert i.min() == -9 and i.max() == 4
    assert np.isnan(tack.asarray(np.array([1, np.nan], np.float64)).max())
    with pytest.raises(ValueError):
        tack.empty((0,)).min()


def test_repr_and_item():
    a = tack.asarray(np.array([1, 2], np.int16))
    assert repr(a) == "tack.Array([1, 2], dtype=tack.i16, device='cpu:0')"
    assert tack.full((1, 1), 4.0).item() == 4.0
    with pytest.raises(ValueError):
        a.item()


def test_devices_are_values():
    cpu = tack.device("cpu")
    assert cpu == tack.device("cpu:0") and cpu == "cpu:0" and hash(cpu) == hash(tack.device("cpu"))
    assert cpu.type == "cpu" and cpu.index == 0 and str(cpu) == "cpu:0"
    assert cpu in tack.devices()
    assert cpu.backend.name == "cpu"
    previous = tack.get_default_device()
    tack.set_default_device(cpu)
    assert tack.get_default_device() == cpu
    with tack.device("cpu") as d:
        assert d == cpu and tack.get_default_device() == cpu
        assert tack.zeros((2,), device=d).device == cpu
    assert tack.get_default_device() == previous
    assert tack.zeros((2,), device="cpu").device == cpu


def test_backend_capabilities_are_declared():
    be = get_backend()
    assert be.name == "cpu" and isinstance(be.label, str) and be.label
    assert isinstance(be.supported_dtypes, frozenset)
    assert be.supports_f64 is True and be.supports_f64 == (tack.f64 in be.supported_dtypes)
    assert be.supports_device_reductions in (True, False)
    assert be.supports_workgroups is False
    assert isinstance(be.supported_atomic_dtypes, frozenset)
    assert isinstance(be.max_workgroup_size, int)
    assert "cpu" in be.device_memory_spaces
    assert get_backend(tack.device("cpu")).name == "cpu"
    names = [s[0] for s in tack.backend_status()]
    assert names == ["cpu", "cuda", "hip", "level_zero", "metal", "opencl"]


def test_controls():
    tack.sync()
    assert tack.cache_enabled() in (True, False)
    assert isinstance(tack.cache_dir(), str)
    tack.set_debug(True)
    assert tack.is_debug()
    tack.set_debug(False)
    assert not tack.is_debug()
    stats = tack.cache_stats()
    assert set(stats._asdict()) == {"compiles", "memory_hits", "disk_hits", "disk_misses",
                                    "disk_writes", "disk_corrupt", "disk_write_failures",
                                    "disk_refused", "disk_evictions", "disk_lock_waits",
                                    "disk_lock_timeouts", "front_end_runs",
                                    "front_end_records"}
    assert tack.__version__
