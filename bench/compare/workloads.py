"""The workloads of the comparison: sizes, inputs, NumPy references and the check of a result.

Every system computes the same thing from the same inputs (made here, from fixed seeds). The driver
writes the inputs and references of each workload once to an .npz file; the workers read them, so
that a fresh process does not spend seconds recomputing a Mandelbrot set in NumPy.
"""
import numpy as np

# Sizes of the full run ("full"), of the quick mode ("quick": seconds, for development) and of the
# call-overhead measurement ("tiny": the work itself is a few nanoseconds).
SIZES = {
    "full": {
        "stream_n": 1 << 24,  # 16 Mi f32 = 64 MiB per array (the "64 MB")
        "grid": 4096,  # stencil and life: 4096 x 4096 (64 MiB of f32, 16 MiB of u8)
        "mandel": 1024,  # 1024 x 1024 pixels, MANDEL_ITER iterations at most
        "bodies": 4096,
        "matmul": 512,
        "reduce_n": 1 << 24,
        "hist_n": 1 << 24,
    },
    "quick": {
        "stream_n": 1 << 20,
        "grid": 512,
        "mandel": 256,
        "bodies": 512,
        "matmul": 128,
        "reduce_n": 1 << 20,
        "hist_n": 1 << 20,
    },
    "tiny": {
        "stream_n": 16,
        "grid": 8,
        "mandel": 4,
        "bodies": 16,
        "matmul": 32,
        "reduce_n": 16,
        "hist_n": 16,
    },
}

WORKLOADS = ["saxpy", "triad", "stencil", "mandelbrot", "nbody", "matmul_naive", "matmul_tiled",
             "sum", "sum_reduce", "sum_algorithms", "histogram", "histogram_private", "scan",
             "argsort", "life"]

DESCRIPTION = {
    "saxpy": "out = a*x + y, f32",
    "triad": "a = b + q*c, f32 (STREAM triad)",
    "stencil": "one 2-D 5-point Jacobi sweep, f32",
    "mandelbrot": "escape iterations (at most 256), i32",
    "nbody": "one all-pairs gravity step, f32",
    "matmul_naive": "C = A @ B, one dot product per element, f32",
    "matmul_tiled": "C = A @ B, 32 x 32 tiles (i-k-j order), f32",
    "sum": "sum of all elements, f32",
    "sum_reduce": "the same sum, written as a scalar reduction in the parallel loop (s += x[i])",
    "histogram": "256 bins, one atomic add per element, i32 counts",
    "sum_algorithms": "the same sum through the system's library (tack.algorithms.sum, np.sum...)",
    "histogram_private": "the same histogram through the system's library (tack.algorithms.histogram, "
                         "np.histogram) or private per-chunk counts",
    "scan": "inclusive prefix sum, f32 (np.cumsum)",
    "argsort": "stable argsort of f32 keys (np.argsort(kind='stable'))",
    "life": "one step of Conway's game of life, u8",
}

SAXPY_A = 2.5
TRIAD_Q = 3.0
MANDEL_ITER = 256
MANDEL_X0, MANDEL_Y0, MANDEL_SPAN = -2.0, -1.25, 2.5
NBODY_DT = 0.01
SOFTENING2 = 1e-4
TILE = 32
BINS = 256


def size_label(name, s):
    n, g = s["stream_n"], s["grid"]
    return {
        "saxpy": f"{n} f32 ({n * 4 >> 20} MiB per array)",
        "triad": f"{n} f32 ({n * 4 >> 20} MiB per array)",
        "stencil": f"{g} x {g} f32",
        "mandelbrot": f"{s['mandel']} x {s['mandel']}, {MANDEL_ITER} iterations",
        "nbody": f"{s['bodies']} bodies",
        "matmul_naive": f"{s['matmul']} x {s['matmul']}",
        "matmul_tiled": f"{s['matmul']} x {s['matmul']}",
        "sum": f"{s['reduce_n']} f32",
        "sum_reduce": f"{s['reduce_n']} f32",
        "sum_algorithms": f"{s['reduce_n']} f32",
        "histogram_private": f"{s['hist_n']} f32 values, {BINS} bins",
        "scan": f"{s['reduce_n']} f32",
        "argsort": f"{s['reduce_n']} f32 keys",
        "histogram": f"{s['hist_n']} f32 values, {BINS} bins",
        "life": f"{g} x {g} u8",
    }[name]


