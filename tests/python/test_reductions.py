"""Scalar reductions in the parallel loop (docs/language.md, "Reductions"): `s += x[i]` and its kin
read by the `return`, against NumPy for every dtype, the same bits on the CPU with 1 and 2 threads
(child processes with TACK_CPU_THREADS) and on OpenCL, and the errors for other reads after the
loop."""
import importlib.util
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import tack
from support import line_of

INTS = ["i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64"]
FLOATS = ["f32", "f64"]
SIZES = [1, 17, 4096, 4097, 3 * 4096 + 5, 100003]

# The kernels for one dtype T: a module written to a file, so that tack reads its source.
KERNELS = '''import tack

@tack.kernel
def red_sum(x) -> tack.T:
    s = tack.T(0)
    for i in range(x.shape[0]):
        s += x[i]
    return s

@tack.kernel
def red_sub(x) -> tack.T:
    s = tack.T(0)
    for i in range(x.shape[0]):
        s -= x[i]
    return s

@tack.kernel
def red_prod(x) -> tack.T:
    s = tack.T(1)
    for i in range(x.shape[0]):
        s *= x[i]
    return s

@tack.kernel
def red_min(x) -> tack.T:
    s = x[0]
    for i in range(x.shape[0]):
        s = min(s, x[i])
    return s

@tack.kernel
def red_max(x) -> tack.T:
    s = x[0]
    for i in range(x.shape[0]):
        s = max(s, x[i])
    return s

@tack.kernel
def red_or(x) -> tack.T:
    s = tack.T(0)
    for i in range(x.shape[0]):
        s |= x[i]
    return s

@tack.kernel
def red_and(x) -> tack.T:
    s = ~tack.T(0)
    for i in range(x.shape[0]):
        s &= x[i]
    return s

@tack.kernel
def red_xor(x) -> tack.T:
    s = tack.T(0)
    for i in range(x.shape[0]):
        s ^= x[i]
    return s
'''

_modules = {}


def kernels_for(name, directory):
    if name not in _modules:
        path = pathlib.Path(directory) / f"reductions_{name}.py"
        path.write_text(KERNELS.replace("tack.T", f"tack.{name}"))
        spec = importlib.util.spec_from_file_location(f"reductions_{name}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _modules[name] = module
    return _modules[name]


def numpy_dtype(name):
    return {"i8": np.int8, "u8": np.uint8, "i16": np.int16, "u16": np.uint16, "i32": np.int32,
            "u32": np.uint32, "i64": np.int64, "u64": np.uint64, "f32": np.float32,
            "f64": np.float64}[name]


def data(name, n, op):
    rng = np.random.default_rng(n * 31 + len(op))
    dt = numpy_dtype(name)
    if name in FLOATS:
        if op == "red_prod":
            return (1 + rng.uniform(-1e-3, 1e-3, n)).astype(dt)
        return rng.uniform(-1, 1, n).astype(dt)
    if op == "red_prod":
        return np.where(rng.integers(0, 2, n) == 1, 3, 1).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)


def numpy_answer(op, x):
    dt = x.dtype
    with np.errstate(over="ignore"):
        if op == "red_sum":
            return np.sum(x, dtype=dt)
        if op == "red_sub":
            return -np.sum(x, dtype=dt) if dt.kind == "f" else (dt.type(0) - np.sum(x, dtype=dt))
        if op == "red_prod":
            return np.prod(x, dtype=dt)
    if op == "red_min":
        return x.min()
    if op == "red_max":
        return x.max()
    return {"red_or": np.bitwise_or, "red_and": np.bitwise_and,
            "red_xor": np.bitwise_xor}[op].reduce(x)


def ops_for(name):
    base = ["red_sum", "red_sub", "red_prod", "red_min", "red_max"]
    return base + (["red_or", "red_and", "red_xor"] if name in INTS else [])


def devices():
    return [d for d, ok, _ in tack.backend_status() if ok and d in ("cpu", "opencl")]


def run_all(directory, device):
    """Every reduction of every dtype on `device`: {key: bits as hex}."""
    out = {}
    for name in INTS + FLOATS:
        if device == "opencl" and name == "f64" and not tack.device("opencl").backend.supports_f64:
            continue
        k = kernels_for(name, directory)
        for op in ops_for(name):
            for n in SIZES:
                x = tack.asarray(data(name, n, op), device=device)
                r = getattr(k, op)(x)
                out[f"{name} {op} {n}"] = np.array(r, numpy_dtype(name)).tobytes().hex()
    return out


@pytest.fixture(scope="module")
def kernel_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("reduction_kernels")


