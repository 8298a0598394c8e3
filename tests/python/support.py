"""Helpers the Python test modules share."""
import inspect

import numpy as np


def bits_equal(a, b):
    """The same dtype, shape and bytes: bit for bit, NaNs and signed zeros included."""
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


def line_of(fn, marker):
    """The line number, in fn's file, of the first line of fn's source that contains marker."""
    lines, first = inspect.getsourcelines(fn)
    for k, text in enumerate(lines):
        if marker in text:
            return first + k
    raise AssertionError(marker)
