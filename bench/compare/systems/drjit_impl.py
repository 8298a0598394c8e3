"""Dr.Jit's LLVM backend (drjit.llvm): whole-array programs, traced at each call and compiled to
one kernel per dr.eval (kernels cached in memory and in ~/.drjit). 2-D arrays are flat, indexed
with gathers; loops inside a thread are symbolic loops (@dr.syntax while)."""
from . import Unsupported

NAME = "Dr.Jit"
NOTES = {
    "all": "each call traces the Python function again and looks the kernel up by its hash",
    "matmul_tiled": None,
    "sum": "dr.sum",
    "sum_reduce": "the same code as sum",
    "histogram": "dr.scatter_reduce(ReduceOp.Add) (an atomic scatter-add)",
    "stencil": "gathers of the four neighbours over the whole grid, dr.select for the border",
    "life": "gathers of the eight neighbours over the whole grid, dr.select for the border",
}

dr = None
L = None
SOFTENING2 = 1e-4


def VERSION():
    return dr.__version__


def init(threads, cache_dir):
    global dr, L
    import drjit
    import drjit.llvm

    dr, L = drjit, drjit.llvm
    dr.set_thread_count(threads)
    # The loops inside a thread are written as Python while loops, which @dr.syntax turns into
    # symbolic loops (one kernel); applied here because drjit is imported in init().
    global _mandel_loop, _nbody_loop, _matmul_loop
    _mandel_loop = dr.syntax(_mandel_loop)
    _nbody_loop = dr.syntax(_nbody_loop)
    _matmul_loop = dr.syntax(_matmul_loop)


def setup(name, d):
    Float, Int, UInt = L.Float, L.Int, L.UInt
    if name == "saxpy":
        x, y = Float(d["x"]), Float(d["y"])
        a = d["a"]
        res = [None]

        def run():
            res[0] = a * x + y
            dr.eval(res[0])
            dr.sync_thread()

        return run, lambda: res[0].numpy()
    if name == "triad":
        b, c = Float(d["b"]), Float(d["c"])
        q = d["q"]
        res = [None]

        def run():
            res[0] = b + q * c
            dr.eval(res[0])
            dr.sync_thread()

        return run, lambda: res[0].numpy()
    if name == "stencil":
        h, w = d["u"].shape
        u = Float(d["u"].reshape(-1))
        res = [None]

        def run():
            idx = dr.arange(UInt, h * w)
            i, j = idx // w, idx % w
            inner = (i > 0) & (i < h - 1) & (j > 0) & (j < w - 1)
            g = lambda k: dr.gather(Float, u, k, inner)
            v = 0.25 * (g(idx - w) + g(idx + w) + g(idx - 1) + g(idx + 1))
            res[0] = dr.select(inner, v, 0.0)
            dr.eval(res[0])
            dr.sync_thread()

        return run, lambda: res[0].numpy().reshape(h, w)
    if name == "mandelbrot":
        h, w = d["h"], d["w"]
        x0, y0, dx, dy, max_iter = d["x0"], d["y0"], d["dx"], d["dy"], d["max_iter"]
        res = [None]

        def run():
            res[0] = _mandel(h, w, x0, y0, dx, dy, max_iter)
            dr.eval(res[0])
            dr.sync_thread()

        return run, lambda: res[0].numpy().reshape(h, w)
    if name == "nbody":
        n = d["pos"].shape[0]
        pos, vel = L.Array3f(d["pos"].T), L.Array3f(d["vel"].T)
        mass, dt = Float(d["mass"]), d["dt"]
        res = [None]

        def run():
            res[0] = _nbody(pos, vel, mass, dt, n)
            dr.eval(res[0])
            dr.sync_thread()

        return run, lambda: {"new_pos": res[0][0].numpy().T.copy(), "new_vel": res[0][1].numpy().T.copy()}
    if name == "matmul_naive":
        n, m = d["A"].shape[0], d["B"].shape[1]
        kdim = d["A"].shape[1]
        A, B = Float(d["A"].reshape(-1)), Float(d["B"].reshape(-1))
        res = [None]

        def run():
            res[0] = _matmul(A, B, n, m, kdim)
            dr.eval(res[0])
            dr.sync_thread()

        return run, lambda: res[0].numpy().reshape(n, m)
    if name == "matmul_tiled":
        raise Unsupported("no tiled version written: Dr.Jit programs are whole-array operations "
                          "with no tile or shared-memory construct on the CPU (dr.alloc_local, "
                          "per-thread scratch, was not tried)")
    if name in ("sum", "sum_reduce", "sum_algorithms"):
        x = Float(d["x"])
        res = [None]

        def run():
            res[0] = dr.sum(x)
            dr.eval(res[0])
            dr.sync_thread()

        return run, lambda: res[0].numpy()
    if name in ("histogram", "histogram_private"):
        v = Float(d["values"])
        bins = d["bins"]
        res = [None]

        def run():
            counts = dr.zeros(Int, bins)
            b = Int(v * bins)
            dr.scatter_reduce(dr.ReduceOp.Add, counts, Int(1), UInt(b), (b >= 0) & (b < bins))
            dr.eval(counts)
            dr.sync_thread()
            res[0] = counts

        return run, lambda: res[0].numpy()
    if name == "life":
        h, w = d["grid"].shape
        g = L.UInt8(d["grid"].reshape(-1))
        res = [None]

        def run():
            idx = dr.arange(Int, h * w)
            i, j = idx // w, idx % w
            inner = (i > 0) & (i < h - 1) & (j > 0) & (j < w - 1)
            n = dr.zeros(Int, h * w)
            for di in (-1, 0, 1):
                for dj in (-1, 0, 1):
                    if di or dj:
                        n += Int(dr.gather(L.UInt8, g, UInt(idx + (di * w + dj)), inner))
            me = Int(dr.gather(L.UInt8, g, UInt(idx), inner))
            alive = (n == 3) | ((n == 2) & (me == 1))
            res[0] = L.UInt8(dr.select(inner & alive, 1, 0))
            dr.eval(res[0])
            dr.sync_thread()

        return run, lambda: res[0].numpy().reshape(h, w)
    if name in ("scan", "argsort"):
        raise Unsupported(f"no {name} written for {NAME} (issue 16 compares Tack with NumPy and Numba)")
    raise KeyError(name)


