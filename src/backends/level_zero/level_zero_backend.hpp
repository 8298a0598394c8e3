// The Level Zero backend: generated OpenCL C compiled by libocloc to SPIR-V and a native binary
// for the device, modules from the native binary (the SPIR-V when it is refused), launches queued
// on an asynchronous immediate command list per device, buffers from zeMemAllocDevice. See
// docs/backends.md.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.hpp"

namespace tack::level_zero {

// Not asked by memory_space() yet (which answers "cpu" for this memory), nor exchanged through
// DLPack from C++ (the Python bindings lend it).
BackendInfo declared_info();
// Loads the loader, checks zeInit before anything else, and lists the GPU devices of every
// driver, asking each for its module properties.
detail::Probe probe();

// What the backend declares, from each device's zeDeviceGetModuleProperties flags: every dtype,
// and f64 only when every device sets ZE_DEVICE_MODULE_FLAG_FP64. supports_f64() is derived from
// supported_dtypes, so the two cannot disagree. `images`: every device has 2-D and 3-D images and
// samplers (zeDeviceGetImageProperties), so textures are sampled in hardware.
BackendInfo make_info(const std::vector<uint32_t>& module_flags, int max_group_size,
                      bool images = false);

// The artifact the backend stores in the disk cache for `k` on `device` (an ocloc device name
// such as pvc, or a PCI id such as 0x0bd5): the native binary and the SPIR-V to fall back on.
// The backend's own compile path, exposed so that it can be tested with libocloc and no GPU.
std::string compile_artifact(const ir::Kernel& k, const detail::CompileOptions& options,
                             const std::string& device);
// Splits an artifact; false when it is malformed.
bool unpack_artifact(const std::string& artifact, std::string& native, std::string& spirv);
// ocloc's options for every build: exact arithmetic.
std::string build_options();

}  // namespace tack::level_zero
