"""Tack under MPI (docs/mpi.md): arrays handed to mpi4py in place or staged, one device per rank,
the disk cache shared by the ranks of a node, and the domain-decomposed heat example, each run by
mpirun on this machine (loopback only, --oversubscribe)."""
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import tack
import tack.mpi

MPI = pytest.importorskip("mpi4py.MPI", reason="mpi4py (scripts/install-python installs it)")

ROOT = pathlib.Path(__file__).resolve().parents[2]
WORKER = ROOT / "tests" / "python" / "mpi_cache_worker.py"
HEAT = ROOT / "examples" / "mpi_heat.py"

pytestmark = pytest.mark.skipif(shutil.which("mpirun") is None,
                                reason="mpirun (openmpi-bin, scripts/install-deps installs it)")


def mpirun(np_, args, env, timeout=300, wait=True):
    cmd = ["mpirun", "-np", str(np_), "--oversubscribe", sys.executable, *map(str, args)]
    env = dict(env)
    # Root (containers) needs both; the transports stay on the loopback interface.
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl_tcp_if_include="lo", OMPI_MCA_oob_tcp_if_include="lo",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    if not wait:
        return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def kernels_module(path, count, terms):
    """A module of `count` distinct kernels of `terms` chained updates each, and their NumPy
    reference; more terms, a longer compile."""
    lines = ["import numpy as np", "import tack", ""]
    for k in range(count):
        lines += ["@tack.kernel", f"def k{k}(x, out):", "    for i in range(x.shape[0]):",
                  "        v = x[i]"]
        for t in range(terms):
            lines.append(f"        v = v * 0.5 + {(k * terms + t) % 97 / 97.0!r}")
        lines += ["        out[i] = v", ""]
    lines += [f"KERNELS = [{', '.join(f'k{k}' for k in range(count))}]", "",
              "def reference(k, x):", "    v = x.copy()",
              f"    for t in range({terms}):",
              f"        v = v * np.float32(0.5) + np.float32((k * {terms} + t) % 97 / 97.0)",
              "    return v", ""]
    path.write_text("\n".join(lines))
    return path


def run_worker(tmp_path, subprocess_env, cache, kernels, ranks, *extra):
    out = tmp_path / f"ranks-{time.monotonic_ns()}.json"
    env = dict(subprocess_env, TACK_CACHE_DIR=str(cache))
    env.pop("TACK_CACHE", None)
    env.pop("TACK_DEBUG", None)
    mpirun(ranks, [WORKER, kernels, out, *extra], env)
    return json.loads(out.read_text())


def private_dir(path):
    path.mkdir(mode=0o700)
    return path


def test_one_compile_per_kernel_for_eight_ranks_sharing_a_cache(tmp_path, subprocess_env):
    kernels = kernels_module(tmp_path / "kernels10.py", 10, 20)
    shared = run_worker(tmp_path, subprocess_env, private_dir(tmp_path / "shared"), kernels, 8)
    assert len(shared) == 8 and all(not r["wrong"] for r in shared), shared
    assert sorted(r["local_rank"] for r in shared) == list(range(8))
    assert all(r["local_size"] == 8 for r in shared)
    # One compile per kernel on the node; every other rank loaded what it stored.
    assert sum(r["compiles"] for r in shared) == 10, shared
    assert sum(r["disk_hits"] for r in shared) == 70, shared
    assert sum(r["disk_lock_timeouts"] for r in shared) == 0

    # The baseline: each rank compiles all ten in a cache of its own.
    private = run_worker(tmp_path, subprocess_env, private_dir(tmp_path / "private"), kernels, 8,
                         "--private")
    assert all(not r["wrong"] for r in private)
    assert [r["compiles"] for r in private] == [10] * 8
    assert len({r["cache_dir"] for r in private}) == 8


def lock_holders(cache):
    """{pid: lock file} for the entries' lock files under `cache` that a process holds (from
    /proc/locks, which names each flock's holder and the inode it locks)."""
    inodes = {}
    for dirpath, _, files in os.walk(cache):
        for name in files:
            if name.endswith(".lock"):
                try:
                    inodes[os.stat(os.path.join(dirpath, name)).st_ino] = name
                except FileNotFoundError:
                    pass
    if not inodes:
        return {}
    holders = {}
    with open("/proc/locks") as f:
        for line in f:
            fields = line.split()
            # "1: FLOCK  ADVISORY  WRITE 4242 00:2d:123456 0 EOF"; waiters are marked "->".
            if "->" in fields or len(fields) < 6 or fields[1] != "FLOCK":
                continue
            inode = int(fields[5].split(":")[2])
            if inode in inodes:
                holders[int(fields[4])] = inodes[inode]
    return holders


def test_a_rank_killed_while_compiling_leaves_nothing_that_loads_wrongly(tmp_path,
                                                                          subprocess_env):
    kernels = kernels_module(tmp_path / "heavy.py", 10, 300)
    cache = private_dir(tmp_path / "cache")
    env = dict(subprocess_env, TACK_CACHE_DIR=str(cache))
    env.pop("TACK_CACHE", None)
    job = mpirun(8, [WORKER, kernels, tmp_path / "killed.json"], env, wait=False)
    killed = None
    deadline = time.monotonic() + 120
    while killed is None and job.poll() is None and time.monotonic() < deadline:
        for pid, lock in lock_holders(cache).items():
            entry = cache / lock[1:-len(".lock")]
            if entry.exists():
                continue  # stored already: the holder is letting go, not compiling
            os.kill(pid, signal.SIGKILL)  # the rank holding the lock of a missing entry: compiling
            killed = (pid, lock)
            break
        time.sleep(0.001)
    output = job.communicate(timeout=120)[0]
    assert killed is not None, "no rank was seen compiling: " + output
    assert job.returncode != 0  # mpirun ends the job when a rank dies

    # The next job finds what the killed one left (a lock file, perhaps a temporary file, some
    # whole entries) and still computes every kernel right, compiling each missing one once.
    left = sorted(os.listdir(cache))
    after = run_worker(tmp_path, subprocess_env, cache, kernels, 8)
    assert all(not r["wrong"] for r in after), after
    compiles = sum(r["compiles"] for r in after)
    # The killed rank's kernel is compiled again, unless its entry was stored in the instant
    # between the look above and the kill (then the entry is whole: it was renamed into place).
    killed_entry = killed[1][1:-len(".lock")]
    assert (0 if killed_entry in left else 1) <= compiles <= 10, (killed, left, after)
    assert compiles + sum(r["disk_hits"] for r in after) == 80, after
    assert sum(r["disk_corrupt"] for r in after) == 0


