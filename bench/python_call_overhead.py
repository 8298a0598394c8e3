"""The Python call overhead of a cached kernel on a tiny array.

vector_add and saxpy of examples/kernels.py on 16-element f32 arrays, compiled (or loaded from the
disk cache) before timing: what remains is the Python call, the conversion of the arguments, the
core's per-call work and the launch. Each figure is the median over repeats of a timeit loop, in
microseconds per call; an empty Python call is timed the same way as a floor.

    python bench/python_call_overhead.py [--repeats 15] [--number 100000] [--json out.json]

The tack package must be importable (pip install ., or PYTHONPATH=<build>/python).
"""
import argparse
import json
import os
import platform
import statistics
import sys
import timeit

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))

import numpy as np  # noqa: E402

import tack  # noqa: E402
import kernels  # noqa: E402


def measure(stmt, env, number, repeats):
    timer = timeit.Timer(stmt, globals=env)
    timer.timeit(number=max(1, number // 10))  # warm-up
    runs = [timer.timeit(number=number) / number * 1e6 for _ in range(repeats)]
    return {"median_us": statistics.median(runs), "min_us": min(runs), "max_us": max(runs)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--number", type=int, default=100_000)
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()

    n = 16
    x = tack.asarray(np.linspace(-1, 1, n, dtype=np.float32))
    y = tack.asarray(np.linspace(2, 3, n, dtype=np.float32))
    out = tack.zeros((n,))
    x_np, y_np, out_np = x.numpy(), y.numpy(), np.zeros(n, np.float32)
    kernels.vector_add(x, y, out)  # the first calls compile or load: not timed
    kernels.saxpy(2.5, x, y, out)
    kernels.vector_add(x_np, y_np, out_np)
    np.testing.assert_array_equal(out_np, x_np + y_np)

    def nothing(a, b, c):
        return None

    env = dict(globals(), x=x, y=y, out=out, x_np=x_np, y_np=y_np, out_np=out_np,
               nothing=nothing)
    results = {
        "empty Python call, 3 arguments": measure("nothing(x, y, out)", env, args.number,
                                                  args.repeats),
        "vector_add(x, y, out), tack arrays": measure("kernels.vector_add(x, y, out)", env,
                                                      args.number, args.repeats),
        "saxpy(2.5, x, y, out), tack arrays": measure("kernels.saxpy(2.5, x, y, out)", env,
                                                      args.number, args.repeats),
        "vector_add(x, y, out), NumPy arrays (DLPack, no copy)": measure(
            "kernels.vector_add(x_np, y_np, out_np)", env, max(1, args.number // 10),
            args.repeats),
    }
    info = {
        "python": platform.python_version(),
        "tack": tack.__version__,
        "cpu": platform.processor() or platform.machine(),
        "elements": n,
        "repeats": args.repeats,
        "number": args.number,
        "results": results,
    }
    width = max(len(k) for k in results)
    print(f"Python call overhead, {n} elements, median of {args.repeats} repeats (us per call)")
    for name, r in results.items():
        print(f"  {name:<{width}}  {r['median_us']:7.3f}  (min {r['min_us']:.3f}, "
              f"max {r['max_us']:.3f})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(info, f, indent=2)


if __name__ == "__main__":
    main()
