// What the runtime's files share beneath the public API: the memory behind arrays, the registry of
// backends, the disk-cache key of a variant and the workgroup check of a launch. Backends never
// include this header; they see only their contract (backends/backend.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.hpp"

namespace tack::detail {

// Device memory. Owned buffers are freed by their backend; wrapped ones (array_from_ptr) are
// unwrapped, never freed. `ptr` is an address in the backend's memory space: views add byte
// offsets to it, and overlap checks compare ranges of it (see docs/backends.md for OpenCL's).
struct Buffer {
  Backend* backend = nullptr;
  int device = 0;
  void* ptr = nullptr;
  size_t bytes = 0;
  bool owned = true;
  bool writable = true;
  bool exported = false;              // lent to another library (DLPack): launches complete
  std::shared_ptr<const void> owner;  // kept alive with wrapped memory (array_from_ptr)
  // Shared with another library: a launch that uses it completes before the call returns.
  bool shared() const { return !owned || exported; }
  ~Buffer();  // waits for the device's queued work first
};

// The backend `name` of this build, probed when first asked for; null when it cannot run here
// (or is not a backend).
Backend* find_backend(const std::string& name);
// What every backend of this build declares before it is probed (backends/registry.hpp), in the
// order `tack info` lists them.
std::vector<const BackendInfo*> declared_backends();

// The disk-cache key of a variant's build for `backend` with its `target`
// (Backend::cache_target): what the runtime keys the entry with, for tests that store and find
// artifacts without a device.
std::string variant_cache_key(const ir::Kernel& k, const std::string& backend,
                              const std::string& target, bool no_alias, bool streams = false);

// The workgroup contract at a launch (spec language.md), checked before anything runs: a kernel
// with workgroups needs a device whose groups hold Kernel::workgroup_size lanes
// (`max_workgroup_size`), and a kernel with collectives needs complete groups, so the iteration
// count (the product of `counts`) must be a multiple of the group size. Throws ValueError naming
// the kernel and what to do.
void check_workgroup_launch(const ir::Kernel& k, const std::vector<int64_t>& counts,
                            int max_workgroup_size);

}  // namespace tack::detail
