// The contract every backend implements, and nothing else: the runtime (src/runtime) is written
// once above it (dispatch checks, specialization, caching, debug reports), and a backend sees
// only this header of the runtime's side. Adding a backend is a folder under src/backends and a
// row in registry.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/ir.hpp"
#include "tack/device.hpp"

namespace tack::detail {

// A variant's code, loaded and ready to launch. Backends derive their handle from it.
struct LoadedCode {
  virtual ~LoadedCode() = default;
  // The kernel has stores that a build for streaming launches (CompileOptions::streams) writes
  // differently; where it has none, either build serves every launch.
  bool has_streamed_stores = false;
};

struct CompileOptions {
  bool no_alias = false;      // arrays were checked at the call not to overlap
  bool streams = false;       // for launches that stream stores past the caches (Backend::streams)
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
  // The texels at `data` (a texture's snapshot, from allocate()) were rewritten: a backend that
  // keeps an image of them (hardware textures) refreshes it before the next launch reads it.
  virtual void texels_changed(int device, const void* data) {}

  // Code. The target string goes into the cache key: architecture, compiler and driver versions.
  virtual std::string cache_target(int device) = 0;
  virtual std::string compile(const ir::Kernel& k, const CompileOptions& options, int device) = 0;
  // `stored_at`: the disk cache's file that begins with `artifact` (DiskCache::load), or empty
  // for an artifact just compiled.
  virtual std::unique_ptr<LoadedCode> load(const std::string& artifact, const ir::Kernel& k,
                                           const CompileOptions& options, int device,
                                           const std::string& stored_at) = 0;
  // Whether this launch should run the build that streams stores past the caches (the CPU's, for
  // arrays larger than its caches): a second build, made when a launch first needs it, because
  // one build that chose at run time would be twice the code to compile.
  virtual bool streams(const ir::Kernel& k, const LaunchArgs& args) { return false; }
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

// What a backend declares before it is probed (registry.hpp), and its probed info() starts from:
// its name and label, what memory_space() answers for its memory, the addresses memory_space()
// asks it about, and its DLPack device type (0: none).
inline BackendInfo declared(std::string name, std::string label,
                            std::vector<std::string> memory_spaces,
                            BackendInfo::Addresses claims = BackendInfo::Addresses::None,
                            int dlpack_device_type = 0) {
  BackendInfo i;
  i.name = std::move(name);
  i.label = std::move(label);
  i.device_memory_spaces = std::move(memory_spaces);
  i.claims_addresses = claims;
  i.dlpack_device_type = dlpack_device_type;
  return i;
}

// What a backend's factory (registry.cpp) returns: the backend, or why it cannot run here.
struct Probe {
  std::unique_ptr<Backend> backend;  // null when the backend cannot run here
  std::string reason;                // why, and what to install
};

}  // namespace tack::detail
