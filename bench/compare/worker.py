"""Runs the workloads of one system in this process and writes what it measured as JSON.

    worker.py --system tack --mode steady --data DIR --workloads saxpy,stencil --json OUT
    worker.py --system tack --mode first  --data DIR --workloads saxpy --json OUT
    worker.py --system tack --mode tiny   --workloads saxpy,stencil --json OUT

steady: per workload, a first call (compiles), the check against the NumPy reference, one more
        warm-up call, then repeated timed calls (their median is the steady-state time).
first:  the time of the first call of one workload in this (fresh) process, on the tiny inputs
        (so that the time is what the system does at a first call, not the work: trace, compile or
        load from its disk cache, link, launch, synchronize); with --then, also the first call of a
        second workload after it, in the same process.
        The import and start of the system are timed apart ("init"), and the inputs are on the
        system's side before the clock starts. The driver runs it on an empty and then a filled
        cache directory.
tiny:   the time per call on inputs of a few elements (workloads.SIZES["tiny"]), after a checked
        warm-up call: the call overhead.

The driver starts one worker per system and mode, so that no two threading runtimes share a
process. The JSON is rewritten after each workload: what was measured before a crash survives.
"""
import argparse
import importlib
import json
import os
import statistics
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

import workloads as W  # noqa: E402
from systems import Unsupported  # noqa: E402


def load(data_dir, name):
    """Inputs and reference of a workload, as written by the driver (compare.py)."""
    z = np.load(os.path.join(data_dir, name + ".npz"))
    d, ref = {}, {}
    for key in z.files:
        kind, k = key.split("__", 1)
        v = z[key]
        v = v.item() if v.ndim == 0 and kind == "in" else v
        (d if kind == "in" else ref)[k] = v
    return d, (ref["value"] if "value" in ref else ref)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--system", required=True)
    ap.add_argument("--mode", choices=["steady", "first", "tiny"], required=True)
    ap.add_argument("--workloads", required=True)
    ap.add_argument("--data", help="the directory of the .npz inputs (steady)")
    ap.add_argument("--cache", required=True, help="the system's cache directory")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=15, help="steady: the most timed calls")
    ap.add_argument("--budget", type=float, default=2.0, help="steady: seconds per workload")
    ap.add_argument("--then", help="first: afterwards, time the first call of this workload too "
                    "(a second kernel in the same process: what is left once the system is going)")
    ap.add_argument("--json", required=True)
    args = ap.parse_args()

    result = {"system": args.system, "mode": args.mode, "workloads": {}}

    def save():
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)

    t0 = time.perf_counter()
    sysmod = importlib.import_module("systems." + args.system + "_impl")
    sysmod.init(args.threads, args.cache)
    result["init_ms"] = (time.perf_counter() - t0) * 1e3
    result["name"] = sysmod.NAME
    result["version"] = sysmod.VERSION()
    result["notes"] = {k: v for k, v in sysmod.NOTES.items() if v}
    save()

    todo = args.workloads.split(",")
    if args.mode == "first" and args.then:
        todo.append(args.then)
    for index, name in enumerate(todo):
        if index == 1 and args.mode == "first":
            r = result.setdefault("then", {"workload": name})
        else:
            r = result["workloads"].setdefault(name, {})
        try:
            if args.mode in ("tiny", "first"):
                d = W.inputs(name, W.SIZES["tiny"])
                ref = W.reference(name, d)
            else:
                d, ref = load(args.data, name)
            run, fetch = sysmod.setup(name, d)
            t = time.perf_counter()
            run()
            sysmod.sync()
            first = time.perf_counter() - t
            problem = W.check(name, fetch(), ref, d)
            if problem:
                r["status"] = "wrong"
                r["error"] = problem
                save()
                continue
            r["status"] = "ok"
            if args.mode == "first":
                r["first_ms"] = first * 1e3
            elif args.mode == "steady":
                r["first_ms"] = first * 1e3
                t = time.perf_counter()
                run()
                sysmod.sync()
                warm = time.perf_counter() - t
                n = max(5, min(args.repeats, int(args.budget / max(warm, 1e-6))))
                times = []
                for _ in range(n):
                    t = time.perf_counter()
                    run()
                    sysmod.sync()
                    times.append(time.perf_counter() - t)
                r["median_ms"] = statistics.median(times) * 1e3
                r["min_ms"] = min(times) * 1e3
                r["times_ms"] = [x * 1e3 for x in times]
                # The result after the timed calls is checked again.
                problem = W.check(name, fetch(), ref, d)
                if problem:
                    r["status"] = "wrong"
                    r["error"] = "after repeated calls: " + problem
            else:  # tiny
                for _ in range(20):
                    run()
                sysmod.sync()
                t = time.perf_counter()
                k = 0
                while time.perf_counter() - t < 0.05:
                    run()
                    k += 1
                sysmod.sync()
                per = (time.perf_counter() - t) / k
                number = max(10, min(20000, int(0.1 / per)))
                runs = []
                for _ in range(5):
                    t = time.perf_counter()
                    for _ in range(number):
                        run()
                    sysmod.sync()
                    runs.append((time.perf_counter() - t) / number)
                r["call_us"] = statistics.median(runs) * 1e6
        except Unsupported as e:
            r["status"] = "unsupported"
            r["error"] = str(e)
        except Exception as e:  # a failure of the peer: reported, not dropped
            r["status"] = "failed"
            r["error"] = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
            traceback.print_exc()
        save()


if __name__ == "__main__":
    main()