def inputs(name, s):
    """The inputs of a workload at sizes s: a dict of NumPy arrays and Python scalars."""
    rng = np.random.default_rng(1234)
    f32 = np.float32
    if name == "saxpy":
        n = s["stream_n"]
        return {"a": SAXPY_A, "x": rng.random(n, f32), "y": rng.random(n, f32)}
    if name == "triad":
        n = s["stream_n"]
        return {"q": TRIAD_Q, "b": rng.random(n, f32), "c": rng.random(n, f32)}
    if name == "stencil":
        g = s["grid"]
        return {"u": rng.random((g, g), f32)}
    if name == "mandelbrot":
        m = s["mandel"]
        return {"w": m, "h": m, "x0": MANDEL_X0, "y0": MANDEL_Y0, "dx": MANDEL_SPAN / m,
                "dy": MANDEL_SPAN / m, "max_iter": MANDEL_ITER}
    if name == "nbody":
        n = s["bodies"]
        return {"pos": rng.standard_normal((n, 3), f32), "vel": rng.standard_normal((n, 3), f32) * f32(0.1),
                "mass": rng.random(n, f32) / f32(n) + f32(1e-3), "dt": NBODY_DT}
    if name in ("matmul_naive", "matmul_tiled"):
        n = s["matmul"]
        return {"A": rng.random((n, n), f32) - f32(0.5), "B": rng.random((n, n), f32) - f32(0.5)}
    if name in ("sum", "sum_reduce", "sum_algorithms", "scan"):
        return {"x": rng.random(s["reduce_n"], f32) * f32(2) - f32(1)}
    if name == "argsort":
        return {"keys": rng.random(s["reduce_n"], f32)}
    if name in ("histogram", "histogram_private"):
        return {"values": rng.random(s["hist_n"], f32), "bins": BINS}
    if name == "life":
        g = s["grid"]
        return {"grid": (rng.random((g, g)) < 0.3).astype(np.uint8)}
    raise KeyError(name)


