"""Device functions whose return values call other functions, the nesting limits, and the
messages of constant shifts, vectors stored into one element and float loop bounds: on every
backend."""
import importlib.util
import itertools

import numpy as np
import pytest

import tack

pytestmark = pytest.mark.usefixtures("backend")

_modules = itertools.count()


def load(tmp_path, source):
    """A kernels module written to a file of its own, imported (kernels need their source)."""
    path = tmp_path / f"generated_{next(_modules)}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@tack.func
def inner(v):
    return v * 2.0


@tack.func
def direct(v):
    return inner(v)


@tack.func
def plus_one(v):
    return inner(v) + 1.0


@tack.func
def branches(v):
    if v > 0.0:
        return inner(v) + 1.0
    return inner(inner(v))


@tack.func
def pair(v):
    return inner(v), plus_one(v)


@tack.kernel
def returned_calls(x, a, b, c, d, e):
    for i in range(x.shape[0]):
        a[i] = direct(x[i])
        b[i] = plus_one(x[i])
        c[i] = branches(x[i])
        d[i], e[i] = pair(x[i])


def test_return_values_that_call_other_functions():
    # The caller's frame was read after the inner call had freed it (a crash, or garbage).
    hx = np.arange(16, dtype=np.float32) - 7.5
    x = tack.asarray(hx)
    outs = [tack.empty((16,)) for _ in range(5)]
    returned_calls(x, *outs)
    a, b, c, d, e = (o.numpy() for o in outs)
    np.testing.assert_array_equal(a, hx * 2)
    np.testing.assert_array_equal(b, hx * 2 + 1)
    np.testing.assert_array_equal(c, np.where(hx > 0, hx * 2 + 1, hx * 4))
    np.testing.assert_array_equal(d, hx * 2)
    np.testing.assert_array_equal(e, hx * 2 + 1)


def call_chain(n, branch=False, terms=1):
    src = "import tack\n\n@tack.func\ndef f0(a):\n    return a + 1.0\n"
    for i in range(1, n):
        src += f"\n@tack.func\ndef f{i}(a):\n"
        if branch:
            src += f"    if a > 1000.0:\n        return f{i - 1}(a) - 1.0\n"
        src += f"    return f{i - 1}(a)" + " + a" * (terms - 1) + (" + 1.0" if terms == 1 else "")
        src += "\n"
    src += (f"\n@tack.kernel\ndef k(x, out):\n    for i in range(x.shape[0]):\n"
            f"        out[i] = f{n - 1}(x[i])\n")
    return src


@pytest.mark.parametrize("branch", [False, True])
def test_chains_of_returned_calls(tmp_path, branch):
    hx = np.arange(8, dtype=np.float32) * 300
    for n in range(2, 9):
        m = load(tmp_path, call_chain(n, branch))
        out = tack.empty((8,))
        m.k(tack.asarray(hx), out)
        step = np.where(branch & (hx > 1000), -1, 1).astype(np.float32)
        np.testing.assert_array_equal(out.numpy(), hx + 1 + (n - 1) * step, err_msg=str(n))


def test_a_long_operator_chain_is_a_compile_error(tmp_path):
    # Python itself refuses a chain of 30,000 terms (RecursionError while compiling the module);
    # 2,000 terms, or a call of 30,000 arguments, it accepts, and Tack refuses at the limit.
    for value in ["x[i]" + " + x[i]" * 1999, "max(" + ", ".join(["x[i]"] * 30000) + ")"]:
        m = load(tmp_path, "import tack\n\n@tack.kernel\ndef k(x, out):\n"
                 "    for i in range(x.shape[0]):\n        out[i] = " + value + "\n")
        with pytest.raises(tack.CompileError) as info:
            m.k(tack.empty((4,)), tack.empty((4,)))
        e = info.value
        assert e.lineno == 6 and e.kernel == "k"
        assert "more than 1000 levels" in e.message and "intermediate variables" in e.hint
        assert len(str(e)) < 2000  # the long line is shown around the column


def test_the_deepest_expression_runs(tmp_path):
    m = load(tmp_path, "import tack\n\n@tack.kernel\ndef k(x, out):\n"
             "    for i in range(x.shape[0]):\n        out[i] = x[i]" + " + x[i]" * 997 + "\n")
    hx = np.arange(8, dtype=np.float32)
    out = tack.empty((8,))
    m.k(tack.asarray(hx), out)
    np.testing.assert_array_equal(out.numpy(), hx * 998)


def test_inlining_depth(tmp_path):
    m = load(tmp_path, call_chain(100))
    hx = np.arange(8, dtype=np.float32)
    out = tack.empty((8,))
    m.k(tack.asarray(hx), out)
    np.testing.assert_array_equal(out.numpy(), hx + 100)
    m = load(tmp_path, call_chain(300))
    with pytest.raises(tack.CompileError) as info:
        m.k(tack.empty((4,)), tack.empty((4,)))
    assert "more than 100 @tack.func calls inside each other" in info.value.message
    assert info.value.kernel == "f200"


@tack.kernel
def shift_too_far(x, out):
    for i in range(x.shape[0]):
        out[i] = 1 << 70


@tack.kernel
def shift_exact(x, out):
    for i in range(x.shape[0]):
        out[i] = (1 << 40) + (x[i] << 63 >> 63)


def test_constant_shifts():
    x = tack.asarray(np.array([0, 1], dtype=np.int64))
    out = tack.empty((2,), tack.i64)
    with pytest.raises(tack.CompileError, match="overflows 64 bits"):
        shift_too_far(x, out)  # it stored 0
    shift_exact(x, out)
    np.testing.assert_array_equal(out.numpy(), [1 << 40, (1 << 40) - 1])


@tack.kernel
def copy_1d(x, out):
    for i in range(out.shape[0]):
        out[i] = x[i]


def test_a_2d_array_where_the_kernel_wants_1d():
    with pytest.raises(tack.CompileError) as info:
        copy_1d(tack.asarray(np.ones((4, 2), np.float32)), tack.empty((4,)))
    e = info.value
    assert "cannot store vec2 into one element of 'out' (an array of 1 dimension)" in e.message
    assert "more dimensions than the kernel indexes" in e.hint


@tack.kernel
def float_bound(x, n):
    for i in range(n):
        x[i] = 1.0


def test_a_float_loop_bound():
    with pytest.raises(tack.CompileError) as info:
        float_bound(tack.empty((4,)), 4.0)
    assert "bounds must be integers, not f32" in info.value.message
    assert "int(n)" in info.value.hint
