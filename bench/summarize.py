#!/usr/bin/env python3
"""Turns the output of scripts/bench into the ratio tables of bench/RESULTS.md.

usage: summarize.py RESULTS_DIR   (reads kernels.json, call_overhead.json, first_call.json there)
"""
import json
import os
import sys


def medians(path):
    """name -> the median aggregate of each benchmark (or its only run without repetitions), with
    "best_real_time": the fastest repetition's time."""
    with open(path) as f:
        data = json.load(f)
    runs, out = {}, {}
    for b in data["benchmarks"]:
        if b.get("error_occurred"):
            raise SystemExit(f"{path}: {b['name']}: {b.get('error_message')}")
        name = b.get("run_name", b["name"]).split("/")[0]
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                out[name] = b
        else:
            runs.setdefault(name, []).append(b)
    for name, rs in runs.items():
        out.setdefault(name, rs[0])
        out[name]["best_real_time"] = min(r["real_time"] for r in rs)
        out[name]["repetitions"] = len(rs)
    return data["context"], out


def seconds(b, key="real_time"):
    unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b.get("time_unit", "ns")]
    return b[key] * unit


def met(ok):
    return "met" if ok else "**missed**"


def main():
    d = sys.argv[1]
    ctx, k = medians(os.path.join(d, "kernels.json"))
    _, c = medians(os.path.join(d, "call_overhead.json"))
    with open(os.path.join(d, "first_call.json")) as f:
        fc = json.load(f)
    lines = []
    p = lines.append

    reps = k["BM_triad"]["repetitions"]
    p(f"Threads: Tack {ctx.get('tack_threads')}, OpenMP {ctx.get('omp_threads')}. "
      f"Times are the median of {reps} repetitions of each benchmark (real time), repetitions "
      f"interleaved in random order. OpenMP wait policy: {ctx.get('omp_wait_policy')}.")
    p("")
    p("### Kernels: Tack against hand-written C++ (OpenMP, -O3 -march=native -ffp-contract=off)")
    p("")
    p("\"paired\" (the target's measure): one Tack call and one C++ call in turns, the ratio of the "
      "two times per repetition (BM_pair_*). \"apart\": the two benchmarks run on their own "
      "(BM_*_tack, BM_*_cpp), ratio of their medians, and of their fastest repetitions.")
    p("")
    p("| kernel | size | Tack | C++ | Tack speed relative to C++, paired | apart | apart, best | "
      "target | |")
    p("|---|---|---|---|---|---|---|---|---|")
    sizes = {
        "vector_add": f"{ctx.get('stream_elements')} f32",
        "saxpy": f"{ctx.get('stream_elements')} f32",
        "stencil5": f"{ctx.get('stencil_grid')} f32",
        "mandelbrot": ctx.get("mandelbrot", ""),
        "nbody": f"{ctx.get('nbody_bodies')} bodies",
        "sum": f"{ctx.get('sum_elements')} f32 (Tack: s += x[i], a scalar reduction)",
    }

    def fmt(b):
        s = f"{seconds(b) * 1e3:.2f} ms"
        if "bytes_per_second" in b:
            s += f" ({b['bytes_per_second'] / 1e9:.1f} GB/s)"
        return s

    for name, size in sizes.items():
        t, h = k[f"BM_{name}_tack"], k[f"BM_{name}_cpp"]
        apart = seconds(h) / seconds(t)
        best = h["best_real_time"] / t["best_real_time"]
        paired = k[f"BM_pair_{name}"]["speed_ratio"]
        p(f"| {name} | {size} | {fmt(t)} | {fmt(h)} | **{paired:.3f}x** | {apart:.3f}x | {best:.3f}x "
          f"| >= 0.9x | {met(paired >= 0.9)} |")
    p("")
    tri, sax = k["BM_triad"], k["BM_saxpy_tack"]
    bw_apart = sax["bytes_per_second"] / tri["bytes_per_second"]
    bw_best = tri["best_real_time"] / sax["best_real_time"]
    bw = k["BM_pair_saxpy_triad"]["speed_ratio"]
    p("### Memory bandwidth: Tack's saxpy against a STREAM triad (3 arrays x 4 B per element)")
    p("")
    p("| | bandwidth (apart) | fraction of the triad, paired | apart | apart, best | target | |")
    p("|---|---|---|---|---|---|---|")
    p(f"| STREAM triad (OpenMP) | {tri['bytes_per_second'] / 1e9:.2f} GB/s | 1 | 1 | 1 | | |")
    p(f"| Tack saxpy | {sax['bytes_per_second'] / 1e9:.2f} GB/s | **{bw:.3f}** | {bw_apart:.3f} "
      f"| {bw_best:.3f} | >= 0.90 | {met(bw >= 0.9)} |")
    p("")
    cold, warm = fc["cold"], fc["warm"]
    tiny = seconds(c["BM_tack_vector_add_16"]) * 1e6
    p(f"### Latency (first calls: median of {fc['runs']} new processes each)")
    p("")
    p("| | measured | target | |")
    p("|---|---|---|---|")
    p(f"| first call of vector_add, new process, empty cache | {cold['total_ms']:.2f} ms | < 30 ms "
      f"| {met(cold['total_ms'] < 30)} |")
    p(f"| first call of vector_add, new process, disk cache filled | {warm['total_ms']:.2f} ms "
      f"| < 1 ms | {met(warm['total_ms'] < 1)} |")
    p(f"| call of a cached kernel on 16 elements (vector_add) | {tiny:.3f} us | < 2 us "
      f"| {met(tiny < 2)} |")
    p("")
    p("First-call breakdown (ms; the parts row set started one at a time in separate processes):")
    p("")
    p("| | empty cache | disk cache |")
    p("|---|---|---|")
    cp, wp = fc["cold_parts"], fc["warm_parts"]
    for label, key in [("parse the module (from_source + kernel)", "module_ms"),
                       ("device and three 1024-float arrays", "arrays_ms"),
                       ("first call of vector_add (all of it)", "call_ms")]:
        p(f"| {label} | {cold[key]:.3f} | {warm[key]:.3f} |")
    for label, key in [("&nbsp;&nbsp;of which: CPU compiler start (host CPU detection)", "host_ms"),
                       ("&nbsp;&nbsp;of which: LLVM ORC JIT start (LLJIT)", "jit_ms"),
                       ("&nbsp;&nbsp;of which: compile or read the cache, JIT link, run", "call_ms")]:
        p(f"| {label} | {cp[key]:.3f} | {wp[key]:.3f} |")
    p(f"| second call (same process) | {cold['second_call_ms'] * 1e3:.1f} us "
      f"| {warm['second_call_ms'] * 1e3:.1f} us |")
    p("")
    p("Process start-up, not part of the above (ms):")
    p("")
    p("| | posix_spawn to main | posix_spawn to exit |")
    p("|---|---|---|")
    np_, bt = fc["noop_process"], fc["bin_true"]
    p(f"| tack_first_call doing nothing (loads libtack, libLLVM) | {np_['spawn_to_main_ms']:.2f} "
      f"| {np_['spawn_to_exit_ms']:.2f} |")
    p(f"| /bin/true | | {bt['spawn_to_exit_ms']:.2f} |")
    p("")
    p("### Call overhead, 16 elements (per call)")
    p("")
    p("| | time |")
    p("|---|---|")
    for label, name in [("Tack vector_add (cached kernel)", "BM_tack_vector_add_16"),
                        ("Tack saxpy (cached kernel, one scalar)", "BM_tack_saxpy_16"),
                        ("C++ serial loop, out-of-line call", "BM_cpp_serial_vector_add_16"),
                        ("C++ reference::vector_add (an OpenMP parallel region)",
                         "BM_cpp_openmp_vector_add_16")]:
        p(f"| {label} | {seconds(c[name]) * 1e9:.1f} ns |")
    print("\n".join(lines))


main()