def test_heat_example_on_four_ranks_equals_the_one_process_numpy_run(subprocess_env, tmp_path):
    env = dict(subprocess_env, TACK_CACHE_DIR=str(private_dir(tmp_path / "cache")))
    out = mpirun(4, [HEAT, "--n", "96", "--steps", "50"], env)
    assert "4 ranks" in out and "direct: host memory" in out and ": OK" in out, out


def test_heat_example_with_opencl_arrays_staged_through_the_host(subprocess_env, tmp_path):
    if "opencl" not in [d.type for d in tack.devices()]:
        reasons = {name: why for name, _, why in tack.backend_status()}
        pytest.skip("no OpenCL device: " + reasons["opencl"])
    env = dict(subprocess_env, TACK_CACHE_DIR=str(private_dir(tmp_path / "cache")))
    out = mpirun(2, [HEAT, "--n", "48", "--steps", "20", "--device", "opencl"], env)
    assert "opencl:0" in out and "staged:" in out and ": OK" in out, out


def test_each_rank_finds_its_node_local_rank_and_device(subprocess_env):
    program = ("from mpi4py import MPI; import tack, tack.mpi; "
               "rows = MPI.COMM_WORLD.gather((tack.mpi.local_rank(), tack.mpi.local_size(), "
               "str(tack.local_device('cpu')), str(tack.device('cpu:local')))); "
               "MPI.COMM_WORLD.Get_rank() == 0 and print(sorted(rows))")
    out = mpirun(3, ["-c", program], subprocess_env)
    assert out.strip() == str([(r, 3, "cpu:0", "cpu:0") for r in range(3)]), out


def test_cpu_arrays_go_to_mpi_in_place():
    comm = MPI.COMM_SELF
    a = tack.asarray(np.arange(12, dtype=np.float64).reshape(3, 4))
    b = tack.zeros((3, 4), tack.f64)
    # Row 1 of a into row 2 of b, by element offsets into the whole arrays: MPI writes b's memory.
    comm.Sendrecv([a, (4, 4)], dest=0, recvbuf=[b, (4, 8)], source=0)
    expected = np.zeros((3, 4))
    expected[2] = [4, 5, 6, 7]
    np.testing.assert_array_equal(b.numpy(), expected)
    assert tack.mpi.how(a) == "direct: host memory"
    with tack.mpi.buffer(b, write=True) as buf:
        assert buf is b


def test_gpu_memory_is_staged_unless_the_mpi_library_says_it_reads_it(monkeypatch):
    monkeypatch.delenv("TACK_MPI_GPU_AWARE", raising=False)
    aware, why = tack.mpi.gpu_aware("cuda")
    if MPI.Get_library_version().startswith("Open MPI") and shutil.which("ompi_info"):
        # The independent answer: ompi_info's CUDA support setting, which the query reports
        # (Debian's Open MPI is built without CUDA: false).
        info = subprocess.run(["ompi_info", "--parsable", "--all"], capture_output=True,
                              text=True).stdout
        enabled = "mca:opal:base:param:opal_cuda_support:value:true" in info
        assert aware == enabled, why
        if not enabled:
            assert "MPIX_Query_cuda_support() = 0" in why, why
    monkeypatch.setenv("TACK_MPI_GPU_AWARE", "1")
    assert tack.mpi.gpu_aware("cuda") == (True, "TACK_MPI_GPU_AWARE=1")
    # OpenCL addresses are Tack's own: never handed to MPI, whatever the setting.
    assert not tack.mpi.gpu_aware("opencl")[0]
    monkeypatch.setenv("TACK_MPI_GPU_AWARE", "0")
    assert tack.mpi.gpu_aware("cpu") == (True, "host memory")


def test_staged_buffers_copy_back_after_a_receive():
    if "opencl" not in [d.type for d in tack.devices()]:
        pytest.skip("no OpenCL device")
    comm = MPI.COMM_SELF
    src = tack.asarray(np.arange(8, dtype=np.float32), device="opencl")
    dst = tack.zeros((8,), tack.f32, device="opencl")
    assert tack.mpi.how(src).startswith("staged:")
    with tack.mpi.buffer(src) as sbuf, tack.mpi.buffer(dst, write=True) as rbuf:
        assert isinstance(sbuf, np.ndarray)
        comm.Sendrecv(sbuf, dest=0, recvbuf=rbuf, source=0)
    np.testing.assert_array_equal(dst.numpy(), np.arange(8, dtype=np.float32))
    with pytest.raises(TypeError, match="tack.Array"):
        with tack.mpi.buffer(np.zeros(3)):
            pass
    ro = tack.from_dlpack(np.zeros(3, dtype=np.float32), copy=False)
    if not ro.writable:
        with pytest.raises(ValueError, match="read-only"):
            with tack.mpi.buffer(ro, write=True):
                pass
