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

// Device memory. Owned buffers are freed by their backend; wrapped ones (array_from_ptr) are not.
struct Buffer {
  Backend* backend = nullptr;
  int device = 0;
  void* ptr = nullptr;
  size_t bytes = 0;
  bool owned = true;
  bool writable = true;
  std::shared_ptr<const void> owner;  // kept alive with wrapped memory (array_from_ptr)
  ~Buffer();
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
  void* debug_record = nullptr;  // codegen::DebugRecord, when the variant checks indices
  void* result = nullptr;        // where a kernel's `return` value goes (8 bytes)
};

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

  // Memory.
  virtual void* allocate(int device, size_t bytes) = 0;
  virtual void release(int device, void* ptr) = 0;
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
  virtual void launch(LoadedCode& code, const ir::Kernel& k, const LaunchArgs& args,
                      int device) = 0;
  virtual void synchronize(int device) = 0;
  // The generated code for `tack emit` and inspect (before, or after, optimization).
  virtual std::string emit(const ir::Kernel& k, const CompileOptions& options, bool optimized) = 0;

 private:
  BackendInfo info_;
};

// The registry of backends built into this library.
Backend* find_backend(const std::string& name);

}  // namespace tack::detail
