// The CPU backend: LLVM-compiled kernels run over a persistent thread pool, in host memory.
#pragma once

#include <memory>

#include "runtime/backend.hpp"

namespace tack::cpu {

std::unique_ptr<detail::Backend> make_cpu_backend();

}  // namespace tack::cpu
