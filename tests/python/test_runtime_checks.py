"""The runtime's refusals, in Python: shapes and indices beyond 64 bits, read-only memory from
DLPack 1.0 producers and read-only buffers, empty NumPy arrays, argument kinds, and messages in
Python's spelling."""
import numpy as np
import pytest

import tack

import kernels


@tack.kernel
def write_ones(out):
    for i in range(out.shape[0]):
        out[i] = 1.0


@tack.kernel
def doubled(x, out):
    for i in range(x.shape[0]):
        out[i] = 2.0 * x[i]


@tack.kernel
def scaled(x, s, out):
    for i in range(x.shape[0]):
        out[i] = x[i] * s


def test_shapes_and_indices_beyond_64_bits():
    with pytest.raises(OverflowError, match=r"\(9223372036854775808,\)"):
        tack.empty((2**63,))
    with pytest.raises(OverflowError, match="64 bits"):
        tack.zeros(2**64)
    with pytest.raises(ValueError, match=r"\(4294967296, 4294967296\) is too large"):
        tack.empty((2**32, 2**32))
    with pytest.raises(ValueError, match=r"\(4611686018427387904,\)"):
        tack.empty((2**62,), tack.f32)
    with pytest.raises(ValueError, match="4294967296"):
        tack.zeros((0,)).reshape(2**32, 2**32)
    a = tack.zeros((4,))
    with pytest.raises(IndexError, match="9223372036854775808 is out of bounds for dimension 0"):
        a[2**63]
    with pytest.raises(IndexError, match="out of bounds"):
        a[-2**63 - 1]
    with pytest.raises(IndexError, match="dimension 1 of size 2"):
        tack.zeros((2, 2))[0, 2**64]
    with pytest.raises(IndexError):
        a[2**63] = 1.0


class ReadOnlyProducer:
    """A DLPack 1.0 producer of read-only memory, as a JAX array is: asked for a versioned capsule,
    it flags it DLPACK_FLAG_BITMASK_READ_ONLY; an older consumer gets an unflagged one."""

    def __init__(self, base):
        self.base = base
        self.view = base.view()
        self.view.flags.writeable = False

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if max_version is None or max_version[0] < 1:
            return self.base.__dlpack__()
        return self.view.__dlpack__(max_version=max_version)

    def __dlpack_device__(self):
        return self.base.__dlpack_device__()


def test_a_read_only_dlpack_1_0_capsule_gives_a_read_only_array():
    base = np.zeros(4, np.float32)
    capsule = ReadOnlyProducer(base).__dlpack__(max_version=(1, 0))
    assert "dltensor_versioned" in repr(capsule)
    a = tack.from_dlpack(capsule)
    assert not a.writable
    with pytest.raises(ValueError, match="read-only"):
        write_ones(a)
    assert base.tolist() == [0] * 4


def test_a_read_only_producer_is_not_written_through_from_dlpack_or_directly():
    base = np.arange(4, dtype=np.float32)
    producer = ReadOnlyProducer(base)
    a = tack.from_dlpack(producer)
    assert not a.writable and a.ptr == base.ctypes.data  # a view, not a copy
    with pytest.raises(ValueError, match="writes to 'out', but that array is read-only"):
        write_ones(a)
    with pytest.raises(ValueError, match="read-only"):
        write_ones(producer)
    assert base.tolist() == [0, 1, 2, 3]
    # Reading it is fine.
    out = np.zeros(4, np.float32)
    doubled(producer, out)
    assert out.tolist() == [0, 2, 4, 6]


def test_read_only_buffers_give_read_only_arrays():
    data = np.arange(4, dtype=np.float32).tobytes()
    view = memoryview(data).cast("f")
    a = tack.from_dlpack(view)
    assert not a.writable and a.numpy().tolist() == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="read-only"):
        write_ones(view)
    assert np.frombuffer(data, np.float32).tolist() == [0, 1, 2, 3]
    writable = bytearray(16)
    write_ones(memoryview(writable).cast("f"))
    assert np.frombuffer(writable, np.float32).tolist() == [1] * 4


def test_empty_numpy_arrays_are_accepted():
    for shape in [(0,), (0, 3), (3, 0)]:
        e = np.zeros(shape, np.float32)
        t = tack.from_dlpack(e, copy=False)
        assert t.shape == shape and t.size == 0
    empty = np.zeros(0, np.float32)
    kernels.vector_add(empty, empty, np.zeros(0, np.float32))


def test_argument_kind_mismatches_are_type_errors():
    x, out = tack.ones((4,)), tack.zeros((4,))
    with pytest.raises(TypeError, match="argument 's' is an array but is used as a scalar value"):
        scaled(x, x, out)
    with pytest.raises(TypeError, match="argument 'x' is a scalar but its shape is read"):
        scaled(3.0, 2.0, out)


def test_messages_use_python_spelling():
    if "opencl" not in [name for name, available, _ in tack.backend_status() if available]:
        pytest.skip("needs a second device")
    x = tack.ones((4,), device="opencl")
    with pytest.raises(TypeError) as e:
        doubled(x, tack.zeros((4,), device="cpu"))
    assert "tack.copyto" in str(e.value) and "::" not in str(e.value)
