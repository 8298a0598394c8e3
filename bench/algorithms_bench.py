"""tack.algorithms on each device against the CPU, and against CuPy (CUB) on CUDA where installed.

The f32 sum, inclusive scan, stable argsort and 256-bin histogram over [0, 1) of 2^24 values (the
sizes of bench/compare), each result checked against NumPy's. Each figure is the median of
--repeats calls after one warm-up call (which compiles or loads the kernels), in milliseconds,
with the device synchronized after each call. Ratios are the CPU's time over the device's (above
1: the device is faster).

    python bench/algorithms_bench.py [--devices cpu,opencl] [--n 16777216] [--repeats 9]
        [--json out.json]

The tack package must be importable (pip install ., or PYTHONPATH=<build>/python).
"""
import argparse
import json
import platform
import statistics
import time

import numpy as np

import tack
import tack.algorithms as al

BINS = 256


def timed(fn, sync, repeats):
    fn()
    sync()
    runs = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        sync()
        runs.append((time.perf_counter() - t) * 1e3)
    return statistics.median(runs)


def tack_cases(values, keys, device):
    x = tack.asarray(values, device=device)
    k = tack.asarray(keys, device=device)
    scanned = tack.empty(x.shape, dtype=tack.f32, device=device)
    return {
        "sum": (lambda: al.sum(x), lambda r: np.isclose(float(r), values.sum(dtype=np.float64),
                                                        rtol=1e-5)),
        "inclusive_scan": (lambda: (al.inclusive_scan(x, scanned), scanned)[1],
                           lambda r: np.allclose(r.numpy()[-1], np.cumsum(values, dtype=np.float64)[-1],
                                                 rtol=1e-4)),
        "argsort": (lambda: al.argsort(k),
                    lambda r: np.array_equal(r.numpy(), np.argsort(keys, kind="stable"))),
        "histogram": (lambda: al.histogram(x, BINS, range=(0.0, 1.0))[0],
                      lambda r: np.array_equal(r.numpy(),
                                               np.histogram(values, BINS, range=(0.0, 1.0))[0])),
    }


def cupy_cases(values, keys):
    import cupy as cp

    x, k = cp.asarray(values), cp.asarray(keys)
    return cp, {
        "sum": lambda: cp.sum(x),
        "inclusive_scan": lambda: cp.cumsum(x),
        "argsort": lambda: cp.argsort(k, kind="stable"),
        "histogram": lambda: cp.histogram(x, BINS, range=(0.0, 1.0))[0],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", default="cpu,opencl")
    parser.add_argument("--n", type=int, default=1 << 24)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()

    rng = np.random.default_rng(7)
    values = rng.random(args.n, np.float32)
    keys = rng.random(args.n, np.float32)
    available = {name for name, ok, _ in tack.backend_status() if ok}
    results = {"n": args.n, "machine": platform.processor() or platform.machine(), "ms": {}}
    for name in ["cpu"] + [d for d in args.devices.split(",") if d != "cpu"]:
        if name not in available:
            print(f"{name}: not available here, skipped")
            continue
        device = tack.device(name)
        results["ms"][name] = {}
        for case, (fn, check) in tack_cases(values, keys, device).items():
            ok = check(fn())
            ms = timed(fn, tack.sync, args.repeats)
            results["ms"][name][case] = ms
            print(f"{name:8} {case:15} {ms:9.2f} ms{'' if ok else '  WRONG RESULT'}")
            if not ok:
                raise SystemExit(f"{name} {case}: the result differs from NumPy's")
    if "cuda" in results["ms"]:
        try:
            cp, cases = cupy_cases(values, keys)
        except ImportError:
            print("cupy: not installed, skipped")
        else:
            sync = cp.cuda.Device().synchronize
            results["ms"]["cupy"] = {c: timed(fn, sync, args.repeats) for c, fn in cases.items()}
            for case, ms in results["ms"]["cupy"].items():
                print(f"{'cupy':8} {case:15} {ms:9.2f} ms")
    cpu = results["ms"].get("cpu", {})
    for name, cases in results["ms"].items():
        if name == "cpu":
            continue
        ratios = ", ".join(f"{c} {cpu[c] / ms:.2f}x" for c, ms in cases.items() if c in cpu)
        print(f"cpu time / {name} time: {ratios}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
