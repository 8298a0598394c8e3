// The CUDA backend: generated CUDA C compiled by NVRTC to PTX for the device's architecture, the
// PTX loaded with cuModuleLoadData (the driver compiles it), launches queued on one stream per
// device, buffers from cuMemAlloc. The driver and NVRTC are loaded with dlopen; see
// docs/backends.md.
#pragma once

#include <memory>
#include <string>

#include "backends/backend.hpp"

namespace tack::cuda {

// Device addresses the driver recognizes (also of memory other libraries allocated), lent and
// taken through DLPack as kDLCUDA.
BackendInfo declared_info();
// Loads the driver (cuInit first), lists the devices, loads NVRTC.
detail::Probe probe();

// The pieces of compilation that need no driver, exposed so that tests can check the PTX and its
// disk-cache entry on a machine without a GPU. The backend itself uses them.

// Why NVRTC cannot be loaded, or "".
std::string nvrtc_missing();
// The cache key's target for a device of compute capability `arch` (90 for 9.0) under a driver
// of version `driver_version` (cuDriverGetVersion, 0 where there is none): the architecture,
// NVRTC's version, the driver's and the options. Throws DeviceError without NVRTC.
std::string ptx_cache_target(int arch, int driver_version);
// The artifact the disk cache holds for a variant: PTX for compute_<arch>, with entries
// `o.symbol_prefix` and, for a kernel with a return value, `<prefix>_result`. Throws DeviceError
// without NVRTC or when NVRTC refuses the generated source.
std::string compile_ptx(const ir::Kernel& k, const detail::CompileOptions& o, int arch);

}  // namespace tack::cuda
