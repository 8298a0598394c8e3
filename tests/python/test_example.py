"""The example of the user's document runs as written, in a fresh Python process."""
import subprocess
import sys

import numpy as np

from conftest import ROOT


def test_user_document_example_prints_f64_support_and_the_sums(subprocess_env):
    run = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "vector_add.py")],
        env=subprocess_env, capture_output=True, text=True, timeout=300,
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "True"
    expected = str(np.arange(1024, dtype=np.float32) + np.float32(1))
    assert "\n".join(lines[1:]) == expected
    assert "1.000e+00 2.000e+00" in run.stdout and "1.024e+03]" in run.stdout


def test_the_same_program_in_process():
    import tack

    tack.set_default_device("cpu")
    from tack.runtime.dispatch import get_backend

    assert get_backend().supports_f64 is True

    @tack.kernel
    def vector_add(x, y, out):
        for i in range(x.shape[0]):
            out[i] = x[i] + y[i]

    x = tack.empty((1024,))
    y = tack.zeros((1024,), dtype=tack.f32)
    out = tack.empty_like(x)
    tack.copyto(x, np.arange(1024, dtype=np.float32))
    tack.copyto(y, np.ones(1024, dtype=np.float32))
    vector_add(x, y, out)
    result = out.numpy()
    assert result.dtype == np.float32
    np.testing.assert_array_equal(result, np.arange(1, 1025, dtype=np.float32))
