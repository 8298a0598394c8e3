"""The driver of the comparison: writes the inputs and NumPy references, runs the workers of each
system (worker.py, one process per system and mode), collects their JSON and writes the report
(report.py). bench/compare/run sets up the environment and calls it.

    python bench/compare/compare.py [--quick] [--systems tack,numba,...] [--out DIR]
"""
import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

import workloads as W  # noqa: E402

SYSTEMS = ["tack", "numba", "taichi", "warp", "drjit", "cpp", "numpy"]


def write_data(data_dir, sizes):
    os.makedirs(data_dir, exist_ok=True)
    for name in W.WORKLOADS:
        path = os.path.join(data_dir, name + ".npz")
        if os.path.exists(path):
            continue
        t = time.perf_counter()
        d = W.inputs(name, sizes)
        ref = W.reference(name, d)
        arrays = {"in__" + k: np.asarray(v) for k, v in d.items()}
        if isinstance(ref, dict):
            arrays.update({"ref__" + k: v for k, v in ref.items()})
        else:
            arrays["ref__value"] = np.asarray(ref)
        np.savez(path + ".tmp.npz", **arrays)
        os.replace(path + ".tmp.npz", path)
        print(f"  reference {name}: {time.perf_counter() - t:.1f} s", flush=True)


def system_env(system, cache_dir, threads):
    env = dict(os.environ)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    # Every threading runtime gets the same count (Warp runs CPU launches on one thread anyway).
    env.update({"OMP_NUM_THREADS": str(threads), "NUMBA_NUM_THREADS": str(threads),
                "TACK_CPU_THREADS": str(threads), "DRJIT_NUM_THREADS": str(threads)})
    if system == "drjit":
        # Dr.Jit keeps its kernel cache in ~/.drjit: a HOME of its own makes it empty or filled
        # at will. Its LLVM backend loads libLLVM at run time; the one Tack links (LLVM 19).
        env["HOME"] = os.path.join(cache_dir, "home")
        os.makedirs(env["HOME"], exist_ok=True)
        env.setdefault("DRJIT_LIBLLVM_PATH", "/usr/lib/llvm-19/lib/libLLVM.so.1")
    return env


def run_worker(system, mode, names, args, data_dir, cache_dir, out_json, log, timeout, then=None):
    cmd = [sys.executable, os.path.join(HERE, "worker.py"), "--system", system, "--mode", mode,
           "--workloads", ",".join(names), "--cache", cache_dir, "--threads", str(args.threads),
           "--json", out_json, "--repeats", str(args.repeats), "--budget", str(args.budget)]
    if data_dir:
        cmd += ["--data", data_dir]
    if then:
        cmd += ["--then", then]
    os.makedirs(cache_dir, exist_ok=True)
    if os.path.exists(out_json):
        os.remove(out_json)
    t = time.perf_counter()
    with open(log, "a") as lf:
        lf.write(f"\n== {' '.join(cmd)}\n")
        lf.flush()
        try:
            p = subprocess.run(cmd, stdout=lf, stderr=lf, env=system_env(system, cache_dir, args.threads),
                               timeout=timeout, cwd=ROOT)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
    wall = time.perf_counter() - t
    res = {}
    if os.path.exists(out_json):
        with open(out_json) as f:
            res = json.load(f)
    res.setdefault("workloads", {})
    for name in names:  # a workload the worker never reached: the process died or hung
        r = res["workloads"].setdefault(name, {})
        if "status" not in r:
            r["status"] = "failed"
            r["error"] = (f"the worker process ended ({rc}) before finishing it; see "
                          f"{os.path.relpath(log, ROOT)}"
                          if rc != "timeout" else f"timed out after {timeout} s")
    res["wall_s"] = wall
    res["returncode"] = rc
    return res


