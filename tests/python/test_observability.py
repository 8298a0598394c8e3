"""What a user can see of the runtime: the log (TACK_LOG, tack.set_log_level), kernel.variants, and
tack.inspect for a backend whose device is not here."""
import os
import subprocess
import sys

import numpy as np
import pytest

import tack

PROGRAM = """
import numpy as np
import tack

@tack.kernel
def axpy(a, x, y):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]

x = tack.asarray(np.arange(64, dtype=np.float32))
y = tack.zeros((64,))
axpy(2.0, x, y)
axpy(2.0, x, y)
tack.sync()
print(tack.cache_stats().compiles)
"""


def run_logged(tmp_path, cache, **env_overrides):
    path = tmp_path / "program.py"
    path.write_text(PROGRAM)
    env = dict(os.environ, TACK_CACHE_DIR=str(cache), TACK_LOG="1", TACK_DEFAULT_DEVICE="cpu")
    env.update(env_overrides)
    run = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    return [l for l in run.stderr.splitlines() if l.startswith("tack: ")]


def test_tack_log_says_compile_miss_hit_and_launch(tmp_path):
    cache = tmp_path / "cache"
    first = run_logged(tmp_path, cache)
    miss = [l for l in first if l.startswith("tack: disk cache miss: kernel 'axpy'")]
    assert len(miss) == 1 and miss[0].endswith("on cpu:0 (new key)"), first
    compiled = [l for l in first if l.startswith("tack: compiled kernel 'axpy'")]
    assert len(compiled) == 1 and compiled[0].endswith(" ms"), first
    launches = [l for l in first if l.startswith("tack: launch: kernel 'axpy' on cpu:0, 64 ")]
    assert len(launches) == 2 and all(l.endswith(" ms") for l in launches), first

    second = run_logged(tmp_path, cache)
    hits = [l for l in second if l.startswith("tack: disk cache hit: kernel 'axpy'")]
    assert len(hits) == 1 and "loaded in " in hits[0], second
    assert not any("compiled kernel 'axpy'" in l for l in second), second


def test_a_corrupt_entry_is_logged_as_recompiled(tmp_path):
    cache = tmp_path / "cache"
    run_logged(tmp_path, cache)
    for entry in cache.glob("cpu-*.tck"):
        data = bytearray(entry.read_bytes())
        data[100] ^= 0xFF  # inside the artifact (the file's start): the checksum no longer matches
        entry.write_bytes(bytes(data))
    lines = run_logged(tmp_path, cache)
    assert any(l.startswith("tack: disk cache miss: kernel 'axpy'") and
               l.endswith("(corrupt entry, recompiled)") for l in lines), lines


def test_no_log_by_default(tmp_path):
    assert run_logged(tmp_path, tmp_path / "cache", TACK_LOG="0") == []


def test_set_log_level(capfd):
    @tack.kernel
    def fill_seven(out):
        for i in range(out.shape[0]):
            out[i] = 7.0

    before = tack.log_level()
    try:
        tack.set_log_level(1)
        assert tack.log_level() == 1
        out = tack.zeros((5,))
        fill_seven(out)
        tack.sync()
    finally:
        tack.set_log_level(before)
    err = capfd.readouterr().err
    assert "compiled kernel 'fill_seven'" in err or "disk cache hit: kernel 'fill_seven'" in err
    assert "launch: kernel 'fill_seven'" in err


def test_kernel_variants():
    @tack.kernel
    def scale(a, x):
        for i in range(x.shape[0]):
            x[i] = a * x[i]

    assert scale.variants == []
    with tack.device("cpu"):
        scale(2.0, tack.ones((4,)))
        scale(2.0, tack.ones((4,), dtype=tack.f64))
        variants = scale.variants
    assert [v.arg_types for v in variants] == ["f32,f32[]", "f64,f64[]"]
    assert all(v.device == "cpu:0" for v in variants)
    assert all(v.origin.split(" ")[0] in ("compiled", "disk") for v in variants), variants
    assert "KernelVariant(arg_types='f32,f32[]'" in repr(variants[0])


@tack.kernel
def saxpy(a, x, y, out):
    for i in range(x.shape[0]):
        out[i] = a * x[i] + y[i]


@pytest.mark.parametrize("target, marker", [
    ("cuda", "__global__"), ("hip", "__global__"), ("opencl", "__kernel"),
    ("level_zero", "__kernel"), ("metal", "kernel void"),
])
def test_inspect_any_backend_without_its_device(target, marker):
    with tack.device("cpu"):
        x = tack.ones((8,))
        source = tack.inspect(saxpy, 2.0, x, x, x, backend=target)
        ir = tack.inspect(saxpy, 2.0, x, x, x, backend=target, mode="ir")
    assert marker in source and "saxpy" in source
    assert ir.startswith("kernel saxpy(")


def test_inspect_explains_what_it_cannot_show():
    with tack.device("cpu"):
        x = tack.ones((8,))
        with pytest.raises(ValueError, match="needs its device"):
            tack.inspect(saxpy, 2.0, x, x, x, backend="cuda", mode="optimized")
        with pytest.raises(ValueError, match="cuda, hip, level_zero, metal or opencl"):
            tack.inspect(saxpy, 2.0, x, x, x, backend="vulkan")
        # The arguments' own backend: the usual inspect.
        assert "define" in tack.inspect(saxpy, 2.0, x, x, x, backend="cpu", mode="source")
