"""NumPy: the library calls a NumPy user would write, for the workloads that have one (the sums,
the scan, the argsort, the histogram); the others are not NumPy library calls and are left out."""
import numpy as np

from . import Unsupported

NAME = "NumPy"
NOTES = {
    "sum": "np.sum (pairwise, one thread)",
    "scan": "np.cumsum (sequential)",
    "argsort": "np.argsort(kind='stable') (radix sort for small integers, else timsort)",
    "histogram": "np.histogram(range=(0, 1))",
}


def VERSION():
    return np.__version__


def init(threads, cache_dir):
    pass


def setup(name, d):
    res = [None]
    if name in ("sum", "sum_reduce", "sum_algorithms"):
        x = d["x"]

        def run():
            res[0] = np.sum(x)

        return run, (lambda: np.array([res[0]]))
    if name == "scan":
        x = d["x"]
        out = np.empty_like(x)
        return (lambda: np.cumsum(x, out=out)), (lambda: out)
    if name == "argsort":
        keys = d["keys"]

        def run():
            res[0] = np.argsort(keys, kind="stable")

        return run, (lambda: res[0])
    if name in ("histogram", "histogram_private"):
        v, bins = d["values"], d["bins"]

        def run():
            res[0] = np.histogram(v, bins, range=(0.0, 1.0))[0]

        return run, (lambda: res[0])
    raise Unsupported(f"{name} is not a NumPy library call")


def sync():
    pass
