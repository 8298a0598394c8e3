"""Hand-written C++ with OpenMP (bench/compare/cpp/workloads.cpp), built ahead of time into a
shared library and called through ctypes on NumPy arrays."""
import ctypes
import os

import numpy as np

from . import Unsupported

NAME = "C++"
NOTES = {
    "all": "OpenMP, -O3 -march=native -fopenmp -ffp-contract=off (GCC), called through ctypes",
    "sum": "omp parallel for simd reduction (vectorized partial sums)",
    "sum_reduce": "the same code as sum",
    "histogram": "omp atomic",
}

lib = None
LIB_PATH = os.environ.get("TACK_COMPARE_CPP_LIB", "")


def VERSION():
    return os.environ.get("TACK_COMPARE_CXX_VERSION", "")


def init(threads, cache_dir):
    global lib
    os.environ["OMP_NUM_THREADS"] = str(threads)
    lib = ctypes.CDLL(LIB_PATH)
    i64, f32, i32 = ctypes.c_int64, ctypes.c_float, ctypes.c_int32
    lib.cmp_sum.restype = f32
    for name, args in {
        "cmp_saxpy": [f32, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, i64],
        "cmp_triad": [f32, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, i64],
        "cmp_stencil": [ctypes.c_void_p, ctypes.c_void_p, i64, i64],
        "cmp_mandelbrot": [ctypes.c_void_p, i64, i64, f32, f32, f32, f32, i32],
        "cmp_nbody": [ctypes.c_void_p] * 5 + [f32, i64],
        "cmp_matmul_naive": [ctypes.c_void_p] * 3 + [i64] * 3,
        "cmp_matmul_tiled": [ctypes.c_void_p] * 3 + [i64] * 3,
        "cmp_sum": [ctypes.c_void_p, i64],
        "cmp_histogram": [ctypes.c_void_p, i64, i32, ctypes.c_void_p],
        "cmp_life": [ctypes.c_void_p, ctypes.c_void_p, i64, i64],
    }.items():
        getattr(lib, name).argtypes = args


def p(a):
    return a.ctypes.data


def setup(name, d):
    if name == "saxpy":
        x, y = d["x"], d["y"]
        out = np.zeros_like(x)
        a, n = d["a"], x.shape[0]
        return (lambda: lib.cmp_saxpy(a, p(x), p(y), p(out), n)), (lambda: out)
    if name == "triad":
        b, c = d["b"], d["c"]
        a = np.zeros_like(b)
        q, n = d["q"], b.shape[0]
        return (lambda: lib.cmp_triad(q, p(b), p(c), p(a), n)), (lambda: a)
    if name == "stencil":
        u = d["u"]
        out = np.zeros_like(u)
        h, w = u.shape
        return (lambda: lib.cmp_stencil(p(u), p(out), h, w)), (lambda: out)
    if name == "mandelbrot":
        out = np.zeros((d["h"], d["w"]), np.int32)
        args = (d["h"], d["w"], d["x0"], d["y0"], d["dx"], d["dy"], d["max_iter"])
        return (lambda: lib.cmp_mandelbrot(p(out), *args)), (lambda: out)
    if name == "nbody":
        pos, vel, mass = d["pos"], d["vel"], d["mass"]
        new_pos, new_vel = np.zeros_like(pos), np.zeros_like(vel)
        dt, n = d["dt"], pos.shape[0]
        return ((lambda: lib.cmp_nbody(p(pos), p(vel), p(mass), p(new_pos), p(new_vel), dt, n)),
                lambda: {"new_pos": new_pos, "new_vel": new_vel})
    if name in ("matmul_naive", "matmul_tiled"):
        a, b = d["A"], d["B"]
        c = np.zeros((a.shape[0], b.shape[1]), np.float32)
        f = getattr(lib, "cmp_" + name)
        dims = (a.shape[0], b.shape[1], a.shape[1])
        return (lambda: f(p(a), p(b), p(c), *dims)), (lambda: c)
    if name in ("sum", "sum_reduce", "sum_algorithms"):
        x = d["x"]
        res = [0.0]

        def run():
            res[0] = lib.cmp_sum(p(x), x.shape[0])

        return run, (lambda: np.array([res[0]]))
    if name in ("histogram", "histogram_private"):
        v = d["values"]
        counts = np.zeros(d["bins"], np.int32)
        bins = d["bins"]
        return (lambda: lib.cmp_histogram(p(v), v.shape[0], bins, p(counts))), (lambda: counts)
    if name == "life":
        g = d["grid"]
        out = np.zeros_like(g)
        h, w = g.shape
        return (lambda: lib.cmp_life(p(g), p(out), h, w)), (lambda: out)
    if name in ("scan", "argsort"):
        raise Unsupported(f"no {name} written for {NAME} (issue 16 compares Tack with NumPy and Numba)")
    raise KeyError(name)


def sync():
    pass
