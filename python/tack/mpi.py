"""Tack arrays and MPI through mpi4py (>= 4): which memory MPI may read in place, and staging for
the rest. See docs/mpi.md.

An array on the CPU is host memory: pass it to mpi4py as it is (``comm.Send(a, ...)``,
``comm.Sendrecv([a, (count, offset)], ...)``); mpi4py reads it through DLPack, without a copy. An
array on another device goes through :func:`buffer`, which hands MPI the array itself when the MPI
library can read that device's memory (CUDA-aware or ROCm-aware MPI), and otherwise a host copy,
copied back into the array after a receive::

    with tack.mpi.buffer(a, write=True) as buf:
        comm.Recv(buf, source=0)

mpi4py is imported only when a function here needs it (importing it initializes MPI).
"""
import contextlib
import ctypes
import os

from . import _tack

__all__ = ["buffer", "gpu_aware", "how", "local_rank", "local_size"]


def local_rank():
    """This process's rank among those the launcher started on its node (OMPI_COMM_WORLD_LOCAL_RANK,
    MPI_LOCALRANKID, SLURM_LOCALID), or None when no launcher set one."""
    return _tack.local_rank()


def local_size():
    """How many processes the launcher started on this node (OMPI_COMM_WORLD_LOCAL_SIZE,
    MPI_LOCALNRANKS, SLURM_NTASKS_PER_NODE), or None when none says."""
    return _tack.local_size()


# The query each MPI library offers for reading a GPU backend's memory in place, by backend:
# Open MPI's MPIX_Query_cuda_support (4.0 and later) and MPIX_Query_rocm_support (5.0 and later).
_QUERIES = {"cuda": "MPIX_Query_cuda_support", "hip": "MPIX_Query_rocm_support"}
_answers = {}


def gpu_aware(kind="cuda"):
    """(bool, why): whether the MPI library mpi4py loaded reads `kind`'s device memory in place.

    TACK_MPI_GPU_AWARE=1 or 0 decides for CUDA and HIP (for an MPI library Tack cannot ask,
    such as Cray MPICH with MPICH_GPU_SUPPORT_ENABLED=1). Otherwise Open MPI is asked through
    MPIX_Query_cuda_support (CUDA) or MPIX_Query_rocm_support (HIP). OpenCL, Level Zero and Metal
    memory is never handed to MPI: Tack's OpenCL addresses are its own, and no MPI library reads
    the others here."""
    if kind == "cpu":
        return True, "host memory"
    query = _QUERIES.get(kind)
    if query is None:
        return False, f"MPI is not handed {kind} memory: staged through the host"
    forced = os.environ.get("TACK_MPI_GPU_AWARE", "").strip()
    if forced in ("0", "1"):
        return forced == "1", f"TACK_MPI_GPU_AWARE={forced}"
    if kind in _answers:
        return _answers[kind]
    answer = _ask_mpi(kind, query)
    _answers[kind] = answer
    return answer


def _ask_mpi(kind, query):
    from mpi4py import MPI

    library = MPI.Get_library_version().rstrip("\x00").splitlines()[0].strip().rstrip(",")
    try:
        # dlsym through the handle of mpi4py's extension searches the MPI library it links.
        fn = getattr(ctypes.CDLL(MPI.__file__), query)
    except (OSError, AttributeError):
        return False, (f"{library} has no {query}: Tack cannot tell whether it reads {kind} memory,"
                       " so it stages through the host (TACK_MPI_GPU_AWARE=1 says it does)")
    fn.restype = ctypes.c_int
    fn.argtypes = []
    if fn() == 1:
        return True, f"{query}() = 1 ({library})"
    return False, (f"{query}() = 0: {library} was built without {kind} support (or it is turned"
                   " off), so arrays are staged through the host")


def how(a):
    """How :func:`buffer` hands `a` to MPI: 'direct: ...' or 'staged: ...', with the reason."""
    kind = a.device.type
    direct, why = gpu_aware(kind)
    return ("direct: " if direct else "staged: ") + why


@contextlib.contextmanager
def buffer(a, *, write=False):
    """A buffer for mpi4py holding `a`'s elements: `a` itself when MPI reads its memory in place
    (the CPU; CUDA or HIP with GPU-aware MPI), else a NumPy copy read back from the device. With
    write=True (a receive), the copy is written back into `a` when the block ends; a direct buffer
    needs nothing. Queued work on `a` has finished before MPI sees it (DLPack export and read-back
    both wait)."""
    if not isinstance(a, _tack.Array):
        raise TypeError(f"tack.mpi.buffer needs a tack.Array, not {type(a).__name__}")
    if write and not a.writable:
        raise ValueError("tack.mpi.buffer(write=True): the array is read-only")
    direct, _ = gpu_aware(a.device.type)
    if direct:
        yield a
        return
    host = a.numpy()
    yield host
    if write:
        _tack.copyto(a, host)
