// Where this process stands among the processes a launcher (mpirun, mpiexec, srun) started on the
// same node: its node-local rank and the node-local process count, read from the variables the
// launchers set. The CPU backend's thread pool sizes itself with it and the runtime picks a
// process's device with it (tack::local_device): it lives here, below the runtime, header-only.
#pragma once

#include <charconv>
#include <cstdlib>
#include <optional>
#include <string_view>

namespace tack::detail {

// A whole number >= `least`, or nullopt for an unset, empty or malformed value.
inline std::optional<int> launcher_number(const char* name, int least) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return std::nullopt;
  std::string_view s(text);
  if (s.front() < '0' || s.front() > '9') return std::nullopt;
  int value = 0;
  auto [end, err] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (err != std::errc() || end != s.data() + s.size() || value < least) return std::nullopt;
  return value;
}

// Open MPI's, MPICH's (Hydra) and Slurm's node-local rank, in that order; nullopt when no launcher
// set one (a process started on its own).
inline std::optional<int> node_local_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
    if (auto v = launcher_number(name, 0)) return v;
  return std::nullopt;
}

// The number of processes the launcher started on this node; nullopt when none says.
// SLURM_NTASKS_PER_NODE is set only when the job asked for a fixed count per node.
inline std::optional<int> node_local_size() {
  for (const char* name :
       {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"})
    if (auto v = launcher_number(name, 1)) return v;
  return std::nullopt;
}

}  // namespace tack::detail
