"""One MPI rank of the disk-cache measurement (run by test_mpi.py and docs/mpi.md under mpirun):
calls each kernel of a generated module once, checks its answer against NumPy, and reports its
cache counters and the time from a common start to the end of its first calls.

    mpirun -np 8 python tests/python/mpi_cache_worker.py KERNELS.py OUT.json [--private]

With --private each rank uses its own cache directory (TACK_CACHE_DIR/rank-N), so that every rank
compiles for itself: the baseline the shared cache is measured against. Rank 0 writes OUT.json: a
list with one record per rank."""
import importlib.util
import json
import os
import sys
import time

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
kernels_path, out_path = sys.argv[1], sys.argv[2]
if "--private" in sys.argv[3:]:
    private = os.path.join(os.environ["TACK_CACHE_DIR"], f"rank-{rank}")
    os.makedirs(private, mode=0o700, exist_ok=True)
    os.environ["TACK_CACHE_DIR"] = private

import numpy as np  # noqa: E402

import tack  # noqa: E402

spec = importlib.util.spec_from_file_location("generated_kernels", kernels_path)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)

x_host = np.linspace(0.0, 1.0, 4096, dtype=np.float32)
x = tack.asarray(x_host)
out = tack.empty_like(x)

comm.Barrier()
start = time.perf_counter()
wrong = []
for k, kernel in enumerate(module.KERNELS):
    kernel(x, out)
    if not np.allclose(out.numpy(), module.reference(k, x_host), rtol=1e-5, atol=1e-5):
        wrong.append(k)
first_calls = time.perf_counter() - start

stats = tack.cache_stats()._asdict()
record = dict(rank=rank, seconds=first_calls, wrong=wrong, cache_dir=tack.cache_dir(),
              local_rank=tack.mpi.local_rank(), local_size=tack.mpi.local_size(), **stats)
records = comm.gather(record, root=0)
if rank == 0:
    with open(out_path, "w") as f:
        json.dump(records, f)
