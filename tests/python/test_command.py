"""The `tack` command as pip installs it: the console script and `python -m tack`, which run the C++
tool itself (src/tools) through the extension."""
import os
import pathlib
import subprocess
import sys

import pytest

import tack

KERNEL = """import tack

@tack.kernel
def twice(x, out):
    for i in range(x.shape[0]):
        out[i] = 2.0 * x[i]
"""


def tack_command(*args, env=None, cwd=None):
    """`python -m tack ARGS` in a fresh process: (exit status, stdout, stderr)."""
    run = subprocess.run([sys.executable, "-m", "tack", *args], capture_output=True, text=True,
                         env=env, cwd=cwd, timeout=300)
    return run.returncode, run.stdout, run.stderr


@pytest.fixture
def kernel_file(tmp_path):
    path = tmp_path / "twice.py"
    path.write_text(KERNEL)
    return path


@pytest.fixture
def cache_env(tmp_path):
    env = dict(os.environ)
    env["TACK_CACHE_DIR"] = str(tmp_path / "cache")
    return env


def test_version_is_the_package_version():
    rc, out, _ = tack_command("--version")
    assert rc == 0
    assert out.strip() == f"tack {tack.__version__}"


def test_console_script_is_the_same_tool():
    # pip puts the console script beside the interpreter of the environment.
    script = pathlib.Path(sys.executable).with_name("tack")
    if not script.exists():
        pytest.skip(f"no console script at {script}: the package is not pip-installed here")
    run = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.strip() == f"tack {tack.__version__}"


def test_help_describes_every_subcommand():
    rc, out, _ = tack_command("--help")
    assert rc == 0
    for name in ("info", "emit", "run", "cache"):
        line = next((l for l in out.splitlines() if l.strip().startswith(name + " ")), None)
        assert line is not None and len(line.split()) > 2, out
    rc, out, _ = tack_command("cache", "--help")
    assert rc == 0
    for name in ("ls", "stats", "clear"):
        line = next((l for l in out.splitlines() if l.strip().startswith(name + " ")), None)
        assert line is not None and len(line.split()) > 2, out


def test_unknown_subcommands_are_named():
    rc, _, err = tack_command("compile")
    assert rc != 0
    assert "unknown subcommand 'compile'" in err and "info, emit, run, cache" in err
    rc, _, err = tack_command("cache", "list")
    assert rc != 0
    assert "unknown subcommand 'cache list'" in err and "ls, stats, clear" in err


def test_info_lists_the_cpu_backend():
    rc, out, _ = tack_command("info")
    assert rc == 0
    assert out.startswith(f"Tack {tack.__version__}")
    assert any(l.startswith("cpu ") and "available" in l for l in out.splitlines())


@pytest.mark.parametrize(
    "args, words",
    [
        ("f32[12x],f32[12]", "'12x' in 'f32[12x]' is not a number"),
        ("f32[99999999999999999999],f32[4]", "out of range"),
        ("f32[-3],f32[4]", "negative size"),
        ("f32=abc,f32[4]", "'abc' in 'f32=abc' is not a number"),
        ("f32[4000000000,4000000000,4000000000],f32[4]", "more elements than fit"),
    ],
)
def test_a_bad_number_is_an_error_not_a_crash(kernel_file, cache_env, args, words):
    rc, out, err = tack_command("run", str(kernel_file), "--args", args, env=cache_env)
    assert rc == 1, (out, err)
    assert err.startswith("tack: ") and words in err, err


def test_a_bad_number_in_emit_is_an_error(kernel_file, cache_env):
    rc, _, err = tack_command("emit", str(kernel_file), "--args", "f32[,3x],f32[]", env=cache_env)
    assert rc == 1 and "'3x' in 'f32[,3x]' is not a number" in err, err


def test_run_on_a_named_device(kernel_file, cache_env):
    rc, out, err = tack_command("run", str(kernel_file), "--args", "f32[8],f32[8]", "--device",
                                "cpu", env=cache_env)
    assert rc == 0, err
    assert "twice on cpu:0: first call" in out
    assert "arg 2: f32 0, 2, 4, 6, 8, 10, 12, 14 sum=56" in out
    rc, _, err = tack_command("run", str(kernel_file), "--args", "f32[8],f32[8]", "--device",
                              "nosuch", env=cache_env)
    assert rc == 1 and "nosuch" in err


def test_cache_ls_lists_kernel_types_backend_size_age(kernel_file, cache_env):
    rc, out, _ = tack_command("cache", "ls", env=cache_env)
    assert rc == 0
    assert out.strip() == f"the cache in {cache_env['TACK_CACHE_DIR']} is empty"
    assert tack_command("run", str(kernel_file), "--args", "f32[8],f32[8]", env=cache_env)[0] == 0
    rc, out, _ = tack_command("cache", "ls", env=cache_env)
    assert rc == 0
    header, *rows = out.splitlines()
    assert header.split() == ["kernel", "argument", "types", "backend", "bytes", "age", "file"]
    row = next(r for r in rows if r.startswith("twice "))
    fields = row.split()
    assert fields[1:3] == ["f32[],", "f32[]"] and fields[3] == "cpu", row
    assert int(fields[4]) > 0 and fields[5].endswith("s") and fields[6].startswith("cpu-"), row


def test_cache_stats_when_the_directory_cannot_be_created(tmp_path, cache_env):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    cache_env["TACK_CACHE_DIR"] = str(blocker / "cache")
    rc, out, _ = tack_command("cache", "stats", env=cache_env)
    assert rc == 0
    assert "enabled: no (" in out, out
    assert "enabled: yes" not in out


def test_python_output_comes_before_the_tools():
    # The entry point flushes what Python buffered before the tool writes to the same stream.
    code = "import sys, tack.__main__ as m; print('first'); sys.exit(m.main(['--version']))"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0
    assert run.stdout.splitlines() == ["first", f"tack {tack.__version__}"]
