"""Tack: one compute kernel, written once, compiled at its first call for the device it runs on.

    import numpy as np
    import tack

    @tack.kernel
    def vector_add(x, y, out):
        for i in range(x.shape[0]):
            out[i] = x[i] + y[i]

    x = tack.asarray(np.arange(1024, dtype=np.float32))
    y = tack.ones((1024,))
    out = tack.empty_like(x)
    vector_add(x, y, out)
    print(out.numpy())

This package is a thin layer over Tack's C++ core (the extension module ``tack._tack``): it hands a
decorated function's source text and a resolver for its free names to the core, converts NumPy and
DLPack objects into arrays and scalars, and raises the core's errors as Python exceptions.
"""

from . import _nvrtc

_nvrtc.preload()

from . import _tack  # noqa: E402
from ._tack import (  # noqa: E402,F401
    Array,
    Backend,
    CacheStats,
    CompileError,
    Device,
    DeviceError,
    DType,
    array_from_ptr,
    backend_status,
    cache_dir,
    cache_disabled_reason,
    cache_enabled,
    cache_stats,
    clear_cache,
    copyto,
    device,
    devices,
    dtype,
    empty,
    empty_like,
    from_dlpack,
    full,
    get_backend,
    get_default_device,
    KernelVariant,
    log_level,
    memory_space,
    ones,
    set_debug,
    set_default_device,
    set_log_level,
    sync,
    zeros,
    zeros_like,
)
from ._tack import bool_, i8, u8, i16, u16, i32, u32, i64, u64, f32, f64  # noqa: E402,F401
from ._arrays import arange, asarray, full_like, ones_like  # noqa: E402,F401
from ._kernel import Func, Kernel, constant, func, inspect, kernel  # noqa: E402,F401
from ._builtins import *  # noqa: E402,F401,F403
from . import _builtins  # noqa: E402
# Not in __all__ (a star import must not shadow Python's own); "as" re-exports them to type checkers.
from ._builtins import abs as abs, all as all, any as any, max as max  # noqa: E402,F401
from ._builtins import min as min, pow as pow, round as round  # noqa: E402,F401
from . import math, mpi, random  # noqa: E402,F401
from ._texture import Texture, texture2d, texture3d  # noqa: E402,F401
from ._classes import data_oriented, template  # noqa: E402,F401
from . import arrays  # noqa: E402,F401
from . import algorithms  # noqa: E402,F401

__version__ = _tack.version()

from typing import Optional as _Optional  # noqa: E402


def local_device(kind: _Optional[str] = None) -> Device:
    """The device of backend `kind` (default: the default device's) for this process when a launcher
    (mpirun, mpiexec, srun) started several on the node: ``tack.device(kind + ":local")``, the
    node-local rank modulo the backend's device count (docs/mpi.md)."""
    if kind is None:
        kind = get_default_device().type
    return device(f"{kind}:local")


def is_debug() -> bool:
    """Whether variants compiled from now on check every array index (set_debug, TACK_DEBUG=1)."""
    return _tack.debug()


__all__ = [
    "Array", "Backend", "CacheStats", "CompileError", "Device", "DeviceError", "DType", "Func",
    "Kernel", "arange", "array_from_ptr", "asarray", "backend_status", "cache_dir",
    "cache_disabled_reason", "cache_enabled", "cache_stats", "clear_cache", "constant", "copyto", "device", "devices",
    "dtype", "empty", "empty_like", "from_dlpack", "full", "full_like", "func",
    "get_backend", "get_default_device", "inspect", "is_debug", "KernelVariant", "log_level",
    "set_log_level", "kernel", "local_device", "memory_space", "ones", "ones_like",
    "set_debug", "set_default_device", "sync", "zeros", "zeros_like", "Texture", "texture2d",
    "texture3d", "data_oriented", "template", "arrays", "algorithms",
    "bool_", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f32", "f64",
]
# Written so that type checkers read the list: the builtins' names are _builtins.__all__.
__all__ += _builtins.__all__