def machine():
    def sh(cmd):
        try:
            return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.strip()
        except OSError:
            return ""
    return {
        "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "commit": sh("git -C %s rev-parse --short HEAD" % ROOT),
        "dirty": sh("git -C %s status --porcelain -- src include python bench/compare | wc -l" % ROOT),
        "cpu": sh("lscpu | grep -E '^(Model name|CPU\\(s\\)|Thread\\(s\\) per core|"
                  "Core\\(s\\) per socket|L2 cache|L3 cache):'"),
        "mem": sh("grep MemTotal /proc/meminfo"),
        "os": sh(". /etc/os-release && echo $PRETTY_NAME"),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "cxx": sh("g++ --version | head -1"),
        "load_before": os.getloadavg(),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes and few repeats (minutes)")
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--workloads", default=",".join(W.WORKLOADS))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--budget", type=float, default=None, help="seconds of timed calls per workload")
    ap.add_argument("--no-first", action="store_true", help="skip the first-call measurements")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "compare-results"))
    ap.add_argument("--report", default=os.path.join(ROOT, "bench", "COMPARE.md"))
    ap.add_argument("--chart", default=os.path.join(ROOT, "bench", "compare-ratios.png"))
    args = ap.parse_args()
    mode = "quick" if args.quick else "full"
    args.repeats = args.repeats or (5 if args.quick else 15)
    args.budget = args.budget or (0.5 if args.quick else 2.0)
    systems = args.systems.split(",")
    names = args.workloads.split(",")

    start = time.perf_counter()
    os.makedirs(args.out, exist_ok=True)
    log = os.path.join(args.out, "workers.log")
    open(log, "w").close()
    info = {"mode": mode, "sizes": W.SIZES[mode], "threads": args.threads, "machine": machine(),
            "repeats": args.repeats, "budget_s": args.budget, "systems": {}}
    data_dir = os.path.join(ROOT, "build", "compare-data", mode)
    print(f"compare: inputs and NumPy references ({mode} sizes) in {data_dir}", flush=True)
    write_data(data_dir, W.SIZES[mode])

    cache_root = os.path.join(args.out, "caches")
    shutil.rmtree(cache_root, ignore_errors=True)
    for system in systems:
        s = info["systems"][system] = {}
        j = os.path.join(args.out, f"{system}-%s.json")
        print(f"compare: {system}: steady state", flush=True)
        s["steady"] = run_worker(system, "steady", names, args, data_dir,
                                 os.path.join(cache_root, system, "steady"), j % "steady", log,
                                 timeout=900 if mode == "full" else 300)
        print(f"compare: {system}: tiny calls", flush=True)
        s["tiny"] = run_worker(system, "tiny", names, args, None,
                               os.path.join(cache_root, system, "steady"), j % "tiny", log, timeout=300)
        if args.no_first:
            continue
        s["cold"], s["warm"] = {}, {}
        for k, name in enumerate(names):
            # Both processes then call a second kernel (the previous workload's): in the first
            # process it compiles, in the second it loads from the cache, each time in a process
            # where the system is already going (its start-up is behind it).
            before = names[k - 1] if len(names) > 1 else None
            cache = os.path.join(cache_root, system, "first-" + name)
            shutil.rmtree(cache, ignore_errors=True)  # empty: the first call compiles
            print(f"compare: {system}: first call of {name}, empty cache, then filled", flush=True)
            s["cold"][name] = run_worker(system, "first", [name], args, None, cache,
                                         j % "first", log, timeout=300, then=before)
            s["warm"][name] = run_worker(system, "first", [name], args, None, cache,
                                         j % "first", log, timeout=300, then=before)
        with open(os.path.join(args.out, "results.json"), "w") as f:
            json.dump(info, f, indent=1)
    info["elapsed_s"] = time.perf_counter() - start
    info["machine"]["load_after"] = os.getloadavg()
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(info, f, indent=1)
    import report

    report.write(info, args.report, args.chart)
    print(f"compare: done in {info['elapsed_s'] / 60:.1f} min; {os.path.relpath(args.report, ROOT)}, "
          f"{os.path.relpath(args.chart, ROOT)}, raw results in {os.path.relpath(args.out, ROOT)}")


if __name__ == "__main__":
    main()
