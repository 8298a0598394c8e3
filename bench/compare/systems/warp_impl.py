"""NVIDIA Warp on its CPU device (wp.array on "cpu", wp.launch), kernels cached on disk.

Warp runs a CPU launch on the calling thread only (NVIDIA/warp#1309: "executed in a
single-threaded sequential loop"), so it uses one thread where the others use two."""
import os

from . import Unsupported

NAME = "Warp"
NOTES = {
    "all": "CPU launches run on one thread (Warp has no multithreaded CPU launch)",
    "matmul_tiled": "Warp's tile API (wp.tile_load, wp.tile_matmul) with wp.launch_tiled",
    "sum": "wp.utils.array_sum",
    "sum_reduce": "the same code as sum",
}

wp = None
K = {}


def VERSION():
    return wp.config.version


def init(threads, cache_dir):
    global wp
    import warp

    wp = warp
    wp.config.quiet = True
    wp.config.kernel_cache_dir = os.path.join(cache_dir, "warp")
    wp.init()
    from . import warp_kernels

    K.update(vars(warp_kernels))


def arr(a):
    return wp.array(a, device="cpu")


def zeros(shape, dtype):
    return wp.zeros(shape, dtype=dtype, device="cpu")


def launch(kernel, dim, *args):
    wp.launch(kernel, dim=dim, inputs=list(args), device="cpu")


def setup(name, d):
    f32 = wp.float32
    if name == "saxpy":
        x, y = arr(d["x"]), arr(d["y"])
        out = zeros(x.shape, f32)
        a = d["a"]
        return (lambda: launch(K["saxpy"], x.shape[0], a, x, y, out)), out.numpy
    if name == "triad":
        b, c = arr(d["b"]), arr(d["c"])
        a = zeros(b.shape, f32)
        q = d["q"]
        return (lambda: launch(K["triad"], b.shape[0], q, b, c, a)), a.numpy
    if name == "stencil":
        u = arr(d["u"])
        out = zeros(u.shape, f32)
        h, w = u.shape
        return (lambda: launch(K["stencil5"], (h - 2, w - 2), u, out)), out.numpy
    if name == "mandelbrot":
        out = zeros((d["h"], d["w"]), wp.int32)
        args = (out, d["x0"], d["y0"], d["dx"], d["dy"], d["max_iter"])
        return (lambda: launch(K["mandelbrot"], out.shape, *args)), out.numpy
    if name == "nbody":
        pos = wp.array(d["pos"], dtype=wp.vec3, device="cpu")
        vel = wp.array(d["vel"], dtype=wp.vec3, device="cpu")
        mass = arr(d["mass"])
        new_pos, new_vel = zeros(pos.shape, wp.vec3), zeros(vel.shape, wp.vec3)
        dt = d["dt"]
        return ((lambda: launch(K["nbody_step"], pos.shape[0], pos, vel, mass, new_pos, new_vel, dt)),
                lambda: {"new_pos": new_pos.numpy(), "new_vel": new_vel.numpy()})
    if name == "matmul_naive":
        a, b = arr(d["A"]), arr(d["B"])
        c = zeros((a.shape[0], b.shape[1]), f32)
        return (lambda: launch(K["matmul_naive"], c.shape, a, b, c)), c.numpy
    if name == "matmul_tiled":
        a, b = arr(d["A"]), arr(d["B"])
        c = zeros((a.shape[0], b.shape[1]), f32)
        t = K["TILE"]
        dim = (c.shape[0] // t, c.shape[1] // t)
        return ((lambda: wp.launch_tiled(K["matmul_tiled"], dim=dim, inputs=[a, b, c],
                                         block_dim=1, device="cpu")), c.numpy)
    if name in ("sum", "sum_reduce", "sum_algorithms"):
        x = arr(d["x"])
        total = zeros((1,), f32)
        return (lambda: wp.utils.array_sum(x, out=total)), total.numpy
    if name in ("histogram", "histogram_private"):
        v = arr(d["values"])
        counts = zeros((d["bins"],), wp.int32)
        bins = d["bins"]

        def run():
            counts.zero_()
            launch(K["histogram"], v.shape[0], v, bins, counts)

        return run, counts.numpy
    if name == "life":
        g = arr(d["grid"])
        out = zeros(g.shape, wp.uint8)
        h, w = g.shape
        return (lambda: launch(K["life"], (h - 2, w - 2), g, out)), out.numpy
    if name in ("scan", "argsort"):
        raise Unsupported(f"no {name} written for {NAME} (issue 16 compares Tack with NumPy and Numba)")
    raise KeyError(name)


def sync():
    wp.synchronize()
