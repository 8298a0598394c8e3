"""Every error path, as the Python exception the user's code sees."""
import os
import sys
import time

import numpy as np
import pytest

import tack
from support import line_of

import kernels


# ---- compile errors point at the user's file and line ----


@tack.kernel
def captures_a_host_value(x, out):
    for i in range(x.shape[0]):
        out[i] = x[i] * host_scale  # MARK-capture


host_scale = 2.0


def test_compile_error_points_at_the_users_file_and_line():
    x = tack.ones((4,))
    with pytest.raises(tack.CompileError) as info:
        captures_a_host_value(x, x)
    e = info.value
    assert isinstance(e, SyntaxError)
    assert e.filename == __file__
    assert e.lineno == line_of(captures_a_host_value.__wrapped__, "MARK-capture")
    assert e.line == e.lineno
    assert e.text.strip().startswith("out[i] = x[i] * host_scale")
    assert e.text[e.offset - 1:].startswith("host_scale")
    assert e.column == e.offset
    assert e.kernel == "captures_a_host_value"
    assert "host_scale" in e.message and "tack.constant" in e.hint
    assert str(e).startswith("in 'captures_a_host_value'")


def test_compile_error_in_a_kernel_defined_inside_a_function():
    @tack.kernel
    def two_loops(x):
        for i in range(x.shape[0]):
            x[i] = 1.0
        for j in range(x.shape[0]):  # MARK-second-loop
            x[j] = 2.0

    with pytest.raises(tack.CompileError) as info:
        two_loops(tack.ones((2,)))
    assert info.value.filename == __file__
    assert info.value.lineno == line_of(two_loops.__wrapped__, "MARK-second-loop")


@tack.func
def faulty_helper(v):
    return v * not_a_constant  # MARK-func-error


not_a_constant = 3.0


@tack.kernel
def calls_faulty_helper(x, out):
    for i in range(x.shape[0]):
        out[i] = faulty_helper(x[i])


def test_compile_error_in_a_device_function_points_at_the_function():
    with pytest.raises(tack.CompileError) as info:
        calls_faulty_helper(tack.ones((2,)), tack.ones((2,)))
    assert info.value.filename == __file__
    assert info.value.lineno == line_of(faulty_helper.__wrapped__, "MARK-func-error")
    assert "not_a_constant" in info.value.message


def test_syntax_the_language_rejects_is_reported_at_its_line():
    @tack.kernel
    def uses_a_lambda(x):
        for i in range(x.shape[0]):
            f = lambda v: v  # noqa: E731  MARK-lambda
            x[i] = f(x[i])

    with pytest.raises(tack.CompileError) as info:
        uses_a_lambda(tack.ones((2,)))
    assert info.value.lineno == line_of(uses_a_lambda.__wrapped__, "MARK-lambda")


def test_compile_error_reaches_the_traceback_with_the_source_line():
    import traceback

    x = tack.ones((4,))
    try:
        captures_a_host_value(x, x)
    except tack.CompileError:
        text = traceback.format_exc()
    assert f'File "{__file__}", line {line_of(captures_a_host_value.__wrapped__, "MARK-capture")}' in text
    assert "out[i] = x[i] * host_scale" in text
    assert "tack.CompileError" in text


# ---- argument mismatches: TypeError ----


def test_wrong_number_of_arguments():
    x = tack.ones((4,))
    with pytest.raises(TypeError):
        kernels.vector_add(x, x)


def test_wrong_kind_of_argument():
    x = tack.ones((4,))
    with pytest.raises(TypeError, match="argument 2"):
        kernels.vector_add(x, "y", x)
    with pytest.raises(TypeError):
        kernels.vector_add(x, [1.0, 2.0], x)
    with pytest.raises(TypeError, match="by position"):
        kernels.vector_add(x, x, out=x)


def test_wrong_rank():
    x = tack.ones((4,))
    with pytest.raises(TypeError):
        kernels.vector_add(x, x, tack.ones((2, 2)))


def test_unsupported_dtype_for_an_argument():
    with pytest.raises(TypeError):
        kernels.vector_add(tack.ones((2,)), np.zeros(2, np.complex64), tack.ones((2,)))


def test_integer_too_large():
    x = tack.ones((4,))
    with pytest.raises(TypeError, match="range"):
        kernels.saxpy(2**64, x, x, x)


def test_a_kernel_without_source_text_is_a_compile_error():
    namespace = {"tack": tack}
    exec("@tack.kernel\ndef typed_at_a_prompt(x):\n    for i in range(x.shape[0]):\n"
         "        x[i] = 0.0\n", namespace)
    with pytest.raises(tack.CompileError, match="source") as info:
        namespace["typed_at_a_prompt"](tack.ones((2,)))
    assert info.value.kernel == "typed_at_a_prompt" and info.value.filename == "<string>"


