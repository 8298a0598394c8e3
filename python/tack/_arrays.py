"""Array creation that goes through NumPy: asarray, arange with a start or step, *_like."""
from __future__ import annotations

import operator
from typing import Optional, Union

import numpy as np

from . import _tack
from ._tack import Array


def asarray(obj: object, dtype: object = None, device: object = None) -> Array:
    """A tack array with obj's values: a tack array is returned as it is (converted when dtype or
    device differ); anything NumPy takes (arrays, lists, scalars) is copied into a new array, a
    scalar (a Python or NumPy number) into a 0-d array."""
    if isinstance(obj, Array):
        out = obj
        if dtype is not None and _tack.dtype(dtype) != out.dtype:
            out = out.astype(dtype)
        if device is not None and _tack.device(device) != out.device:
            moved = _tack.empty(out.shape, out.dtype, device)
            _tack.copyto(moved, out)
            out = moved
        return out
    return _tack._from_host(obj, dtype, device)


def arange(start: Union[int, float], stop: Optional[Union[int, float]] = None,
           step: Optional[Union[int, float]] = None, *, dtype: object = None,
           device: object = None) -> Array:
    """arange(n) or arange(start, stop[, step]): f32 unless a dtype is given."""
    if stop is None and step is None:
        return _tack._arange(operator.index(start), dtype, device)
    if stop is None:
        start, stop = 0, start
    np_dtype = _tack.dtype(dtype if dtype is not None else _tack.f32).numpy
    values = np.arange(start, stop, 1 if step is None else step, dtype=np_dtype)
    return _tack._from_host(values, None, device)


def ones_like(a: Array, dtype: object = None, device: object = None) -> Array:
    """A new array of a's shape (and dtype and device unless given), filled with ones."""
    out = _tack.empty_like(a, dtype, device)
    out.fill(1)
    return out


def full_like(a: Array, fill_value: object, dtype: object = None, device: object = None) -> Array:
    """A new array of a's shape (and dtype and device unless given), filled with fill_value."""
    out = _tack.empty_like(a, dtype, device)
    out[...] = fill_value
    return out
