// The HIP backend: generated HIP C compiled by hipRTC to a code object for the device's
// architecture, loaded with hipModuleLoadData, launches queued with hipModuleLaunchKernel on one
// stream per device, buffers from hipMalloc. See docs/backends.md.
#pragma once

#include <memory>
#include <string>

#include "backends/backend.hpp"

namespace tack::hip {

// Not asked by memory_space() yet (which answers "cpu" for this memory), nor exchanged through
// DLPack from C++ (the Python bindings lend it).
BackendInfo declared_info();
// Loads libamdhip64 (in its own link namespace), checks hipInit, and lists the devices.
detail::Probe probe();

// The artifact the backend stores in the disk cache for `k` on a device of architecture `arch`
// (gfx90a...): the code object hipRTC makes. The backend's own compile path, exposed so that it
// can be tested on a machine with hipRTC and no GPU. Throws DeviceError when hipRTC is missing or
// refuses the source.
std::string compile_artifact(const ir::Kernel& k, const detail::CompileOptions& options,
                             const std::string& arch);
// Whether `artifact` looks like a code object (an ELF file), before it is handed to the driver.
bool is_code_object(const std::string& artifact);
// The architecture name in a hipDeviceProp_t (`gcnArchName`), found by its form: the struct's
// layout differs between ROCm releases. "" when there is none.
std::string find_arch_name(const char* props, size_t bytes);

}  // namespace tack::hip
