// The contract every backend implements. Everything above it (dispatch checks, specialization,
// caching, debug reports) is written once in the runtime.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/ir.hpp"
#include "tack/device.hpp"
#include "tack/kernel.hpp"

namespace tack::detail {

class Backend;

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

// A variant's code, loaded and ready to launch. Backends derive their handle from it.
struct LoadedCode {
  virtual ~LoadedCode() = default;
};

struct CompileOptions {
  bool no_alias = false;      // arrays were checked at the call not to overlap
  std::string symbol_prefix;  // unique per artifact (derived from its cache key)
};

// What a launch reads: per parameter an array (data and extents) or a scalar (bits in the
// low bytes), and per loop dimension its start, step and iteration count.
struct LaunchArgs {
  struct Param {
    void* data = nullptr;
    const int64_t* shape = nullptr;
    uint64_t scalar = 0;
  };
  std::vector<Param> params;
  std::vector<int64_t> start, step, count;
  // The codegen::DebugRecord, zeroed, when the variant checks indices: in the device's memory
  // (from allocate()), which is host memory on the CPU.
  void* debug_record = nullptr;
  // Host memory for a kernel's `return` value (8 bytes); written before launch() returns.
  void* result = nullptr;
};

// The threads a GPU backend launches for the main entry: one per iteration, or in a kernel with
// reductions one per lane of every block of ir::Reduction's order.
inline uint64_t launch_threads(const ir::Kernel& k, const LaunchArgs& a) {
  uint64_t total = 1;
  for (int64_t c : a.count) total *= static_cast<uint64_t>(c > 0 ? c : 0);
  if (!k.reductions.empty()) total = ir::reduction_partials(static_cast<int64_t>(total));
  return total;
}

// The workgroup contract at a launch (spec language.md), checked before anything runs: a kernel
// with workgroups needs a device whose groups hold Kernel::workgroup_size lanes
// (`max_workgroup_size`), and a kernel with collectives needs complete groups, so the iteration
// count (the product of `counts`) must be a multiple of the group size. Throws ValueError naming
// the kernel and what to do.
void check_workgroup_launch(const ir::Kernel& k, const std::vector<int64_t>& counts,
                            int max_workgroup_size);

class Backend {
 public:
  explicit Backend(BackendInfo info) : info_(std::move(info)) {}
  virtual ~Backend() = default;
  const BackendInfo& info() const { return info_; }
  Device device(int index) { return Device(this, index); }
  virtual int device_count() const = 0;

  // Memory. Copies to the host and from the host return when done (the runtime has waited for
  // queued launches before reading); copies on the device and fills may be queued in order.
  virtual void* allocate(int device, size_t bytes) = 0;
  virtual void release(int device, void* ptr) = 0;
  // Memory that Tack does not own (array_from_ptr), as an address in the backend's space, and
  // the end of that use. The CPU uses the pointer as it is.
  virtual void* wrap(int device, void* ptr, size_t bytes) { return ptr; }
  virtual void unwrap(int device, void* address) {}
  // Whether `address` is in memory this backend allocated (memory_space()); the CPU's is the
  // default answer.
  virtual bool owns(const void* address) { return false; }
  // What memory_space() answers for `address`: one of device_memory_spaces when the address is
  // memory of this backend's kind, else "". Backends with several kinds of memory (CUDA) ask
  // their driver.
  virtual std::string memory_space(const void* address) {
    return owns(address) ? info_.device_memory_spaces.front() : "";
  }
  virtual void copy_to_host(int device, void* dst, const void* src, size_t bytes) = 0;
  virtual void copy_from_host(int device, void* dst, const void* src, size_t bytes) = 0;
  virtual void copy_on_device(int device, void* dst, const void* src, size_t bytes) = 0;
  virtual void fill(int device, void* dst, const void* pattern, size_t pattern_bytes,
                    size_t count) = 0;

  // Code. The target string goes into the cache key: architecture, compiler and driver versions.
  virtual std::string cache_target(int device) = 0;
  virtual std::string compile(const ir::Kernel& k, const CompileOptions& options, int device) = 0;
  virtual std::unique_ptr<LoadedCode> load(const std::string& artifact, const ir::Kernel& k,
                                           const CompileOptions& options, int device) = 0;
  // Runs, or on an asynchronous backend (BackendInfo::asynchronous) queues, one launch. Errors
  // found when queuing are thrown here; errors of the running work at synchronize().
  virtual void launch(LoadedCode& code, const ir::Kernel& k, const LaunchArgs& args,
                      int device) = 0;
  // Waits until the device has run everything queued; throws DeviceError if that work failed.
  // The runtime calls it through queue.hpp, which also raises the errors queued work recorded.
  virtual void synchronize(int device) = 0;
  // The generated code for `tack emit` and inspect (before, or after, optimization).
  virtual std::string emit(const ir::Kernel& k, const CompileOptions& options, bool optimized) = 0;

 private:
  BackendInfo info_;
};

// The disk-cache key of a variant compiled for `backend` with its `target`
// (Backend::cache_target): what the runtime keys the entry with, for tests that store and find
// artifacts without a device.
std::string variant_cache_key(const ir::Kernel& k, const std::string& backend,
                              const std::string& target, int no_alias);

// The registry of backends built into this library.
Backend* find_backend(const std::string& name);

}  // namespace tack::detail
