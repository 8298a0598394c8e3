"""Python's first calls in new processes: `import tack`, and the first call of a kernel with an empty
and with a filled disk cache.

Each run starts new Python processes on a fresh, empty TACK_CACHE_DIR. A child imports NumPy (as a
user's program would have), then times `import tack`, imports examples/kernels.py and times the
first call of one kernel (saxpy on 16 floats, results checked): the first child compiles it, the
second finds it in the disk cache. Reports the median of the runs, in milliseconds.

    python bench/python_first_call.py [--runs 9] [--python PYTHON] [--json out.json]

--python runs the children with another interpreter (another build's environment), so that two
builds can be measured in alternation on one machine.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples")

CHILD = r"""
import sys, time
import numpy as np
t0 = time.perf_counter()
import tack
t1 = time.perf_counter()
sys.path.insert(0, sys.argv[1])
import kernels
x = tack.asarray(np.arange(16, dtype=np.float32))
y = tack.asarray(np.ones(16, dtype=np.float32))
out = tack.empty_like(x)
t2 = time.perf_counter()
kernels.saxpy(2.0, x, y, out)
tack.sync()
t3 = time.perf_counter()
assert out.numpy().tolist() == [2.0 * i + 1.0 for i in range(16)]
s = tack.cache_stats()
print((t1 - t0) * 1e3, (t3 - t2) * 1e3, s.compiles, s.disk_hits)
"""


def child(python, cache):
    env = dict(os.environ, TACK_CACHE_DIR=cache)
    env.pop("TACK_CACHE", None)
    run = subprocess.run([python, "-c", CHILD, EXAMPLES], env=env, capture_output=True, text=True,
                         timeout=300, check=True)
    import_ms, call_ms, compiles, hits = run.stdout.split()
    return float(import_ms), float(call_ms), int(compiles), int(hits)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = {"import_ms": [], "cold_ms": [], "warm_ms": []}
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="tack-python-first-call-") as cache:
            imp, cold, compiles, _ = child(args.python, cache)
            assert compiles == 1, "the first process did not compile"
            imp2, warm, compiles, hits = child(args.python, cache)
            assert compiles == 0 and hits == 1, "the second process did not load from the cache"
        rows["import_ms"] += [imp, imp2]
        rows["cold_ms"].append(cold)
        rows["warm_ms"].append(warm)
    medians = {k: statistics.median(v) for k, v in rows.items()}
    print(f"Python first calls, saxpy on 16 floats, median of {args.runs} runs (new processes)")
    print(f"  import tack (NumPy imported before)      {medians['import_ms']:8.3f} ms")
    print(f"  first call, empty cache (compiles)       {medians['cold_ms']:8.3f} ms")
    print(f"  first call, disk cache filled            {medians['warm_ms']:8.3f} ms")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"runs": args.runs, "medians": medians, "all": rows}, f, indent=1)


if __name__ == "__main__":
    main()