# A kernels file as Python reads it, whatever its encoding and line endings: the source text the
# compiler gets (read directly for plain UTF-8, through linecache otherwise) is Python's, so kernels
# compile and errors point at the lines Python numbers.
@pytest.mark.parametrize("encoding, newline, prefix", [
    ("utf-8", "\n", b""),
    ("utf-8", "\r\n", b""),
    ("utf-8", "\r", b""),
    ("utf-8", "\n", b"\xef\xbb\xbf"),
    ("latin-1", "\n", b"# -*- coding: latin-1 -*-\n"),
])
def test_kernels_files_of_every_encoding_and_line_ending(tmp_path, encoding, newline, prefix):
    import importlib.util

    lines = [
        "import tack",
        "# caf\u00e9, na\u00efve",
        "@tack.kernel",
        "def double(x, out):",
        "    for i in range(x.shape[0]):",
        "        out[i] = x[i] * 2.0",
        "@tack.kernel",
        "def broken(x):",
        "    for i in range(x.shape[0]):",
        "        x[i] = undefined_name",
        "",
    ]
    path = tmp_path / f"kernels_{encoding}_{len(newline)}_{len(prefix)}_{ord(newline[0])}.py"
    path.write_bytes(prefix + newline.join(lines).encode(encoding))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x = tack.asarray(np.arange(8, dtype=np.float32))
    out = tack.empty_like(x)
    module.double(x, out)
    assert out.numpy().tolist() == [2.0 * i for i in range(8)]
    with pytest.raises(tack.CompileError) as info:
        module.broken(x)
    first = 2 if prefix.startswith(b"#") else 1
    assert info.value.lineno == first + lines.index("        x[i] = undefined_name")
    assert info.value.filename == str(path)


