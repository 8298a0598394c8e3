"""DLPack both ways, NumPy's protocols, array_from_ptr and memory_space."""
import gc

import numpy as np
import pytest

import tack

import kernels


def test_numpy_from_dlpack_views_a_tack_array_without_a_copy():
    a = tack.arange(6)
    assert a.__dlpack_device__() == (1, 0)  # kDLCPU, device 0
    view = np.from_dlpack(a)
    assert view.dtype == np.float32 and view.shape == (6,)
    assert view.ctypes.data == a.ptr
    a.fill(2)  # the same memory
    assert view.tolist() == [2] * 6
    view[0] = 7
    assert a[0] == 7


def test_exported_memory_outlives_the_tack_array():
    a = tack.full((1000,), 3.0)
    view = np.from_dlpack(a)
    del a
    gc.collect()
    assert view.sum() == 3000.0


def test_np_asarray_views_host_arrays():
    a = tack.asarray(np.arange(12, dtype=np.int32).reshape(3, 4))
    v = np.asarray(a)
    assert v.shape == (3, 4) and v.dtype == np.int32 and v.ctypes.data == a.ptr
    assert np.asarray(a, dtype=np.float64).dtype == np.float64
    assert np.array(a, copy=True).ctypes.data != a.ptr


def test_dlpack_capsules_both_versions():
    a = tack.ones((3,))
    assert type(a.__dlpack__()).__name__ == "PyCapsule"
    assert type(a.__dlpack__(max_version=(1, 0))).__name__ == "PyCapsule"
    c = np.from_dlpack(a, copy=True)
    c[0] = 5
    assert a[0] == 1


def test_from_dlpack_wraps_numpy_memory_and_kernels_write_into_it():
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    tx, tout = tack.from_dlpack(x), tack.from_dlpack(out)
    assert tx.ptr == x.ctypes.data and tout.ptr == out.ctypes.data
    assert tx.writable and tout.dtype is tack.f32 and tout.shape == (8,)
    kernels.vector_add(tx, tx, tout)
    assert out.tolist() == [2 * i for i in range(8)]


def test_from_dlpack_keeps_the_producer_alive():
    x = np.arange(100_000, dtype=np.float64)
    t = tack.from_dlpack(x)
    view = t[10:20]
    del x, t
    gc.collect()
    assert view.numpy().tolist() == list(range(10, 20))


def test_round_trip_through_numpy_and_back():
    a = tack.asarray(np.arange(24, dtype=np.int16).reshape(2, 3, 4))
    b = tack.from_dlpack(np.from_dlpack(a))
    assert b.ptr == a.ptr and b.shape == (2, 3, 4) and b.dtype is tack.i16
    for dtype in ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
                  "uint64", "float32", "float64"):
        src = (np.arange(10) % 3).astype(dtype)
        t = tack.from_dlpack(src)
        assert t.dtype == dtype
        np.testing.assert_array_equal(np.from_dlpack(t), src)
        np.testing.assert_array_equal(t.numpy(), src)


def test_from_dlpack_of_a_tack_array_is_itself():
    a = tack.ones((2,))
    assert tack.from_dlpack(a) is a
    assert tack.from_dlpack(a, copy=True).ptr != a.ptr


def test_non_contiguous_memory_is_copied_or_refused():
    base = np.arange(20, dtype=np.float32)
    strided = base[::2]
    t = tack.from_dlpack(strided)  # no zero-copy layout: a contiguous copy
    assert t.numpy().tolist() == strided.tolist() and t.ptr != strided.ctypes.data
    with pytest.raises(ValueError, match="contiguous"):
        tack.from_dlpack(strided, copy=False)
    out = tack.empty((10,))
    with pytest.raises(ValueError, match="contiguous"):
        kernels.vector_add(strided, strided, out)


def test_read_only_memory_is_read_only():
    x = np.arange(4, dtype=np.float32)
    x.flags.writeable = False
    t = tack.from_dlpack(x)
    assert not t.writable
    with pytest.raises(ValueError, match="read-only"):
        t.fill(1)
    exported = np.from_dlpack(t)
    assert not exported.flags.writeable


def test_unsupported_dtypes_and_objects():
    with pytest.raises(TypeError, match="float16"):
        tack.from_dlpack(np.zeros(3, np.float16))
    with pytest.raises(TypeError, match="DLPack"):
        tack.from_dlpack("not an array")


def test_array_from_ptr_and_memory_space():
    host = np.arange(6, dtype=np.int32)
    ro = tack.array_from_ptr(host.ctypes.data, (2, 3), tack.i32)
    assert not ro.writable and ro.shape == (2, 3)
    assert ro.numpy().tolist() == [[0, 1, 2], [3, 4, 5]]
    rw = tack.array_from_ptr(host.ctypes.data, (6,), "int32", writable=True)
    rw.fill(9)
    assert host.tolist() == [9] * 6
    assert tack.memory_space(host.ctypes.data) == "cpu"
    assert tack.memory_space(tack.ones((2,)).ptr) in tack.get_default_device().backend.device_memory_spaces


def _cuda_and_cupy():
    """CuPy, where CUDA is available to Tack and CuPy is installed; else the test is skipped."""
    status = {name: (ok, why) for name, ok, why in tack.backend_status()}
    ok, why = status["cuda"]
    if not ok:
        pytest.skip(f"CUDA is unavailable here: {why}")
    return pytest.importorskip("cupy")


def test_cuda_memory_goes_both_ways_through_dlpack():
    cp = _cuda_and_cupy()
    a = tack.arange(8, device="cuda")
    assert a.__dlpack_device__() == (2, 0)  # kDLCUDA, device 0
    assert tack.memory_space(a.ptr) == "cuda"
    view = cp.from_dlpack(a)  # CuPy sees Tack's memory, not a copy
    assert view.data.ptr == a.ptr
    assert cp.asnumpy(view).tolist() == list(range(8))
    src = cp.arange(8, dtype=cp.float32)
    t = tack.from_dlpack(src)  # and Tack sees CuPy's
    assert t.device == tack.device("cuda:0") and t.ptr == src.data.ptr
    kernels.vector_add(t, t, t)  # doubles CuPy's array in place; complete when the call returns
    assert cp.asnumpy(src).tolist() == [2.0 * i for i in range(8)]


def test_cuda_memory_spaces():
    cp = _cuda_and_cupy()
    managed = cp.cuda.malloc_managed(256)
    pinned = cp.cuda.alloc_pinned_memory(256)
    device_memory = cp.cuda.alloc(256)
    assert tack.memory_space(device_memory.ptr) == "cuda"
    assert tack.memory_space(managed.ptr) == "cuda_managed"
    assert tack.memory_space(pinned.ptr) == "cuda_pinned"
    assert tack.memory_space(np.zeros(4).ctypes.data) == "cpu"
    with pytest.raises(ValueError, match="not CUDA memory"):
        tack.array_from_ptr(np.zeros(4).ctypes.data, (4,), "f32", device="cuda")
