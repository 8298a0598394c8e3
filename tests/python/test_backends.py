"""The backends of the conformance suite: each backend this build knows is either available, and
then runs a first kernel here (the suite runs on it), or is reported as skipped with its reason."""
import numpy as np
import pytest

import tack

import kernels


@pytest.mark.parametrize("name", [name for name, _, _ in tack.backend_status()])
def test_backend_runs_the_suite_or_says_why_not(name):
    status = {n: (ok, why) for n, ok, why in tack.backend_status()}
    ok, why = status[name]
    if not ok:
        assert why, f"{name} is unavailable and gives no reason"
        pytest.skip(f"{name}: {why}")
    with tack.device(name):
        x = np.arange(100, dtype=np.float32)
        out = tack.empty((100,))
        kernels.vector_add(tack.asarray(x), tack.asarray(x), out)
        np.testing.assert_array_equal(out.numpy(), x + x)
        assert out.device == tack.device(name)
