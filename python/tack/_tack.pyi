"""
Tack's C++ core, as the tack package uses it. Import tack, not this module.
"""

from collections.abc import Sequence
import enum
from typing import Annotated, Any

from numpy.typing import NDArray

from tack import (
    CompileError as CompileError,
    DeviceError as DeviceError
)
from tack._tack import algorithms as algorithms


class DType:
    """A scalar element type: tack.bool_, tack.i8 ... tack.f64."""

    @property
    def name(self) -> str: ...

    @property
    def itemsize(self) -> int: ...

    @property
    def numpy(self) -> object: ...

    def __repr__(self) -> str: ...

    def __str__(self) -> str: ...

    def __hash__(self) -> int: ...

    def __eq__(self, arg: object, /) -> bool: ...

    def __ne__(self, arg: object, /) -> bool: ...

    def __call__(self, arg: object, /) -> object: ...

    def __reduce__(self) -> str: ...

i8: DType = ...

u8: DType = ...

i16: DType = ...

u16: DType = ...

i32: DType = ...

u32: DType = ...

i64: DType = ...

u64: DType = ...

f32: DType = ...

f64: DType = ...

def dtype(like: object) -> DType:
    """The tack dtype for a tack dtype, a NumPy dtype or type, or a string."""

class Backend:
    """A backend's declared capabilities (docs/backends.md); never probed."""

    @property
    def name(self) -> str: ...

    @property
    def label(self) -> str: ...

    @property
    def supported_dtypes(self) -> frozenset: ...

    @property
    def supported_atomic_dtypes(self) -> frozenset: ...

    @property
    def supports_f64(self) -> bool: ...

    @property
    def supports_device_reductions(self) -> bool: ...

    @property
    def supports_workgroups(self) -> bool: ...

    @property
    def supports_hardware_textures(self) -> bool: ...

    @property
    def max_workgroup_size(self) -> int: ...

    @property
    def device_memory_spaces(self) -> tuple: ...

    @property
    def asynchronous(self) -> bool: ...

    def __repr__(self) -> str: ...

class Device:
    """One device of one backend: tack.device('cpu'), 'cuda:1'."""

    @property
    def type(self) -> str: ...

    @property
    def index(self) -> int: ...

    @property
    def name(self) -> str: ...

    @property
    def backend(self) -> Backend: ...

    def __str__(self) -> str: ...

    def __repr__(self) -> str: ...

    def __eq__(self, arg: object, /) -> bool: ...

    def __hash__(self) -> int: ...

    def __enter__(self) -> Device: ...

    def __exit__(self, *args) -> None: ...

def device(name: str | Device) -> Device:
    """
    The device named 'cpu', 'opencl', 'cuda:1', 'cuda:local'...; also a context manager: `with tack.device('cpu'):` makes it the default device inside. DeviceError when its backend is unavailable, with the reason.
    """

def devices() -> list[Device]:
    """Every device of every available backend."""

def local_rank() -> int | None:
    """
    This process's rank on its node under a launcher (mpirun, srun), else 0.
    """

def local_size() -> int | None:
    """
    The number of processes on this node under a launcher (mpirun, srun), else 1.
    """

def set_default_device(device: str | Device) -> None:
    """
    Makes `device` (a Device or a name such as 'cpu') the one new arrays and kernel calls without arrays use.
    """

def get_default_device() -> Device:
    """The device new arrays and calls use unless told otherwise."""

def get_backend(device: str | Device | None = None) -> Backend:
    """
    The declared capabilities of `device`'s backend (default: the default device's).
    """

def backend_status() -> list[tuple[str, bool, str]]:
    """Every backend as (name, available, reason when it is not)."""

def version() -> str:
    """Tack's version."""

def set_debug(on: bool = True) -> None:
    """
    Debug mode: variants compiled from now on check every array index, and a violation raises IndexError naming the kernel, array, index, shape and line (TACK_DEBUG=1).
    """

def set_log_level(level: int) -> None:
    """
    Level 1 or more: one line on stderr per compile, disk-cache hit, disk-cache miss (with its reason) and launch, with timings; 0 turns the log off. TACK_LOG=1 sets it at start-up.
    """

def log_level() -> int:
    """The level set_log_level or TACK_LOG set (0: off)."""

def debug() -> bool:
    """Whether debug mode is on."""

def sync() -> None:
    """
    Waits for queued work on every device; raises the first error it produced.
    """

class CacheStats:
    """This process's counters of compilation and cache use."""

    @property
    def compiles(self) -> int: ...

    @property
    def memory_hits(self) -> int: ...

    @property
    def disk_hits(self) -> int: ...

    @property
    def disk_misses(self) -> int: ...

    @property
    def disk_writes(self) -> int: ...

    @property
    def disk_corrupt(self) -> int: ...

    @property
    def disk_write_failures(self) -> int: ...

    @property
    def disk_refused(self) -> int: ...

    @property
    def disk_evictions(self) -> int: ...

    @property
    def disk_lock_waits(self) -> int: ...

    @property
    def disk_lock_timeouts(self) -> int: ...

    @property
    def front_end_runs(self) -> int: ...

    @property
    def front_end_records(self) -> int: ...

    def __repr__(self) -> str: ...