def test_the_core_reads_only_plain_utf8_kernels_files(tmp_path):
    # tack._tack._definition_in_file reads a kernels file where Python would read the same text
    # from it, and otherwise answers None, so that Python reads it (linecache).
    from tack import _tack

    text = "import tack\n\n@tack.kernel\ndef k(x):\n    x[0] = 1.0\n\nY = 2\n"
    cases = {
        "plain.py": text.encode(),
        "bom.py": b"\xef\xbb\xbf" + text.encode(),
        "crlf.py": text.replace("\n", "\r\n").encode(),
        "coding.py": ("# -*- coding: latin-1 -*-\n" + text).encode(),
        "invalid.py": text.encode() + b"# \xff\n",
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
    plain = str(tmp_path / "plain.py")
    assert _tack._definition_in_file(plain, 3) == _tack._definition_at(text, 3)
    assert _tack._definition_in_file(plain, 3).startswith("@tack.kernel\ndef k(x):")
    assert _tack._definition_in_file(plain, 2) is None  # no definition starts there
    for name in ("bom.py", "crlf.py", "coding.py", "invalid.py"):
        assert _tack._definition_in_file(str(tmp_path / name), 3) is None, name
    assert _tack._definition_in_file(str(tmp_path / "missing.py"), 1) is None
    assert _tack._definition_in_file(str(tmp_path), 1) is None  # a directory
    fifo = tmp_path / "fifo.py"
    os.mkfifo(fifo)
    assert _tack._definition_in_file(str(fifo), 1) is None  # answered without waiting for a writer
    assert _tack._definition_in_file("<string>", 1) is None
    assert _tack._definition_in_file("bad\udcffname.py", 1) is None


def test_a_kernels_file_kept_from_an_earlier_read_is_read_again_once_changed(tmp_path):
    # The core keeps a kernels file's text for the file's other kernels, but only once the file
    # has not changed for more than 2 s (a change within its timestamps' granularity could go
    # unseen), and reads it again when it changes, even to the same size and modification time.
    from tack import _tack

    path = tmp_path / "kept.py"
    text = "import tack\n\n@tack.kernel\ndef k(x):\n    x[0] = 1.0\n\ndef j(x):\n    x[1] = 1.0\n"
    path.write_text(text)
    time.sleep(3.1)  # unchanged for more than 2 s: kept from now on
    for _ in range(2):  # read, then kept
        for line in (3, 7, 2):  # two definitions, and a line where none starts
            assert _tack._definition_in_file(str(path), line) == _tack._definition_at(text, line)
    assert _tack._definition_in_file(str(path), 7).startswith("def j(x):")
    modified = path.stat().st_mtime_ns
    path.write_text(text.replace("1.0", "2.0"))
    os.utime(path, ns=(modified, modified))
    assert "x[0] = 2.0" in _tack._definition_in_file(str(path), 3)
    replacement = tmp_path / "replacement.py"
    replacement.write_text(text.replace("1.0", "3.0"))
    os.replace(replacement, path)
    assert "x[0] = 3.0" in _tack._definition_in_file(str(path), 3)
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    assert _tack._definition_in_file(str(path), 3) is None  # not plain now: Python reads it
    path.unlink()
    assert _tack._definition_in_file(str(path), 3) is None


def test_func_and_builtins_are_not_host_callables():
    @tack.func
    def helper(v):
        return v

    with pytest.raises(TypeError, match="tack.func"):
        helper(1)
    with pytest.raises(TypeError, match="kernel language"):
        tack.sqrt(2.0)
    with pytest.raises(TypeError, match="kernel language"):
        tack.ndrange(3)
    with pytest.raises(TypeError):
        tack.kernel(42)


def test_bad_constants():
    with pytest.raises(TypeError, match="number"):
        tack.constant("three")
    with pytest.raises(ValueError):
        tack.constant(2**64)
    with pytest.raises(TypeError):
        tack.constant(1, dtype="f16x")


def test_bad_shapes_and_dtypes():
    with pytest.raises(ValueError):
        tack.empty((-1, 2))
    with pytest.raises(TypeError):
        tack.empty("abc")
    with pytest.raises(TypeError):
        tack.empty((2,), dtype="no-such-type")


# ---- contract violations at launch: ValueError ----


def test_read_only_output_is_refused_before_launch():
    x = tack.ones((4,))
    frozen = np.full(4, 5.0, np.float32)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        kernels.vector_add(x, x, frozen)
    assert frozen.tolist() == [5.0] * 4
    ro = tack.array_from_ptr(np.zeros(4, np.float32).ctypes.data, (4,), tack.f32)
    with pytest.raises(ValueError, match="read-only"):
        kernels.vector_add(x, x, ro)
    kernels.vector_add(frozen, frozen, x)  # read-only inputs are fine
    assert x.numpy().tolist() == [10.0] * 4


@tack.kernel
def stepped(out, step):
    for i in range(0, out.shape[0], step):
        out[i] = 1.0


def test_non_positive_step_is_a_value_error():
    with pytest.raises(ValueError, match="step"):
        stepped(tack.zeros((4,)), 0)


# ---- debug mode: IndexError ----


@tack.kernel
def reads_past_the_end(x, out):
    for i in range(out.shape[0]):
        out[i] = x[i + 1]  # MARK-oob


def test_index_error_in_debug_mode(debug_mode):
    x = tack.arange(4)
    out = tack.full((4,), -1.0)
    with pytest.raises(IndexError) as info:
        reads_past_the_end(x, out)
    message = str(info.value)
    assert "reads_past_the_end" in message and "'x'" in message and "4" in message
    assert f":{line_of(reads_past_the_end.__wrapped__, 'MARK-oob')}:" in message


def test_debug_mode_in_a_new_process_from_the_environment(subprocess_env, tmp_path):
    import subprocess

    script = tmp_path / "oob.py"
    script.write_text(
        "import tack\n"
        "@tack.kernel\n"
        "def k(x):\n"
        "    for i in range(x.shape[0]):\n"
        "        x[i + 1] = 0.0\n"
        "try:\n"
        "    k(tack.zeros((3,)))\n"
        "except IndexError as e:\n"
        "    print('IndexError', e)\n"
    )
    env = dict(subprocess_env, TACK_DEBUG="1")
    run = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("IndexError") and f"{script}:5:" in run.stdout


# ---- devices: DeviceError and ValueError ----


def test_unavailable_backend_is_a_device_error():
    unavailable = [name for name, available, _ in tack.backend_status() if not available]
    # Metal is never available on Linux; cuda and opencl are where their drivers are installed.
    assert "metal" in unavailable
    for name in unavailable:
        with pytest.raises(tack.DeviceError):
            tack.device(name)
    with pytest.raises(tack.DeviceError):
        tack.set_default_device("metal")
    with pytest.raises(tack.DeviceError):
        tack.zeros((2,), device="metal:1")
    assert issubclass(tack.DeviceError, RuntimeError)
    assert tack.get_default_device() == tack.device("cpu")


def test_unknown_device_names_are_value_errors():
    with pytest.raises(ValueError):
        tack.device("tpu")
    with pytest.raises(ValueError):
        tack.device("cpu:x")
    with pytest.raises(tack.DeviceError):
        tack.device("cpu:3")


def test_from_dlpack_of_device_memory_is_a_device_error():
    class FakeCuda:
        def __init__(self):
            self.a = np.zeros(3, np.float32)

        def __dlpack__(self, **kwargs):
            return self.a.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return (2, 0)  # kDLCUDA

    try:
        t = tack.from_dlpack(FakeCuda())
    except (tack.DeviceError, BufferError, TypeError, ValueError, RuntimeError) as e:
        assert "device" in str(e).lower() or "dlpack" in str(e).lower()
    else:  # the importer went by the capsule's own device, which says CPU
        assert t.device == tack.device("cpu")
