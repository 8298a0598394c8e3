"""The example of the user's document and docs/api: vector_add from Python, on the CPU.

    pip install .        # from the repository root (see README.md, "Python")
    python examples/vector_add.py

Prints True (the CPU backend has f64) and the sums 1 ... 1024.
"""
import numpy as np
import tack

tack.set_default_device("cpu")           # or "cuda", "hip", "level_zero", "metal", "opencl"

from tack.runtime.dispatch import get_backend  # noqa: E402

print(get_backend().supports_f64)


@tack.kernel
def vector_add(x, y, out):
    for i in range(x.shape[0]):
        out[i] = x[i] + y[i]


x = tack.empty((1024,))                   # f32 unless a dtype is given
y = tack.zeros((1024,), dtype=tack.f32)
out = tack.empty_like(x)
tack.copyto(x, np.arange(1024, dtype=np.float32))
tack.copyto(y, np.ones(1024, dtype=np.float32))
vector_add(x, y, out)                     # compiled at the first call, then cached in memory and on disk
print(out.numpy())