def cache_stats() -> CacheStats:
    """This process's counters of compiles and cache use."""

def cache_dir() -> str:
    """
    The disk cache's directory (TACK_CACHE_DIR, else the user's cache directory).
    """

def cache_enabled() -> bool:
    """Whether the disk cache is used (cache_disabled_reason() says why not)."""

def cache_disabled_reason() -> str:
    """Why the disk cache is off, or an empty string."""

def clear_cache() -> int:
    """
    Removes every entry of the disk cache and forgets compiled variants; returns the number of entries removed.
    """

class Texture:
    """
    A sampled f32 texture (a snapshot of an array); tack.texture2d and tack.texture3d make one.
    """

    def __init__(self, source: Array, shape: object, interp: str = 'linear') -> None: ...

    @property
    def dims(self) -> int: ...

    @property
    def interp(self) -> str: ...

    @property
    def data(self) -> Array: ...

    def update(self) -> None: ...

class Array:
    """An n-dimensional, row-major, contiguous array on one device."""

    @property
    def shape(self) -> tuple[int, ...]:
        """The extent of each dimension."""

    @property
    def dtype(self) -> DType:
        """The element type (tack.f32...)."""

    @property
    def size(self) -> int:
        """The number of elements."""

    @property
    def ndim(self) -> int:
        """The number of dimensions."""

    @property
    def nbytes(self) -> int:
        """The size of the elements in bytes."""

    @property
    def itemsize(self) -> int:
        """The size of one element in bytes."""

    @property
    def strides(self) -> tuple[int, ...]:
        """
        Bytes from one element to the next along each dimension, as NumPy's strides: an array is row-major and contiguous, so the last one is itemsize.
        """

    @property
    def T(self) -> Array:
        """
        The transpose of a 2-d array: a read-only copy (arrays are contiguous, so it cannot be a view as in NumPy; a write to it raises). A 1-d or 0-d array is itself.
        """

    @property
    def device(self) -> Device:
        """The device that holds the elements."""

    @property
    def writable(self) -> bool:
        """
        False for memory its producer marked read-only: kernels refuse to write it.
        """

    @property
    def ptr(self) -> int:
        """The address of the first element, in the device's memory space."""

    def numpy(self) -> Annotated[NDArray, dict(Any, Any)]:
        """A copy on the host, as a NumPy array."""

    def fill(self, value: int | float | bool) -> None:
        """Sets every element to value."""

    def reshape(self, *shape: int | tuple[int, ...]) -> Array:
        """
        A view of the same elements with another shape: a.reshape(4, 8) or a.reshape((4, 8)); one extent may be -1.
        """

    def copy(self) -> Array:
        """A new array with the same elements, on the same device."""

    def astype(self, dtype: object) -> Array:
        """
        A new array of the elements converted to dtype (tack.f64, a NumPy dtype or a name).
        """

    def sum(self) -> int | float | bool:
        """
        The sum of the elements, as a Python number (tack.algorithms.sum: integers exact, floats in a fixed order).
        """

    def min(self) -> int | float | bool:
        """The smallest element."""

    def max(self) -> int | float | bool:
        """The largest element."""

    def mean(self) -> float:
        """
        The mean of the elements, a float (NaN for an empty array, as NumPy's).
        """

    def item(self) -> int | float | bool:
        """The one element of an array of size 1, as a Python number."""

    def tolist(self) -> list[object]:
        """The elements as nested Python lists."""

    def __len__(self) -> int:
        """The first extent, as for a NumPy array (TypeError for a 0-d array)."""

    def __getitem__(self, key: object) -> Any:
        """
        An element (a Python number) for a full index, else a view of the rows selected.
        """

    def __setitem__(self, arg0: object, arg1: object, /) -> None: ...

    def __repr__(self) -> str: ...

    def __array__(self, dtype: object | None = None, copy: object | None = None) -> object:
        """
        NumPy's protocol (np.asarray(a)): a view of the elements, without a copy, for an array in host memory; a copy for one on another device or with copy=True (copy=False there raises ValueError).
        """

    def __dlpack__(self, *, stream: object | None = None, max_version: object | None = None, dl_device: object | None = None, copy: object | None = None) -> object: ...

    def __dlpack_device__(self) -> tuple: ...

def empty(shape: int | tuple[int, ...], dtype: object = None, device: str | Device | None = None) -> Array:
    """
    A new array of this shape whose elements are not set; f32 unless a dtype is given, on the default device unless a device is given.
    """

def zeros(shape: int | tuple[int, ...], dtype: object = None, device: str | Device | None = None) -> Array:
    """A new array of zeros (f32 unless a dtype is given)."""

def ones(shape: int | tuple[int, ...], dtype: object = None, device: str | Device | None = None) -> Array:
    """A new array of ones (f32 unless a dtype is given)."""

def full(shape: int | tuple[int, ...], fill_value: int | float | bool, dtype: object = None, device: str | Device | None = None) -> Array:
    """
    A new array with every element fill_value (f32 unless a dtype is given).
    """

