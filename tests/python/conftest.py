"""Shared set-up of the Python tests: a kernel cache of their own, and the kernels files that the C++
tests use too (tests/kernels/*.py, examples/kernels.py) importable as modules."""
import os
import pathlib
import sys
import tempfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
KERNEL_DIRS = [ROOT / "tests" / "kernels", ROOT / "examples"]

# Before tack is imported anywhere: the tests neither read nor fill the user's cache.
if "TACK_CACHE_DIR" not in os.environ:
    os.environ["TACK_CACHE_DIR"] = tempfile.mkdtemp(prefix="tack-pytest-cache-")
for d in KERNEL_DIRS:
    if str(d) not in sys.path:
        sys.path.insert(0, str(d))


@pytest.fixture
def rng():
    import numpy as np

    return np.random.default_rng(20240601)


@pytest.fixture
def debug_mode():
    import tack

    tack.set_debug(True)
    try:
        yield
    finally:
        tack.set_debug(False)


@pytest.fixture
def subprocess_env():
    """The environment for a child Python that must import the same tack as this process."""
    import tack

    env = dict(os.environ)
    package_parent = str(pathlib.Path(tack.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join([package_parent] + [str(d) for d in KERNEL_DIRS])
    return env
