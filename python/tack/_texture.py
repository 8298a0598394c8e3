"""Textures: tack.texture2d and tack.texture3d, sampled in kernels with tex.sample(u, v[, w])."""
import numpy as np

from . import _tack


class Texture(_tack.Texture):
    """A snapshot of an f32 array (x fastest) that kernels sample with normalized coordinates,
    linear filtering and clamp-to-edge addressing. update() takes a new snapshot after the array
    changes. interp="linear" samples with the device's texture unit where the backend has one
    (tack.runtime.dispatch.get_backend().supports_hardware_textures; coarser weights, within the
    bound of docs/language.md), interp="linear_exact" in software everywhere (the same bits as the
    CPU)."""

    def __init__(self, array, shape, interp="linear"):
        self._source = array
        if isinstance(array, _tack.Array):
            self._array = array
        else:  # NumPy and the like: copied to the default device, again at each update()
            self._array = _tack._from_host(np.ascontiguousarray(array, dtype=np.float32), None,
                                           None)
        super().__init__(self._array, tuple(shape), interp)

    def update(self):
        if self._array is not self._source:
            _tack.copyto(self._array, _tack._from_host(
                np.ascontiguousarray(self._source, dtype=np.float32), None, self._array.device))
        super().update()

    def __repr__(self):
        shape = tuple(reversed(self.data.shape))
        extra = ", interp='linear_exact'" if self.interp == "linear_exact" else ""
        return f"tack.texture{self.dims}d(shape={shape}{extra})"


def texture2d(array, shape, interp="linear"):
    """A 2-D texture of an f32 array of width * height values: shape=(width, height)."""
    if len(shape) != 2:
        raise ValueError("texture2d takes shape=(width, height)")
    return Texture(array, shape, interp)


def texture3d(array, shape, interp="linear"):
    """A 3-D texture of an f32 array of width * height * depth values: shape=(width, height,
    depth)."""
    if len(shape) != 3:
        raise ValueError("texture3d takes shape=(width, height, depth)")
    return Texture(array, shape, interp)
