// What the Metal backend compiles and caches: MSL source. Built on every platform (only the
// runtime in metal_backend.mm needs Apple's frameworks), so that the artifact and its checks are
// tested everywhere.
#pragma once

#include <string>

#include "backends/backend.hpp"

namespace tack::metal {

// The MSL source for `k`, the artifact the disk cache holds. Refuses, before anything is
// compiled, a kernel that computes in f64 (Apple GPUs have no double precision): DeviceError
// naming the kernel and Metal.
std::string compile_artifact(const ir::Kernel& k, const detail::CompileOptions& options);
// Whether `artifact` is MSL source Tack wrote, before it is handed to newLibraryWithSource.
bool is_msl_source(const std::string& artifact);

// Commit the open command buffer after this many launches (and at every wait).
constexpr int kLaunchesPerCommandBuffer = 64;
// Collective kernels (barriers, block reductions) need pipelines of at least this many threads.
constexpr int kCollectiveGroupSize = 256;

}  // namespace tack::metal
