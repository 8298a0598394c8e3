"""Taichi on its CPU backend (arch=ti.cpu, default options: fast_math on), kernels taking
ti.ndarray arguments, the offline cache on disk."""
import os

import numpy as np

from . import Unsupported

NAME = "Taichi"
NOTES = {
    "matmul_tiled": "one thread per tile, accumulating into C (no per-thread scratch arrays: local "
                    "matrices of 32 x 32 unroll)",
    "sum": "atomic add into a 1-element ndarray (Taichi turns it into a thread-local reduction)",
    "sum_reduce": "the same code as sum",
    "all": "fast_math is on by default in Taichi (FMA contraction, approximate division); kept",
}

ti = None
K = {}


def VERSION():
    return ti.__version__ if isinstance(ti.__version__, str) else ".".join(map(str, ti.__version__))


def init(threads, cache_dir):
    global ti
    import taichi

    ti = taichi
    ti.init(arch=ti.cpu, cpu_max_num_threads=threads, offline_cache=True,
            offline_cache_file_path=os.path.join(cache_dir, "taichi"), log_level=ti.WARN)
    from . import taichi_kernels

    K.update(vars(taichi_kernels))


def nd(a):
    dt = {np.float32: ti.f32, np.int32: ti.i32, np.uint8: ti.u8}[a.dtype.type]
    t = ti.ndarray(dt, a.shape)
    t.from_numpy(a)
    return t


def zeros(shape, np_dtype):
    return nd(np.zeros(shape, np_dtype))


def setup(name, d):
    if name == "saxpy":
        x, y = nd(d["x"]), nd(d["y"])
        out = zeros(d["x"].shape, np.float32)
        a = d["a"]
        return (lambda: K["saxpy"](a, x, y, out)), out.to_numpy
    if name == "triad":
        b, c = nd(d["b"]), nd(d["c"])
        a = zeros(d["b"].shape, np.float32)
        q = d["q"]
        return (lambda: K["triad"](q, b, c, a)), a.to_numpy
    if name == "stencil":
        u = nd(d["u"])
        out = zeros(d["u"].shape, np.float32)
        return (lambda: K["stencil5"](u, out)), out.to_numpy
    if name == "mandelbrot":
        out = zeros((d["h"], d["w"]), np.int32)
        args = (d["x0"], d["y0"], d["dx"], d["dy"], d["max_iter"])
        return (lambda: K["mandelbrot"](out, *args)), out.to_numpy
    if name == "nbody":
        pos, vel, mass = nd(d["pos"]), nd(d["vel"]), nd(d["mass"])
        new_pos, new_vel = zeros(d["pos"].shape, np.float32), zeros(d["vel"].shape, np.float32)
        dt = d["dt"]
        return ((lambda: K["nbody_step"](pos, vel, mass, new_pos, new_vel, dt)),
                lambda: {"new_pos": new_pos.to_numpy(), "new_vel": new_vel.to_numpy()})
    if name in ("matmul_naive", "matmul_tiled"):
        a, b = nd(d["A"]), nd(d["B"])
        c = zeros((d["A"].shape[0], d["B"].shape[1]), np.float32)
        kern = K[name]
        return (lambda: kern(a, b, c)), c.to_numpy
    if name in ("sum", "sum_reduce", "sum_algorithms"):
        x = nd(d["x"])
        total = zeros((1,), np.float32)
        return (lambda: K["sum_all"](x, total)), total.to_numpy
    if name in ("histogram", "histogram_private"):
        v = nd(d["values"])
        counts = zeros((d["bins"],), np.int32)
        bins = d["bins"]
        return (lambda: K["histogram"](v, bins, counts)), counts.to_numpy
    if name == "life":
        g = nd(d["grid"])
        out = zeros(d["grid"].shape, np.uint8)
        return (lambda: K["life"](g, out)), out.to_numpy
    if name in ("scan", "argsort"):
        raise Unsupported(f"no {name} written for {NAME} (issue 16 compares Tack with NumPy and Numba)")
    raise KeyError(name)


def sync():
    ti.sync()