@pytest.mark.parametrize("name", INTS + FLOATS)
@pytest.mark.parametrize("device", devices())
def test_against_numpy(name, device, kernel_dir):
    if device == "opencl" and name == "f64" and not tack.device("opencl").backend.supports_f64:
        pytest.skip("this OpenCL device has no f64")
    k = kernels_for(name, kernel_dir)
    dt = numpy_dtype(name)
    for op in ops_for(name):
        for n in SIZES:
            x = data(name, n, op)
            got = dt(getattr(k, op)(tack.asarray(x, device=device)))
            want = numpy_answer(op, x)
            if name in INTS or op in ("red_min", "red_max"):
                assert got == want, (op, n, got, want)
            else:
                wide = x.astype(np.float64)
                exact = np.prod(wide) if op == "red_prod" else np.sum(wide)
                if op == "red_sub":
                    exact = -exact
                u = np.finfo(dt).eps
                levels = 256 + 4 + np.ceil(np.log2(n / 4096 + 1)) + 1
                scale = abs(exact) if op == "red_prod" else np.sum(np.abs(wide))
                assert abs(float(got) - exact) <= levels * u * scale, (op, n, got, exact)


def test_cpu_and_opencl_give_the_same_bits(kernel_dir):
    if "opencl" not in devices():
        pytest.skip("OpenCL is not available")
    assert run_all(kernel_dir, "cpu") == run_all(kernel_dir, "opencl")


CHILD = """
import json, sys
sys.path.insert(0, {tests!r})
import test_reductions as t
print(json.dumps(t.run_all({dir!r}, "cpu")))
"""


def test_one_and_two_threads_give_the_same_bits(tmp_path):
    here = pathlib.Path(__file__).resolve().parent
    results = []
    for threads in (1, 2):
        d = tmp_path / f"t{threads}"
        d.mkdir()
        env = dict(os.environ, TACK_CPU_THREADS=str(threads))
        out = subprocess.run([sys.executable, "-c", CHILD.format(tests=str(here), dir=str(d))],
                             env=env, capture_output=True, text=True, check=True)
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    assert results[0] == results[1]
    assert len(results[0]) > 100


@tack.kernel
def issue_sum(x) -> tack.f32:
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i]
    return s


@tack.kernel
def conditional(x, lo) -> tack.f64:
    n = 0
    total = 0.0
    for i in range(x.shape[0]):
        if x[i] < lo:
            continue
        n += 1
        total += x[i]
    return total + n * 1.0e6


@pytest.mark.parametrize("device", devices())
def test_the_issue_kernel(device):
    x = tack.ones((1 << 20,), device=device)
    assert issue_sum(x) == float(1 << 20)  # 0.0 before
    v = np.arange(50000, dtype=np.float64) % 100 - 20
    keep = v[v >= 0]
    got = conditional(tack.asarray(v, device=device), 0.0)
    assert got == keep.sum() + keep.size * 1e6


def test_nan_propagates_through_min_and_sums(kernel_dir):
    k = kernels_for("f32", kernel_dir)
    for device in devices():
        x = np.ones(10000, np.float32)
        x[7777] = np.nan
        a = tack.asarray(x, device=device)
        assert np.isnan(k.red_min(a)) and np.isnan(k.red_sum(a)) and np.isnan(k.red_max(a))


@tack.kernel
def assigned(x) -> tack.f32:
    s = 0.0
    for i in range(x.shape[0]):
        s = x[i]
    return s  # not a reduction


@tack.kernel
def loop_local(x) -> tack.f32:
    for i in range(x.shape[0]):
        t = x[i]
    return t  # first assigned in the loop


def test_other_reads_after_the_loop_are_errors():
    x = tack.ones((10,))
    with pytest.raises(tack.CompileError) as e:
        assigned(x)
    assert e.value.line == line_of(assigned.__wrapped__, "return s")
    assert "each iteration has its own copy" in str(e.value)
    assert "s += e" in str(e.value)
    with pytest.raises(tack.CompileError) as e:
        loop_local(x)
    assert e.value.line == line_of(loop_local.__wrapped__, "return t")
    assert "first assigned in the loop" in str(e.value)


@tack.kernel
def running(x, out):
    s = 1.0
    for i in range(x.shape[0]):
        s += x[i]
        out[i] = s  # this iteration's copy: 1 + x[i]


@tack.kernel
def unassigned(x, out):
    for i in range(x.shape[0]):
        if x[i] > 0.0:
            t = x[i]
        out[i] = t  # zero where this iteration did not assign t


@pytest.mark.parametrize("device", devices())
def test_each_iteration_has_its_own_copy(device):
    x = np.where(np.arange(100000) % 2 == 0, 2.0, -1.0).astype(np.float32)
    a = tack.asarray(x, device=device)
    out = tack.zeros((100000,), device=device)
    running(a, out)
    np.testing.assert_array_equal(out.numpy(), 1 + x)  # a running sum per chunk before
    unassigned(a, out)
    np.testing.assert_array_equal(out.numpy(), np.where(x > 0, x, 0))