def empty_like(a: object, dtype: object = None, device: str | Device | None = None) -> Array:
    """
    A new array of a's shape (a tack or NumPy array), and its dtype and device unless given; elements not set.
    """

def zeros_like(a: object, dtype: object = None, device: str | Device | None = None) -> Array:
    """
    A new array of zeros of a's shape, and its dtype and device unless given.
    """

def copyto(dst: object, src: object) -> None:
    """
    Copies src into dst, of the same shape: tack arrays on any devices, or one of them a NumPy array (or anything NumPy takes).
    """

def from_dlpack(obj: object, *, copy: bool | None = None) -> Array:
    """
    A tack array of a DLPack producer's memory (a NumPy, PyTorch, CuPy, JAX array...), without a copy unless copy=True; read-only memory gives a read-only array.
    """

def array_from_ptr(ptr: int, shape: int | tuple[int, ...], dtype: object = None, device: str | Device | None = None, writable: bool = False) -> Array:
    """
    An array over memory Tack does not own, at address ptr on device, without a copy; the memory must outlive the array. Read-only unless writable=True.
    """

def memory_space(ptr: int) -> str:
    """
    The memory space of an address: 'cpu' for host memory, or a GPU backend's space ('cuda', 'cuda_pinned', 'cuda_managed'...).
    """

class ExternalName:
    """What a free name in a decorated function refers to."""

    def __init__(self) -> None: ...

    class Kind(enum.Enum):
        Unknown = 0

        HostValue = 1

        Constant = 2

        Function = 3

        TackModule = 4

        MathModule = 5

        TackMember = 6

        ForeignModule = 7

    @property
    def kind(self) -> ExternalName.Kind: ...

    @kind.setter
    def kind(self, arg: ExternalName.Kind, /) -> None: ...

    @property
    def is_float(self) -> bool: ...

    @is_float.setter
    def is_float(self, arg: bool, /) -> None: ...

    @property
    def is_bool(self) -> bool: ...

    @is_bool.setter
    def is_bool(self, arg: bool, /) -> None: ...

    @property
    def is_big(self) -> bool: ...

    @is_big.setter
    def is_big(self, arg: bool, /) -> None: ...

    @property
    def int_value(self) -> int: ...

    @int_value.setter
    def int_value(self, arg: int, /) -> None: ...

    @property
    def uint_value(self) -> int: ...

    @uint_value.setter
    def uint_value(self, arg: int, /) -> None: ...

    @property
    def float_value(self) -> float: ...

    @float_value.setter
    def float_value(self, arg: float, /) -> None: ...

    @property
    def dtype(self) -> str: ...

    @dtype.setter
    def dtype(self, arg: str, /) -> None: ...

    @property
    def components(self) -> list[ExternalName]: ...

    @components.setter
    def components(self, arg: Sequence[ExternalName], /) -> None: ...

    @property
    def source(self) -> str: ...

    @source.setter
    def source(self, arg: str, /) -> None: ...

    @property
    def filename(self) -> str: ...

    @filename.setter
    def filename(self, arg: str, /) -> None: ...

    @property
    def first_line(self) -> int: ...

    @first_line.setter
    def first_line(self, arg: int, /) -> None: ...

    @property
    def member(self) -> str: ...

    @member.setter
    def member(self, arg: str, /) -> None: ...

class KernelVariant:
    """
    One specialization of a kernel: its argument types, its device and where its code came from.
    """

    @property
    def arg_types(self) -> str:
        """
        The argument types as `tack emit --args` writes them: 'f32,f32[],f32[]'.
        """

    @property
    def device(self) -> str:
        """The device, e.g. 'cpu:0'."""

    @property
    def origin(self) -> str:
        """
        'compiled', 'disk cache', 'shared with another kernel object', or 'not loaded yet' (with ' (no-alias)' for the code that assumes no overlapping arrays).
        """

    def __repr__(self) -> str: ...

class Kernel:
    """
    A @tack.kernel: compiled at its first call for its argument types, then cached in memory and on disk.
    """

    def __call__(self, /, *args, **kwargs):
        """Call self as a function."""

    def __get__(self, instance, owner=None, /):
        """Return an attribute of instance, which is of type owner."""

    def __init__(self, fn: object) -> None: ...

    @property
    def __wrapped__(self) -> object: ...

    def __getattr__(self, arg: object, /) -> object: ...

    @property
    def name(self) -> str: ...

    def __repr__(self) -> str: ...

    @property
    def variants(self) -> list:
        """
        The variants specialized so far (a list of tack.KernelVariant), one per argument types and device.
        """

class Class:
    """A device class as the core knows it (made by tack._classes)."""

    def __init__(self, name: str, iterate: Sequence[str], methods: object) -> None: ...

    @property
    def name(self) -> str: ...

    def __repr__(self) -> str: ...

class Function:
    """A @tack.func as the core knows it, stored in an object."""

    def __init__(self, source: str, filename: str, first_line: int, resolver: object, name: str) -> None: ...

    @property
    def name(self) -> str: ...

    def __repr__(self) -> str: ...
