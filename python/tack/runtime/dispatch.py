"""Backends as dispatch sees them.

    from tack.runtime.dispatch import get_backend
    be = get_backend()                # the default device's backend
    be.name, be.label                 # 'cpu', 'the CPU'
    be.supported_dtypes               # frozenset of tack dtypes that arguments are checked against
    be.supports_f64                   # derived from supported_dtypes
    be.supports_device_reductions     # whether .sum()/.min()/.max() run on the device
    be.supports_workgroups, be.supported_atomic_dtypes, be.max_workgroup_size
    be.supports_hardware_textures     # tex.sample is the texture unit (interp="linear" textures)
    be.device_memory_spaces           # what tack.memory_space() answers for its memory

Capabilities are declared by each backend in the core, never probed.
"""
from .._tack import Backend, backend_status, get_backend

__all__ = ["Backend", "backend_status", "get_backend"]
