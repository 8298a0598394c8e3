"""First calls of Tack and its peers in new processes, several rounds, medians (issue 14).

compare.py times one first call per system and workload; this repeats them, alternating the
systems within each round so that they share the machine's state, and reports medians:

    build/compare-venv/bin/python bench/compare/first_calls.py [--rounds 7]
        [--systems tack,drjit] [--workloads saxpy,mandelbrot]

Per round, system and workload, on a new, empty cache directory, three processes run the
worker's `first` mode one after the other: the first compiles ("empty cache"), the second finds
what the first stored ("cache filled"), the third follows a process that already loaded it
("filled, again": what a new process touches first is then still in the CPU's caches, as in a
test suite). "init" is the worker's import of the system (NumPy imported before). Run it through
bench/compare/run's environment (build/compare-venv, made by `bench/compare/run`), on an
otherwise idle machine.
"""
import argparse
import os
import shutil
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import compare  # noqa: E402  (run_worker: the worker's command line and environment)

KINDS = ("init", "empty cache", "cache filled", "filled, again")


def first_call(system, name, cache, root):
    """One worker process in `first` mode, through compare.run_worker: (init ms, first call ms)."""
    args = argparse.Namespace(threads=2, repeats=5, budget=0.5)
    log = os.path.join(root, "workers.log")
    res = compare.run_worker(system, "first", [name], args, None, cache,
                             os.path.join(root, "out.json"), log, timeout=300)
    w = res["workloads"][name]
    if w.get("status") != "ok":
        with open(log) as f:
            raise RuntimeError(f"{system} {name}: {w['status']}: {w.get('error', '')}\n{f.read()}")
    return res["init_ms"], w["first_ms"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--systems", default="tack,drjit")
    ap.add_argument("--workloads", default="saxpy,mandelbrot")
    args = ap.parse_args()
    systems, names = args.systems.split(","), args.workloads.split(",")
    times = {}  # (name, system, kind) -> [ms]
    with tempfile.TemporaryDirectory(prefix="tack-first-calls-") as root:
        for r in range(args.rounds):
            for name in names:
                for system in systems:
                    cache = os.path.join(root, f"{system}-{name}-{r}")
                    for kind in KINDS[1:]:
                        init, first = first_call(system, name, cache, root)
                        times.setdefault((name, system, "init"), []).append(init)
                        times.setdefault((name, system, kind), []).append(first)
                    shutil.rmtree(cache)
    load = os.getloadavg()
    print(f"medians of {args.rounds} rounds, ms (min-max); load average after: "
          f"{load[0]:.2f} {load[1]:.2f}\n")
    print("| workload | system | " + " | ".join(KINDS) + " |")
    print("|---" * (len(KINDS) + 2) + "|")
    for name in names:
        for system in systems:
            cells = []
            for kind in KINDS:
                v = times[(name, system, kind)]
                cells.append(f"{statistics.median(v):.3f} ({min(v):.3f}-{max(v):.3f})")
            print(f"| {name} | {system} | " + " | ".join(cells) + " |")
    if "tack" in systems:
        for other in (s for s in systems if s != "tack"):
            for name in names:
                ratios = [statistics.median(times[(name, other, k)]) /
                          statistics.median(times[(name, "tack", k)]) for k in KINDS]
                print(f"\n{name}: {other}'s time over Tack's: " +
                      ", ".join(f"{k} {x:.2f}x" for k, x in zip(KINDS, ratios)))


if __name__ == "__main__":
    main()
