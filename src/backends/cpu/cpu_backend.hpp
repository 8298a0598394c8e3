// The CPU backend: LLVM-compiled kernels run over a persistent thread pool, in host memory.
#pragma once

#include <memory>

#include "backends/backend.hpp"

namespace tack::cpu {

// Host memory: the addresses no other backend claims, lent and taken through DLPack as kDLCPU.
BackendInfo declared_info();
// The CPU backend, which always runs.
detail::Probe probe();

}  // namespace tack::cpu
