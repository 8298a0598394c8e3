// The C++ side of examples/mpi_heat.py: the 2-D heat equation over MPI ranks, each owning a band of
// rows with a ghost row above and below. MPI reads and writes the Tack arrays in place: a row is
// `a.rows(i, i + 1)`, whose `data()` and `nbytes()` are the pointer and byte count MPI_Sendrecv
// needs (host memory on the CPU; docs/mpi.md for other devices). Rank 0 checks the gathered grid
// against the same steps in plain C++, bit for bit.
//
//   mpirun -np 4 --oversubscribe build/examples/tack_mpi_heat
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "tack/tack.hpp"

namespace {

const char* const kSource = R"(
import tack

@tack.kernel
def heat_step(u, out, lo, hi, alpha):
    w = u.shape[1]
    for i, j in tack.ndrange((lo, hi), (1, w - 1)):
        c = u[i, j]
        out[i, j] = c + alpha * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * c)
)";

constexpr int kRows = 96, kCols = 64, kSteps = 50;
constexpr double kAlpha = 0.2;

std::vector<double> initial() {
  std::vector<double> u(kRows * kCols, 0.0);
  for (int i = kRows / 4; i < kRows / 2; ++i)
    for (int j = kCols / 4; j < kCols / 2; ++j) u[i * kCols + j] = 100.0;
  std::fill(u.begin(), u.begin() + kCols, 10.0);
  return u;
}

std::vector<double> reference() {
  std::vector<double> u = initial(), out = u;
  for (int s = 0; s < kSteps; ++s) {
    for (int i = 1; i < kRows - 1; ++i)
      for (int j = 1; j < kCols - 1; ++j) {
        const double c = u[i * kCols + j];
        out[i * kCols + j] = c + kAlpha * (u[(i - 1) * kCols + j] + u[(i + 1) * kCols + j] +
                                           u[i * kCols + j - 1] + u[i * kCols + j + 1] - 4.0 * c);
      }
    std::swap(u, out);
  }
  return u;
}

// Sends row `send` of `a` to `dest` while row `recv` comes from `source`.
void sendrecv_row(const tack::Array& a, int send, int dest, int recv, int source) {
  const tack::Array out = a.rows(send, send + 1), in = a.rows(recv, recv + 1);
  MPI_Sendrecv(out.data(), static_cast<int>(out.nbytes()), MPI_BYTE, dest, 0, in.data(),
               static_cast<int>(in.nbytes()), MPI_BYTE, source, 0, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int status = 0;
  try {
    tack::set_default_device(tack::local_device("cpu"));
    const int r0 = rank * kRows / size, r1 = (rank + 1) * kRows / size;
    const int local_rows = r1 - r0 + 2;  // local row k is global row r0 - 1 + k
    const std::vector<double> full = initial();
    std::vector<double> local(static_cast<size_t>(local_rows) * kCols, 0.0);
    for (int k = 0; k < local_rows; ++k) {
      const int g = r0 - 1 + k;
      if (g >= 0 && g < kRows)
        std::copy_n(full.begin() + g * kCols, kCols, local.begin() + k * kCols);
    }
    tack::Array u = tack::empty({local_rows, kCols}, tack::f64);
    tack::Array out = tack::empty({local_rows, kCols}, tack::f64);
    tack::copyto(u, local);
    tack::copyto(out, local);
    const int lo = std::max(r0, 1) - r0 + 1, hi = std::min(r1, kRows - 1) - r0 + 1;
    const int up = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    const int down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
    tack::Kernel heat_step = tack::Module::from_source(kSource, "mpi_heat.cpp").kernel("heat_step");
    for (int s = 0; s < kSteps; ++s) {
      sendrecv_row(u, 1, up, local_rows - 1, down);
      sendrecv_row(u, local_rows - 2, down, 0, up);
      heat_step(u, out, lo, hi, kAlpha);
      std::swap(u, out);
    }
    const std::vector<double> mine = u.rows(1, local_rows - 1).to_vector<double>();
    std::vector<int> counts(size), displs(size);
    for (int r = 0; r < size; ++r) {
      counts[r] = ((r + 1) * kRows / size - r * kRows / size) * kCols;
      displs[r] = r * kRows / size * kCols;
    }
    std::vector<double> grid(rank == 0 ? kRows * kCols : 0);
    MPI_Gatherv(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, grid.data(), counts.data(),
                displs.data(), MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      const bool ok = grid == reference();
      std::printf("tack_mpi_heat: %d ranks, %dx%d grid, %d steps: %s\n", size, kRows, kCols, kSteps,
                  ok ? "equal to the one-process C++ run" : "WRONG");
      status = ok ? 0 : 1;
    }
  } catch (const tack::Error& e) {
    std::fprintf(stderr, "tack_mpi_heat: %s\n", e.what());
    status = 1;
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return status;
}