def _mandel(h, w, x0, y0, dx, dy, max_iter):
    Float, Int, UInt = L.Float, L.Int, L.UInt
    idx = dr.arange(UInt, h * w)
    cr = x0 + Float(idx % w) * dx
    ci = y0 + Float(idx // w) * dy
    return _mandel_loop(cr, ci, max_iter)


def _mandel_loop(cr, ci, max_iter):
    zr = dr.zeros(L.Float, dr.width(cr))
    zi = dr.zeros(L.Float, dr.width(cr))
    n = dr.zeros(L.Int, dr.width(cr))
    while (n < max_iter) & (zr * zr + zi * zi <= 4.0):
        t = zr * zr - zi * zi + cr
        zi = 2.0 * zr * zi + ci
        zr = t
        n += 1
    return n


def _nbody_loop(pos, mass, n):
    acc = dr.zeros(L.Array3f, n)
    j = dr.zeros(L.UInt, n)
    while j < n:
        diff = dr.gather(L.Array3f, pos, j) - pos
        r2 = dr.squared_norm(diff) + SOFTENING2
        acc += diff * (dr.gather(L.Float, mass, j) / (r2 * dr.sqrt(r2)))
        j += 1
    return acc


def _nbody(pos, vel, mass, dt, n):
    v = vel + _nbody_loop(pos, mass, n) * dt
    return pos + v * dt, v


def _matmul_loop(A, B, i, j, kdim, m):
    s = dr.zeros(L.Float, dr.width(i))
    k = dr.zeros(L.UInt, dr.width(i))
    while k < kdim:
        s += dr.gather(L.Float, A, i * kdim + k) * dr.gather(L.Float, B, k * m + j)
        k += 1
    return s


def _matmul(A, B, n, m, kdim):
    idx = dr.arange(L.UInt, n * m)
    return _matmul_loop(A, B, idx // m, idx % m, kdim, m)


def sync():
    dr.sync_thread()

