"""First calls of Tack and its peers in new processes, several rounds, medians (issue 14).

compare.py times one first call per system and workload; this repeats them, alternating the
systems within each round so that they share the machine's state, and reports medians:

    build/compare-venv/bin/python bench/compare/first_calls.py [--rounds 7]
        [--systems tack,drjit] [--workloads saxpy,mandelbrot] [--then triad]

Per round, system and workload, on a new, empty cache directory, three processes run the
worker's `first` mode one after the other: the first compiles ("empty cache"), the second finds
what the first stored ("cache filled"), the third follows a process that already loaded it
("filled, again": what a new process touches first is then still in the CPU's caches, as in a
test suite). "init" is the worker's import of the system (NumPy imported before). With --then,
each process also times the first call of a second workload after the first one ("second
kernel", from a filled cache): what a kernel costs once the process's first one has set the
system going. A process with a filled cache that still wrote a file there compiled again (Dr.Jit
does so now and then, on saxpy in up to half of its processes): its times are left out of the
medians and counted in the table's last column, since the columns measure loading from the
cache. Run it through
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


def files_under(path):
    return sum(len(files) for _, _, files in os.walk(path))


def first_call(system, name, cache, root, then):
    """One worker process in `first` mode, through compare.run_worker: (init ms, first call ms,
    the first call of `then` after it in ms, or None)."""
    args = argparse.Namespace(threads=2, repeats=5, budget=0.5)
    log = os.path.join(root, "workers.log")
    res = compare.run_worker(system, "first", [name], args, None, cache,
                             os.path.join(root, "out.json"), log, timeout=300, then=then)
    for w in [res["workloads"][name]] + ([res.get("then", {"status": "missing"})] if then else []):
        if w.get("status") != "ok":
            with open(log) as f:
                raise RuntimeError(f"{system} {name}: {w['status']}: {w.get('error', '')}\n"
                                   f"{f.read()}")
    second = res["then"]["first_ms"] if then else None
    return res["init_ms"], res["workloads"][name]["first_ms"], second


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--systems", default="tack,drjit")
    ap.add_argument("--workloads", default="saxpy,mandelbrot")
    ap.add_argument("--then", help="a second workload each process runs after the first one")
    args = ap.parse_args()
    systems, names = args.systems.split(","), args.workloads.split(",")
    kinds = KINDS + (("second kernel",) if args.then else ())
    times = {}  # (name, system, kind) -> [ms]
    recompiled = {}  # (name, system) -> runs with a filled cache that compiled again
    with tempfile.TemporaryDirectory(prefix="tack-first-calls-") as root:
        for r in range(args.rounds):
            for name in names:
                for system in systems:
                    cache = os.path.join(root, f"{system}-{name}-{r}")
                    for kind in KINDS[1:]:
                        before = files_under(cache)
                        init, first, then = first_call(system, name, cache, root, args.then)
                        times.setdefault((name, system, "init"), []).append(init)
                        if kind != "empty cache" and files_under(cache) > before:
                            recompiled[(name, system)] = recompiled.get((name, system), 0) + 1
                            continue
                        times.setdefault((name, system, kind), []).append(first)
                        if then is not None and kind != "empty cache":
                            times.setdefault((name, system, "second kernel"), []).append(then)
                    shutil.rmtree(cache)
    load = os.getloadavg()
    print(f"medians of {args.rounds} rounds, ms (min-max); load average after: "
          f"{load[0]:.2f} {load[1]:.2f}\n")
    then = f" ({args.then})" if args.then else ""
    print("| workload | system | " + " | ".join(kinds) + then + " | filled, yet compiled |")
    print("|---" * (len(kinds) + 3) + "|")
    for name in names:
        for system in systems:
            cells = []
            for kind in kinds:
                v = times.get((name, system, kind))
                cells.append(f"{statistics.median(v):.3f} ({min(v):.3f}-{max(v):.3f})"
                             if v else "-")
            cells.append(f"{recompiled.get((name, system), 0)} of {2 * args.rounds}")
            print(f"| {name} | {system} | " + " | ".join(cells) + " |")
    if "tack" in systems:
        for other in (s for s in systems if s != "tack"):
            for name in names:
                both = [k for k in kinds
                        if (name, other, k) in times and (name, "tack", k) in times]
                ratios = [statistics.median(times[(name, other, k)]) /
                          statistics.median(times[(name, "tack", k)]) for k in both]
                print(f"\n{name}: {other}'s time over Tack's: " +
                      ", ".join(f"{k} {x:.2f}x" for k, x in zip(both, ratios)))


if __name__ == "__main__":
    main()
