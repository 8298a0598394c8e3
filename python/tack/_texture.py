"""Textures: tack.texture2d and tack.texture3d, sampled in kernels with tex.sample(u, v[, w])."""
import numpy as np

from . import _tack


class Texture(_tack.Texture):
    """A snapshot of an f32 array (x fastest) that kernels sample with normalized coordinates,
    linear filtering and clamp-to-edge addressing. update() takes a new snapshot after the array
    changes."""

    def __init__(self, array, shape):
        self._source = array
        if isinstance(array, _tack.Array):
            self._array = array
        else:  # NumPy and the like: copied to the default device, again at each update()
            self._array = _tack._from_host(np.ascontiguousarray(array, dtype=np.float32), None,
                                           None)
        super().__init__(self._array, tuple(shape))

    def update(self):
        if self._array is not self._source:
            _tack.copyto(self._array, _tack._from_host(
                np.ascontiguousarray(self._source, dtype=np.float32), None, self._array.device))
        super().update()

    def __repr__(self):
        shape = tuple(reversed(self.data.shape))
        return f"tack.texture{self.dims}d(shape={shape})"


def texture2d(array, shape):
    """A 2-D texture of an f32 array of width * height values: shape=(width, height)."""
    if len(shape) != 2:
        raise ValueError("texture2d takes shape=(width, height)")
    return Texture(array, shape)


def texture3d(array, shape):
    """A 3-D texture of an f32 array of width * height * depth values: shape=(width, height,
    depth)."""
    if len(shape) != 3:
        raise ValueError("texture3d takes shape=(width, height, depth)")
    return Texture(array, shape)
