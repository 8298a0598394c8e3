#include "backends/registry.hpp"

#include "backends/cpu/cpu_backend.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/hip/hip_backend.hpp"
#include "backends/level_zero/level_zero_backend.hpp"
#include "backends/metal/metal_backend.hpp"
#include "backends/opencl/opencl_backend.hpp"

namespace tack::backends {

std::span<const BackendEntry> backend_table() {
  // The CPU first: it always runs, and is the default device.
  static const BackendEntry table[] = {
      {"cpu", cpu::declared_info, cpu::probe},
      {"cuda", cuda::declared_info, cuda::probe},
      {"hip", hip::declared_info, hip::probe},
      {"level_zero", level_zero::declared_info, level_zero::probe},
      {"metal", metal::declared_info, metal::probe},
      {"opencl", opencl::declared_info, opencl::probe},
  };
  return table;
}

}  // namespace tack::backends
