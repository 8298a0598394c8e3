// The OpenCL backend: generated OpenCL C built with clBuildProgram, launches queued on one
// in-order command queue per device, buffers as cl_mem. Loaded through the ICD loader with
// dlopen; see docs/backends.md.
#pragma once

#include <memory>
#include <string>

#include "runtime/backend.hpp"

namespace tack::opencl {

struct Probe {
  std::unique_ptr<detail::Backend> backend;  // null when OpenCL cannot run here
  std::string reason;                        // why, and what to install
};

// Loads the ICD loader and lists the GPU and CPU devices of every platform.
Probe make_opencl_backend();

}  // namespace tack::opencl
