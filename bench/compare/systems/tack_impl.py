"""Tack: the kernels of tack_kernels.py on tack arrays (the CPU backend)."""
import os

import numpy as np

NAME = "Tack"
NOTES = {
    "sum": "one thread per 16 Ki-element chunk, then one atomic add per chunk",
    "sum_reduce": "s += x[i] in the parallel loop: a scalar reduction in Tack's fixed order",
    "matmul_tiled": "one thread per tile, the tile accumulated in a tack.local_array",
    "sum_algorithms": "tack.algorithms.sum: the language's scalar reduction, fixed order",
    "histogram_private": "tack.algorithms.histogram(range=(0, 1)): private counts per chunk",
    "scan": "tack.algorithms.inclusive_scan: three passes over blocks of 4096",
    "argsort": "tack.algorithms.argsort: stable LSD radix sort, 8 bits a pass",
}

tack = None
k = None


def VERSION():
    return tack.__version__


def init(threads, cache_dir):
    global tack, k
    os.environ["TACK_CPU_THREADS"] = str(threads)
    os.environ["TACK_CACHE_DIR"] = os.path.join(cache_dir, "tack")
    import tack as t

    tack = t
    tack.set_default_device("cpu")
    from . import tack_kernels

    k = tack_kernels


def setup(name, d):
    A = tack.asarray
    if name == "saxpy":
        x, y = A(d["x"]), A(d["y"])
        out = tack.zeros(x.shape)
        a = d["a"]
        return (lambda: k.saxpy(a, x, y, out)), out.numpy
    if name == "triad":
        b, c = A(d["b"]), A(d["c"])
        a = tack.zeros(b.shape)
        q = d["q"]
        return (lambda: k.triad(q, b, c, a)), a.numpy
    if name == "stencil":
        u = A(d["u"])
        out = tack.zeros(u.shape)
        return (lambda: k.stencil5(u, out)), out.numpy
    if name == "mandelbrot":
        out = tack.zeros((d["h"], d["w"]), dtype=tack.i32)
        args = (d["x0"], d["y0"], d["dx"], d["dy"], d["max_iter"])
        return (lambda: k.mandelbrot(out, *args)), out.numpy
    if name == "nbody":
        pos, vel, mass = A(d["pos"]), A(d["vel"]), A(d["mass"])
        new_pos, new_vel = tack.zeros(pos.shape), tack.zeros(vel.shape)
        dt = d["dt"]
        return ((lambda: k.nbody_step(pos, vel, mass, new_pos, new_vel, dt)),
                lambda: {"new_pos": new_pos.numpy(), "new_vel": new_vel.numpy()})
    if name in ("matmul_naive", "matmul_tiled"):
        a, b = A(d["A"]), A(d["B"])
        c = tack.zeros((a.shape[0], b.shape[1]))
        kern = k.matmul_naive if name == "matmul_naive" else k.matmul_tiled
        return (lambda: kern(a, b, c)), c.numpy
    if name == "sum":
        x = A(d["x"])
        total = tack.zeros((1,))

        def run():
            total.fill(0.0)
            k.sum_chunks(x, total)

        return run, total.numpy
    if name == "sum_reduce":
        x = A(d["x"])
        res = [None]

        def run():
            res[0] = k.sum_reduce(x)

        return run, (lambda: np.array([res[0]]))
    if name == "sum_algorithms":
        x = A(d["x"])
        res = [None]

        def run():
            res[0] = tack.algorithms.sum(x)

        return run, (lambda: np.array([res[0]]))
    if name == "scan":
        x = A(d["x"])
        out = tack.empty_like(x)
        return (lambda: tack.algorithms.inclusive_scan(x, out)), out.numpy
    if name == "argsort":
        keys = A(d["keys"])
        res = [None]

        def run():
            res[0] = tack.algorithms.argsort(keys)

        return run, (lambda: res[0].numpy())
    if name == "histogram_private":
        v = A(d["values"])
        res = [None]
        bins = d["bins"]

        def run():
            res[0] = tack.algorithms.histogram(v, bins, range=(0.0, 1.0))[0]

        return run, (lambda: res[0].numpy())
    if name == "histogram":
        v = A(d["values"])
        counts = tack.zeros((d["bins"],), dtype=tack.i32)
        bins = d["bins"]

        def run():
            counts.fill(0)
            k.histogram(v, bins, counts)

        return run, counts.numpy
    if name == "life":
        g = A(d["grid"])
        out = tack.zeros(g.shape, dtype=tack.u8)
        return (lambda: k.life(g, out)), out.numpy
    raise KeyError(name)


def sync():
    tack.sync()
