"""The disk cache across processes: a second Python process loads the kernel instead of compiling
it, as tack.cache_stats() shows."""
import json
import os
import subprocess
import sys

import tack

import kernels

PROGRAM = """
import json, sys
import numpy as np
import tack

@tack.kernel
def scale_add(a, x, out):
    for i in range(x.shape[0]):
        out[i] = a * x[i] + 1.0

x = tack.asarray(np.arange(16, dtype=np.float32))
out = tack.empty_like(x)
scale_add(3.0, x, out)
scale_add(3.0, x, out)
assert out.numpy().tolist() == [3.0 * i + 1.0 for i in range(16)]
s = tack.cache_stats()
maps = open("/proc/self/maps").read()
print(json.dumps(dict(s._asdict(), cache_dir=tack.cache_dir(), enabled=tack.cache_enabled(),
                      reason=tack.cache_disabled_reason(),
                      maps_compiler="libtack_cpu_compiler" in maps, maps_llvm="libLLVM" in maps)))
"""


def run_program(path, env, stderr=None):
    run = subprocess.run([sys.executable, str(path)], env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    if stderr is not None:
        stderr.append(run.stderr)
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_second_process_loads_from_the_disk_cache(tmp_path, subprocess_env):
    script = tmp_path / "program.py"
    script.write_text(PROGRAM)
    cache = tmp_path / "cache"
    env = dict(subprocess_env, TACK_CACHE_DIR=str(cache))
    env.pop("TACK_CACHE", None)
    env.pop("TACK_DEBUG", None)

    first = run_program(script, env)
    assert first["cache_dir"] == str(cache)
    assert first["compiles"] == 1 and first["disk_hits"] == 0 and first["disk_writes"] == 1
    assert first["memory_hits"] >= 1

    second = run_program(script, env)
    assert second["disk_hits"] == 1 and second["compiles"] == 0
    assert second["memory_hits"] >= 1
    # LLVM is loaded only to compile: the first process mapped the compiler library, the second,
    # which loaded its kernel from the disk cache, mapped neither it nor any LLVM.
    assert first["maps_compiler"]
    assert not second["maps_compiler"] and not second["maps_llvm"]

    # Debug mode is another variant: compiled again, not loaded.
    debug = run_program(script, dict(env, TACK_DEBUG="1"))
    assert debug["compiles"] == 1 and debug["disk_hits"] == 0

    # TACK_CACHE=0 turns the disk cache off.
    off = run_program(script, dict(env, TACK_CACHE="0"))
    assert off["compiles"] == 1 and off["disk_hits"] == 0 and off["disk_writes"] == 0


def test_the_extension_and_libtack_link_no_llvm():
    """The CPU compiler is a library of its own beside libtack, opened at the first compile."""
    def ldd(path):
        return subprocess.run(["ldd", path], capture_output=True, text=True, check=True).stdout

    extension = ldd(tack._tack.__file__)
    libtack = next(line.split("=>")[1].split()[0] for line in extension.splitlines()
                   if line.strip().startswith("libtack"))
    for deps in (extension, ldd(libtack)):
        assert "libLLVM" not in deps, deps
    assert os.path.exists(os.path.join(os.path.dirname(libtack), "libtack_cpu_compiler.so"))


def test_clear_cache_forgets_memory_and_disk(tmp_path, subprocess_env):
    assert tack.cache_dir() == os.environ["TACK_CACHE_DIR"]
    x = tack.ones((8,))
    kernels.vector_add(x, x, x)
    before = tack.cache_stats()
    kernels.vector_add(x, x, x)
    assert tack.cache_stats().memory_hits == before.memory_hits + 1
    assert tack.clear_cache() >= 0
    kernels.vector_add(x, x, x)  # compiled again: neither memory nor disk has it
    after = tack.cache_stats()
    assert after.compiles == before.compiles + 1


def test_cache_stats_has_every_counter():
    s = tack.cache_stats()
    counters = ["compiles", "memory_hits", "disk_hits", "disk_misses", "disk_writes",
                "disk_corrupt", "disk_write_failures", "disk_refused", "disk_evictions",
                "disk_lock_waits", "disk_lock_timeouts", "front_end_runs", "front_end_records"]
    assert list(s._asdict()) == counters
    for name in counters:
        assert isinstance(getattr(s, name), int)
        assert f"{name}={getattr(s, name)}" in repr(s)
    assert tack.cache_enabled() == (tack.cache_disabled_reason() == "")


def test_a_directory_others_can_write_is_refused_and_reported(tmp_path, subprocess_env):
    script = tmp_path / "program.py"
    script.write_text(PROGRAM)
    cache = tmp_path / "cache"
    env = dict(subprocess_env, TACK_CACHE_DIR=str(cache))
    for name in ("TACK_CACHE", "TACK_DEBUG"):
        env.pop(name, None)
    first = run_program(script, env)
    assert first["enabled"] and first["disk_writes"] == 1

    # The entry there is valid, and exactly what a hit would run: with the directory open to
    # every user, it is not read, and the process says the cache is off and why, once.
    os.chmod(cache, 0o777)
    stderr = []
    shared = run_program(script, env, stderr)
    assert not shared["enabled"]
    assert "is writable by" in shared["reason"] and "chmod 700" in shared["reason"]
    assert shared["disk_hits"] == 0 and shared["compiles"] == 1 and shared["disk_writes"] == 0
    assert shared["disk_refused"] == 1
    assert stderr[0].count("the kernel cache on disk is off") == 1, stderr[0]

    os.chmod(cache, 0o700)
    again = run_program(script, env)
    assert again["enabled"] and again["disk_hits"] == 1 and again["compiles"] == 0


RECORD_PROGRAM = """
import json
import numpy as np
import tack
from helpers import twice
{blank_lines}
OFFSET = tack.constant({offset})

@tack.kernel
def shifted(x, out):
    for i in range(x.shape[0]):
        out[i] = twice(x[i]) + OFFSET

x = tack.asarray(np.arange(8, dtype=np.float32))
out = tack.empty_like(x)
shifted(x, out)
print(json.dumps(dict(tack.cache_stats()._asdict(), out=out.numpy().tolist())))
"""

HELPERS = """
import tack
FACTOR = tack.constant({factor})

@tack.func
def twice(v):
    return v * FACTOR{extra}
"""


def test_a_front_end_record_serves_only_the_same_text_and_answers(tmp_path, subprocess_env):
    """A new process takes a kernel's specialization from its record in the disk cache, unless the
    kernel's text or position, or anything its names are bound to (a constant of its module, a
    device function's text, a constant of that function's module) changed since."""
    env = dict(subprocess_env, TACK_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("TACK_CACHE", None)
    env.pop("TACK_DEBUG", None)

    def run(offset=1, factor=2, extra="", blank_lines=""):
        (tmp_path / "helpers.py").write_text(HELPERS.format(factor=factor, extra=extra))
        (tmp_path / "program.py").write_text(
            RECORD_PROGRAM.format(offset=offset, blank_lines=blank_lines))
        result = run_program(tmp_path / "program.py", env)
        return result["out"], result["front_end_runs"], result["front_end_records"]

    expected = [2.0 * i + 1 for i in range(8)]
    assert run() == (expected, 1, 0)
    assert run() == (expected, 0, 1), "the same text and answers: from the record"
    assert run(offset=5) == ([2.0 * i + 5 for i in range(8)], 1, 0), "the module's constant"
    assert run(offset=5) == ([2.0 * i + 5 for i in range(8)], 0, 1)
    assert run(offset=5, factor=3) == ([3.0 * i + 5 for i in range(8)], 1, 0), \
        "a constant of the device function's module"
    assert run(offset=5, factor=3, extra=" + 1.0") == ([3.0 * i + 6 for i in range(8)], 1, 0), \
        "the device function's text"
    assert run(offset=5, factor=3, extra=" + 1.0", blank_lines="\n") == (
        [3.0 * i + 6 for i in range(8)], 1, 0), "the kernel's line, which its errors name"
    assert run(offset=5, factor=3, extra=" + 1.0", blank_lines="\n") == (
        [3.0 * i + 6 for i in range(8)], 0, 1)
