"""The 2-D heat equation, domain-decomposed over MPI ranks: each rank owns a band of rows of the
grid, exchanges one halo row with each neighbour per step (MPI Sendrecv on Tack arrays), and
updates its interior with a Tack kernel. Rank 0 gathers the result and checks it against the same
steps run by NumPy in one process.

    mpirun -np 4 --oversubscribe python examples/mpi_heat.py
    mpirun -np 2 python examples/mpi_heat.py --device opencl     # arrays staged through the host

Options: --n (grid side), --steps, --weak (n rows per rank instead of n in all), --device,
--no-check.
Prints one line per run: ranks, grid, steps, milliseconds per step, how MPI was handed the
arrays, and the check's result.
"""
import argparse
import sys
import time

import numpy as np
from mpi4py import MPI

import tack
import tack.mpi


@tack.kernel
def heat_step(u, out, lo, hi, alpha):
    """One explicit Euler step of u_t = laplacian(u) on rows [lo, hi), every column but the first
    and last (the fixed boundary)."""
    w = u.shape[1]
    for i, j in tack.ndrange((lo, hi), (1, w - 1)):
        c = u[i, j]
        out[i, j] = c + alpha * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * c)


def initial(rows, cols):
    """A hot square in a cold plate; the plate's edge is held at its initial value."""
    u = np.zeros((rows, cols))
    u[rows // 4: rows // 2, cols // 4: cols // 2] = 100.0
    u[0, :] = 10.0  # one warm edge, so that the boundary rows matter
    return u


def numpy_reference(u, steps, alpha):
    u = u.copy()
    for _ in range(steps):
        c = u[1:-1, 1:-1]
        new = c + alpha * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4.0 * c)
        u[1:-1, 1:-1] = new
    return u


def exchange_halos(comm, u, cols, up, down):
    """Row 1 (this rank's first) goes up while row 0 comes from above; the last owned row goes
    down while the bottom ghost row comes from below. Offsets count elements of the whole array:
    MPI reads and writes the Tack array in place (through DLPack on the CPU)."""
    last = u.shape[0] - 1
    with tack.mpi.buffer(u, write=True) as buf:
        comm.Sendrecv([buf, (cols, cols * 1)], dest=up, sendtag=0,
                      recvbuf=[buf, (cols, cols * last)], source=down, recvtag=0)
        comm.Sendrecv([buf, (cols, cols * (last - 1))], dest=down, sendtag=1,
                      recvbuf=[buf, (cols, 0)], source=up, recvtag=1)


def main():
    parser = argparse.ArgumentParser(description="The 2-D heat equation over MPI ranks")
    parser.add_argument("--n", type=int, default=256, help="grid side (rows per rank with --weak)")
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--weak", action="store_true")
    parser.add_argument("--device", default="cpu",
                        help="a backend; each rank takes its node-local device of it")
    parser.add_argument("--no-check", action="store_true")
    args = parser.parse_args()

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    dev = tack.local_device(args.device)
    rows = args.n * size if args.weak else args.n
    cols = args.n
    alpha = 0.2
    if rows < 2 * size:
        sys.exit(f"mpi_heat: {rows} rows cannot be shared by {size} ranks")

    # Rank r owns global rows [r0, r1); its array adds a ghost row above and below.
    r0, r1 = rank * rows // size, (rank + 1) * rows // size
    full = initial(rows, cols)
    local = np.zeros((r1 - r0 + 2, cols))
    g0, g1 = max(r0 - 1, 0), min(r1 + 1, rows)
    local[g0 - (r0 - 1): g1 - (r0 - 1)] = full[g0:g1]
    u = tack.asarray(local, device=dev)
    out = tack.asarray(local, device=dev)
    # The rows this rank updates, in local numbering: its own, less the plate's top and bottom edge.
    lo = max(r0, 1) - r0 + 1
    hi = min(r1, rows - 1) - r0 + 1
    up = rank - 1 if rank > 0 else MPI.PROC_NULL
    down = rank + 1 if rank < size - 1 else MPI.PROC_NULL

    heat_step(u, out, lo, hi, alpha)  # compile (or load from the cache) outside the timing
    out = tack.asarray(local, device=dev)
    comm.Barrier()
    start = time.perf_counter()
    for _ in range(args.steps):
        exchange_halos(comm, u, cols, up, down)
        heat_step(u, out, lo, hi, alpha)
        u, out = out, u
    tack.sync()
    elapsed = comm.allreduce(time.perf_counter() - start, op=MPI.MAX)

    mine = u.numpy()[1:-1]
    bands = comm.gather(mine, root=0)
    if rank != 0:
        return 0
    result = np.concatenate(bands)
    line = (f"mpi_heat: {size} ranks, {rows}x{cols} grid, {args.steps} steps, "
            f"{elapsed / args.steps * 1e3:.3f} ms/step, device {dev}, {tack.mpi.how(u)}")
    if args.no_check:
        print(line)
        return 0
    expected = numpy_reference(full, args.steps, alpha)
    diff = float(np.max(np.abs(result - expected)))
    ok = np.allclose(result, expected, rtol=1e-12, atol=1e-12)
    print(f"{line}; max |difference| from one-process NumPy {diff:.3g}: {'OK' if ok else 'WRONG'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
