"""Shared set-up of the Python tests: a kernel cache of their own, the kernels files that the C++
tests use too (tests/kernels/*.py, examples/kernels.py) importable as modules, and the backend
parameter of the conformance suite.

The conformance suite is every test module that declares `pytestmark =
pytest.mark.usefixtures("backend")`: each of its tests runs once per backend that is available on
this machine, with that backend as the default device (arrays made by tack.asarray, tack.empty...
live there, and kernels run there). A backend joins the suite by being available in
tack.backend_status(); test_backends.py reports each unavailable one as skipped, with the reason.
TACK_TEST_BACKENDS=cpu,opencl restricts the list."""
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


def conformance_backends():
    import tack

    wanted = os.environ.get("TACK_TEST_BACKENDS")
    names = [name for name, available, _ in tack.backend_status() if available]
    if wanted:
        names = [n for n in names if n in wanted.split(",")]
    return names


def pytest_generate_tests(metafunc):
    if "backend" in metafunc.fixturenames:
        metafunc.parametrize("backend", conformance_backends(), indirect=True)


@pytest.fixture
def backend(request):
    """The backend this test runs on, made the default device for the test's duration."""
    import tack

    with tack.device(request.param):
        yield request.param


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
