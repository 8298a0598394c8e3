"""tack.math: the kernel language's math builtins and GLSL helpers (dot, cross, mix, clamp...).

The same objects as tack.sqrt, tack.dot...: they run only inside kernels.
"""
from ._builtins import GLSL, MATH, MATRIX, SHADOWING
from . import _builtins

for _name in GLSL + MATH + MATRIX + SHADOWING:
    globals()[_name] = getattr(_builtins, _name)
del _name

__all__ = [n for n in GLSL + MATH + MATRIX if n not in SHADOWING]
