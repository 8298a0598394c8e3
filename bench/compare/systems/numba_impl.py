"""Numba: @njit(parallel=True) with prange, on NumPy arrays, compiled functions cached on disk
(cache=True, in NUMBA_CACHE_DIR)."""
import os

import numpy as np

NAME = "Numba"
NOTES = {
    "histogram": "no atomics on the CPU: one private histogram per chunk of the input, then summed",
    "matmul_tiled": "one prange iteration per tile row, the tile accumulated in a local array",
    "scan": "np.cumsum in an @njit function (sequential)",
    "argsort": "np.argsort(kind='mergesort') in an @njit function (sequential)",
}

numba = None
K = {}


def VERSION():
    return numba.__version__


def init(threads, cache_dir):
    global numba
    os.environ["NUMBA_NUM_THREADS"] = str(threads)
    os.environ["NUMBA_CACHE_DIR"] = os.path.join(cache_dir, "numba")
    import numba as nb

    numba = nb
    numba.set_num_threads(threads)
    from . import numba_kernels

    K.update(vars(numba_kernels))


def setup(name, d):
    if name == "saxpy":
        x, y = d["x"], d["y"]
        out = np.zeros_like(x)
        a = np.float32(d["a"])
        return (lambda: K["saxpy"](a, x, y, out)), (lambda: out)
    if name == "triad":
        b, c = d["b"], d["c"]
        a = np.zeros_like(b)
        q = np.float32(d["q"])
        return (lambda: K["triad"](q, b, c, a)), (lambda: a)
    if name == "stencil":
        u = d["u"]
        out = np.zeros_like(u)
        return (lambda: K["stencil5"](u, out)), (lambda: out)
    if name == "mandelbrot":
        out = np.zeros((d["h"], d["w"]), np.int32)
        f = np.float32
        args = (f(d["x0"]), f(d["y0"]), f(d["dx"]), f(d["dy"]), d["max_iter"])
        return (lambda: K["mandelbrot"](out, *args)), (lambda: out)
    if name == "nbody":
        pos, vel, mass = d["pos"], d["vel"], d["mass"]
        new_pos, new_vel = np.zeros_like(pos), np.zeros_like(vel)
        dt = np.float32(d["dt"])
        return ((lambda: K["nbody_step"](pos, vel, mass, new_pos, new_vel, dt)),
                lambda: {"new_pos": new_pos, "new_vel": new_vel})
    if name in ("matmul_naive", "matmul_tiled"):
        a, b = d["A"], d["B"]
        c = np.zeros((a.shape[0], b.shape[1]), np.float32)
        kern = K[name]
        return (lambda: kern(a, b, c)), (lambda: c)
    if name in ("sum", "sum_reduce", "sum_algorithms"):
        x = d["x"]
        res = [None]

        def run():
            res[0] = K["sum_all"](x)

        return run, (lambda: np.array([res[0]]))
    if name == "scan":
        x = d["x"]
        out = np.zeros_like(x)
        return (lambda: K["scan"](x, out)), (lambda: out)
    if name == "argsort":
        keys = d["keys"]
        res = [None]

        def run():
            res[0] = K["argsort_stable"](keys)

        return run, (lambda: res[0])
    if name in ("histogram", "histogram_private"):
        v = d["values"]
        counts = np.zeros(d["bins"], np.int32)
        bins = d["bins"]
        return (lambda: K["histogram"](v, bins, counts)), (lambda: counts)
    if name == "life":
        g = d["grid"]
        out = np.zeros_like(g)
        return (lambda: K["life"](g, out)), (lambda: out)
    raise KeyError(name)


def sync():
    pass
