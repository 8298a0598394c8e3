// The OpenCL backend: generated OpenCL C built with clBuildProgram, launches queued on one
// in-order command queue per device, buffers as cl_mem. Loaded through the ICD loader with
// dlopen; see docs/backends.md.
#pragma once

#include <memory>
#include <string>

#include "backends/backend.hpp"

namespace tack::opencl {

// Memory behind addresses that Tack makes up (cl_mem handles), never lent through DLPack.
BackendInfo declared_info();
// Loads the ICD loader and lists the GPU and CPU devices of every platform.
detail::Probe probe();

}  // namespace tack::opencl
