"""Typed Python: the package says it is typed (py.typed), the extension's stub is the one nanobind's
stubgen makes from it (scripts/stubs), public functions have real parameter names and docstrings,
and a user script written with the README's API passes `mypy --strict`."""
import importlib.util
import pathlib
import subprocess
import sys

import pytest

import tack

ROOT = pathlib.Path(__file__).resolve().parents[2]

USER_SCRIPT = '''
import numpy as np
import tack


@tack.kernel
def vector_add(x, y, out):  # type: (tack.Array, tack.Array, tack.Array) -> None
    for i in range(x.shape[0]):
        out[i] = x[i] + y[i]


tack.set_default_device("cpu")
print(tack.get_backend().supports_f64)
x = tack.empty((1024,))
y = tack.zeros((1024,), dtype=tack.f32)
out = tack.empty_like(x)
tack.copyto(x, np.arange(1024, dtype=np.float32))
tack.copyto(y, np.ones(1024, dtype=np.float32))
vector_add(x, y, out)
total: float = float(out.sum())
first = out.numpy()
shape: tuple[int, ...] = out.shape
z = tack.asarray(np.float32(2.5))
print(total, first[0], shape, z.ndim, tack.inspect(vector_add, x, y, out, backend="cuda")[:10])
for v in vector_add.variants:
    print(v.arg_types, v.device, v.origin)
tack.set_log_level(0)
'''


def package_dir():
    return pathlib.Path(tack.__file__).resolve().parent


def test_the_package_is_typed():
    assert (package_dir() / "py.typed").exists()
    assert (package_dir() / "_tack.pyi").exists()


def test_the_stub_is_what_stubgen_makes():
    if importlib.util.find_spec("nanobind") is None:
        pytest.skip("nanobind is not installed in this environment")
    run = subprocess.run(["bash", str(ROOT / "scripts" / "stubs"), "--check"], capture_output=True,
                         text=True, env={"PYTHON": sys.executable, "PATH": "/usr/bin:/bin"},
                         timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.parametrize("name", [
    "empty", "zeros", "ones", "full", "empty_like", "zeros_like", "copyto", "device",
    "set_default_device", "get_backend", "from_dlpack", "array_from_ptr", "memory_space", "dtype",
    "set_debug", "set_log_level", "asarray", "arange", "ones_like", "full_like", "kernel", "func",
    "inspect",
])
def test_public_functions_have_names_and_docstrings(name):
    f = getattr(tack, name)
    doc = f.__doc__ or ""
    assert "arg0" not in doc, doc
    assert len(doc.strip()) > 20, f"tack.{name} has no docstring: {doc!r}"


def test_array_methods_have_docstrings():
    for name in ("numpy", "fill", "reshape", "copy", "astype", "sum", "min", "max", "mean",
                 "item", "tolist", "shape", "dtype", "strides", "T", "__array__"):
        doc = getattr(tack.Array, name).__doc__ or ""
        assert len(doc.strip()) > 15, f"Array.{name}: {doc!r}"


def test_mypy_strict_on_a_user_script(tmp_path):
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (pip install '.[test]' installs it)")
    script = tmp_path / "user.py"
    script.write_text(USER_SCRIPT)
    run = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(script)],
                         capture_output=True, text=True,
                         cwd=tmp_path, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    # And it runs as written.
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         cwd=tmp_path, timeout=300)
    assert run.returncode == 0, run.stderr


def test_the_builtins_stub_names_every_builtin():
    from tack import _builtins

    stub = (package_dir() / "_builtins.pyi").read_text()
    declared = {line.split(":")[0] for line in stub.splitlines()
                if line.endswith(": Builtin")}
    assert declared == set(_builtins._names)
    exported = {line.strip().strip('",') for line in stub.split("__all__ = [")[1].splitlines()
                if line.strip().startswith('"')}
    assert exported == set(_builtins.__all__)