def reference(name, d):
    """The NumPy answer, computed independently of every system (f64 where rounding matters)."""
    if name == "saxpy":
        return np.float32(d["a"]) * d["x"] + d["y"]
    if name == "triad":
        return d["b"] + np.float32(d["q"]) * d["c"]
    if name == "stencil":
        u = d["u"]
        out = np.zeros_like(u)
        out[1:-1, 1:-1] = np.float32(0.25) * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
        return out
    if name == "mandelbrot":
        h, w = d["h"], d["w"]
        f = np.float32
        cr = (f(d["x0"]) + np.arange(w, dtype=f) * f(d["dx"]))[None, :].repeat(h, 0)
        ci = (f(d["y0"]) + np.arange(h, dtype=f) * f(d["dy"]))[:, None].repeat(w, 1)
        zr, zi = np.zeros_like(cr), np.zeros_like(cr)
        n = np.zeros((h, w), np.int32)
        live = np.ones((h, w), bool)
        for _ in range(d["max_iter"]):
            live &= zr * zr + zi * zi <= f(4)
            if not live.any():
                break
            t = zr * zr - zi * zi + cr
            zi = np.where(live, f(2) * zr * zi + ci, zi)
            zr = np.where(live, t, zr)
            n += live
        return n
    if name == "nbody":
        pos = d["pos"].astype(np.float64)
        vel, mass, dt = d["vel"].astype(np.float64), d["mass"].astype(np.float64), d["dt"]
        acc = np.zeros_like(pos)
        for lo in range(0, len(pos), 512):
            diff = pos[None, :, :] - pos[lo:lo + 512, None, :]
            r2 = (diff * diff).sum(-1) + SOFTENING2
            acc[lo:lo + 512] = (diff * (mass[None, :] / (r2 * np.sqrt(r2)))[:, :, None]).sum(1)
        new_vel = vel + acc * dt
        return {"new_pos": (pos + new_vel * dt).astype(np.float32),
                "new_vel": new_vel.astype(np.float32)}
    if name in ("matmul_naive", "matmul_tiled"):
        return (d["A"].astype(np.float64) @ d["B"].astype(np.float64)).astype(np.float32)
    if name in ("sum", "sum_reduce", "sum_algorithms"):
        return np.array(d["x"].astype(np.float64).sum())
    if name == "scan":
        return np.cumsum(d["x"].astype(np.float64))
    if name == "argsort":
        return np.argsort(d["keys"], kind="stable")
    if name in ("histogram", "histogram_private"):
        b = (d["values"] * np.float32(d["bins"])).astype(np.int64)
        return np.bincount(b[(b >= 0) & (b < d["bins"])], minlength=d["bins"]).astype(np.int32)
    if name == "life":
        g = d["grid"].astype(np.int32)
        nb = sum(np.roll(np.roll(g, di, 0), dj, 1)
                 for di in (-1, 0, 1) for dj in (-1, 0, 1) if (di, dj) != (0, 0))
        out = ((nb == 3) | ((nb == 2) & (g == 1))).astype(np.uint8)
        out[0, :] = out[-1, :] = 0
        out[:, 0] = out[:, -1] = 0
        return out
    raise KeyError(name)


def check(name, got, ref, d):
    """None when got matches the reference, else a one-line reason."""
    def close(g, r, tol):
        g = np.asarray(g)
        if g.shape != r.shape:
            return f"shape {g.shape}, expected {r.shape}"
        if not np.all(np.isfinite(g)):
            return "non-finite values"
        err = np.max(np.abs(g.astype(np.float64) - r)) / max(np.max(np.abs(r)), 1e-30)
        return None if err <= tol else f"max error {err:.2e} of the largest value (tolerance {tol})"

    if name in ("saxpy", "triad", "stencil"):
        return close(got, ref, 1e-6)
    if name in ("matmul_naive", "matmul_tiled"):
        return close(got, ref, 1e-4)
    if name == "nbody":
        return close(got["new_pos"], ref["new_pos"], 1e-4) or close(got["new_vel"], ref["new_vel"], 1e-3)
    if name == "scan":
        # f32 running sums of 2^24 values: a sequential one (np.cumsum's) drifts by about 1e-4 of
        # the largest partial sum.
        return close(got, ref, 1e-2)
    if name in ("sum", "sum_reduce", "sum_algorithms"):
        g = float(np.asarray(got).reshape(-1)[0])
        tol = 1e-6 * float(np.abs(d["x"]).astype(np.float64).sum())
        return None if abs(g - float(ref)) <= tol else f"{g} against {float(ref)} (tolerance {tol:.3g})"
    if name in ("histogram", "histogram_private", "life", "argsort"):
        g = np.asarray(got)
        if g.shape != ref.shape:
            return f"shape {g.shape}, expected {ref.shape}"
        bad = int(np.count_nonzero(g != ref))
        return None if bad == 0 else f"{bad} of {ref.size} elements differ"
    if name == "mandelbrot":
        g = np.asarray(got)
        if g.shape != ref.shape:
            return f"shape {g.shape}, expected {ref.shape}"
        # Points on the set's edge may escape one iteration earlier or later with other rounding
        # (FMA contraction, fast math): allow 1% of the pixels to differ.
        bad = int(np.count_nonzero(g != ref))
        return None if bad <= ref.size // 100 else f"{bad} of {ref.size} pixels differ (> 1%)"
    raise KeyError(name)
