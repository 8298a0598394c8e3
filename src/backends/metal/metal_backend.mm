// The Metal backend: MSL from the generator compiled with newLibraryWithSource (fast math off),
// one compute pipeline per entry, launches encoded into a command buffer that is committed every
// kLaunchesPerCommandBuffer launches and at every wait, buffers in shared storage (their contents
// are host addresses, so the runtime's addresses are real). Built only on Apple platforms: this
// file has not been compiled on the Linux machines this project is developed on.
#include "backends/metal/metal_backend.hpp"

#import <Foundation/Foundation.h>
#import <Metal/Metal.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "backends/metal/metal_source.hpp"
#include "tack/error.hpp"

namespace tack::metal {
namespace {

struct DeviceState {
  id<MTLDevice> device = nil;
  id<MTLCommandQueue> queue = nil;
  id<MTLCommandBuffer> open = nil;       // encoding; not yet committed
  // Committed since the last wait: buffers of one queue run in order, and each may have failed.
  std::vector<id<MTLCommandBuffer>> committed;
  id<MTLBuffer> no_record = nil;         // bound where a variant has no debug record
  int launches = 0;                      // encoded into `open`
  std::mutex mutex;
};

struct MetalCode : detail::LoadedCode {
  id<MTLComputePipelineState> main = nil;
  id<MTLComputePipelineState> result = nil;  // `<entry>_result`, kernels with a `return` value
};

std::string describe(NSError* error) {
  return error ? std::string([[error localizedDescription] UTF8String]) : "unknown error";
}

class MetalBackend final : public detail::Backend {
 public:
  MetalBackend(std::vector<std::unique_ptr<DeviceState>> devices, BackendInfo info)
      : Backend(std::move(info)), devices_(std::move(devices)) {}

  int device_count() const override { return static_cast<int>(devices_.size()); }

  void* allocate(int device, size_t bytes) override {
    id<MTLBuffer> b =
        [devices_.at(device)->device newBufferWithLength:std::max<size_t>(bytes, 64)
                                                 options:MTLResourceStorageModeShared];
    if (!b)
      throw DeviceError(fmt::format("Metal device {} cannot allocate {} bytes", device, bytes));
    void* p = [b contents];
    std::lock_guard lock(mutex_);
    memory_[reinterpret_cast<uintptr_t>(p)] = {b, std::max<size_t>(bytes, 1)};
    return p;
  }
  void release(int, void* ptr) override {
    std::lock_guard lock(mutex_);
    memory_.erase(reinterpret_cast<uintptr_t>(ptr));  // ARC releases the buffer
  }
  bool owns(const void* address) override {
    auto a = reinterpret_cast<uintptr_t>(address);
    std::lock_guard lock(mutex_);
    auto it = memory_.upper_bound(a);
    return it != memory_.begin() && a - std::prev(it)->first < std::prev(it)->second.bytes;
  }

  // Shared storage: the host reads and writes the contents directly, after the GPU's queued work
  // (a write from the host must not overtake a launch queued before it).
  void copy_to_host(int, void* dst, const void* src, size_t n) override {
    std::memcpy(dst, src, n);
  }
  void copy_from_host(int device, void* dst, const void* src, size_t n) override {
    synchronize(device);
    std::memcpy(dst, src, n);
  }
  void copy_on_device(int device, void* dst, const void* src, size_t n) override {
    synchronize(device);
    std::memmove(dst, src, n);
  }
  void fill(int device, void* dst, const void* pattern, size_t pattern_bytes,
            size_t count) override {
    synchronize(device);
    for (size_t i = 0; i < count; ++i)
      std::memcpy(static_cast<char*>(dst) + i * pattern_bytes, pattern, pattern_bytes);
  }

  std::string cache_target(int device) override {
    return fmt::format("{}; macOS {}; safe math", [[devices_.at(device)->device name] UTF8String],
                       [[[NSProcessInfo processInfo] operatingSystemVersionString] UTF8String]);
  }

  std::string compile(const ir::Kernel& k, const detail::CompileOptions& o, int) override {
    return compile_artifact(k, o);  // refuses f64 before anything is compiled
  }

  std::unique_ptr<detail::LoadedCode> load(const std::string& artifact, const ir::Kernel& k,
                                           const detail::CompileOptions& o, int device) override {
    if (!is_msl_source(artifact))
      throw DeviceError(fmt::format("kernel '{}': the cached MSL source is malformed", k.name));
    id<MTLDevice> dev = devices_.at(device)->device;
    @autoreleasepool {
      MTLCompileOptions* options = [[MTLCompileOptions alloc] init];
      // Exact arithmetic: no fast math, precise math functions.
#if defined(__MAC_OS_X_VERSION_MAX_ALLOWED) && __MAC_OS_X_VERSION_MAX_ALLOWED >= 150000
      if (@available(macOS 15.0, *)) {
        options.mathMode = MTLMathModeSafe;
        options.mathFloatingPointFunctions = MTLMathFloatingPointFunctionsPrecise;
      } else
#endif
      {
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
        options.fastMathEnabled = NO;
#pragma clang diagnostic pop
      }
      NSError* error = nil;
      NSString* source = [NSString stringWithUTF8String:artifact.c_str()];
      id<MTLLibrary> library = [dev newLibraryWithSource:source options:options error:&error];
      if (!library)
        throw DeviceError(fmt::format(
            "kernel '{}': Metal could not compile the generated MSL; this is a bug in Tack's MSL "
            "generator, please report it with `tack emit --backend metal`: {}",
            k.name, describe(error)));
      auto pipeline = [&](const std::string& name) {
        id<MTLFunction> f = [library newFunctionWithName:@(name.c_str())];
        if (!f)
          throw DeviceError(
              fmt::format("kernel '{}': the MSL library has no entry '{}'", k.name, name));
        NSError* perror = nil;
        id<MTLComputePipelineState> p = [dev newComputePipelineStateWithFunction:f error:&perror];
        if (!p)
          throw DeviceError(fmt::format("kernel '{}': Metal could not make a pipeline: {}", k.name,
                                        describe(perror)));
        return p;
      };
      auto code = std::make_unique<MetalCode>();
      code->main = pipeline(o.symbol_prefix);
      NSUInteger limit = code->main.maxTotalThreadsPerThreadgroup;
      // A pipeline whose thread limit is under a collective's 256 lanes cannot run it.
      if (k.workgroup_size > 0 && limit < static_cast<NSUInteger>(k.workgroup_size))
        throw DeviceError(fmt::format(
            "kernel '{}' runs in workgroups of {} threads{}, but its Metal pipeline allows at "
            "most {} threads per threadgroup: simplify the kernel (fewer registers) or run it on "
            "another backend",
            k.name, k.workgroup_size, k.collectives ? " with collectives" : "",
            static_cast<unsigned long>(limit)));
      if (k.result) code->result = pipeline(o.symbol_prefix + "_result");
      return code;
    }
  }

  void launch(detail::LoadedCode& base, const ir::Kernel& k, const detail::LaunchArgs& a,
              int device) override {
    auto& code = static_cast<MetalCode&>(base);
    DeviceState& d = *devices_.at(device);
    uint64_t total = detail::launch_threads(k, a);
    id<MTLBuffer> out = nil;
    {
      std::lock_guard lock(d.mutex);
      @autoreleasepool {
        if (total > 0) encode(d, code.main, k, a, nil, total);
        if (k.result && a.result) {
          out = [d.device newBufferWithLength:8 options:MTLResourceStorageModeShared];
          encode(d, code.result, k, a, out, 1);
        }
      }
    }
    if (out) {
      synchronize(device);  // the read waits for the value
      std::memcpy(a.result, [out contents], 8);
    }
  }

  void synchronize(int device) override {
    DeviceState& d = *devices_.at(device);
    std::vector<id<MTLCommandBuffer>> committed;
    {
      std::lock_guard lock(d.mutex);
      commit(d);
      committed.swap(d.committed);
    }
    if (committed.empty()) return;
    [committed.back() waitUntilCompleted];
    for (id<MTLCommandBuffer> b : committed)
      if ([b status] == MTLCommandBufferStatusError)
        throw DeviceError(fmt::format("Metal: queued work failed: {}", describe([b error])));
  }

  std::string emit(const ir::Kernel& k, const detail::CompileOptions& o, bool) override {
    return compile_artifact(k, o);
  }

 private:
  struct Memory {
    id<MTLBuffer> buffer;
    size_t bytes;
  };

  std::pair<id<MTLBuffer>, size_t> resolve(const void* address) {
    auto a = reinterpret_cast<uintptr_t>(address);
    std::lock_guard lock(mutex_);
    auto it = memory_.upper_bound(a);
    if (it == memory_.begin() || a - std::prev(it)->first > std::prev(it)->second.bytes)
      throw DeviceError(fmt::format(
          "{} is not in Metal memory: pass arrays allocated on the Metal device", address));
    --it;
    return {it->second.buffer, a - it->first};
  }

  void commit(DeviceState& d) {
    if (!d.open) return;
    [d.open commit];
    d.committed.push_back(d.open);
    d.open = nil;
    d.launches = 0;
  }

  // Encodes one dispatch: every parameter is a [[buffer(n)]] in the generator's order.
  void encode(DeviceState& d, id<MTLComputePipelineState> pipeline, const ir::Kernel& k,
              const detail::LaunchArgs& a, id<MTLBuffer> result, uint64_t threads) {
    if (!d.open) d.open = [d.queue commandBuffer];
    id<MTLComputeCommandEncoder> enc = [d.open computeCommandEncoder];
    [enc setComputePipelineState:pipeline];
    NSUInteger slot = 0;
    for (size_t p = 0; p < k.params.size(); ++p) {
      const ir::Param& param = k.params[p];
      if (param.is_local_array()) continue;
      if (param.type.is_array()) {
        auto [buffer, offset] = resolve(a.params[p].data);
        [enc setBuffer:buffer offset:offset atIndex:slot++];
        for (int dim = 0; dim < param.type.rank; ++dim)
          [enc setBytes:&a.params[p].shape[dim] length:8 atIndex:slot++];
      } else {
        [enc setBytes:&a.params[p].scalar length:dtype_size(param.type.dtype) atIndex:slot++];
      }
    }
    for (size_t dim = 0; dim < k.dims.size(); ++dim) {
      [enc setBytes:&a.start[dim] length:8 atIndex:slot++];
      [enc setBytes:&a.step[dim] length:8 atIndex:slot++];
      [enc setBytes:&a.count[dim] length:8 atIndex:slot++];
    }
    if (a.debug_record) {
      auto [buffer, offset] = resolve(a.debug_record);
      [enc setBuffer:buffer offset:offset atIndex:slot++];
    } else {
      if (!d.no_record)
        d.no_record = [d.device newBufferWithLength:64 options:MTLResourceStorageModeShared];
      [enc setBuffer:d.no_record offset:0 atIndex:slot++];
    }
    if (result) [enc setBuffer:result offset:0 atIndex:slot++];
    NSUInteger group = k.workgroup_size > 0
                           ? static_cast<NSUInteger>(k.workgroup_size)
                           : std::min<NSUInteger>(64, pipeline.maxTotalThreadsPerThreadgroup);
    if (result) group = 1;
    // Whole groups: threads past the count return at once.
    NSUInteger groups = static_cast<NSUInteger>((threads + group - 1) / group);
    [enc dispatchThreadgroups:MTLSizeMake(groups, 1, 1)
        threadsPerThreadgroup:MTLSizeMake(group, 1, 1)];
    [enc endEncoding];
    if (++d.launches >= kLaunchesPerCommandBuffer) commit(d);
  }

  std::vector<std::unique_ptr<DeviceState>> devices_;
  std::mutex mutex_;  // guards memory_
  std::map<uintptr_t, Memory> memory_;
};

}  // namespace

Probe make_metal_backend() {
  Probe probe;
  @autoreleasepool {
    NSArray<id<MTLDevice>>* all = MTLCopyAllDevices();
    std::vector<std::unique_ptr<DeviceState>> devices;
    int max_group = 1 << 30;
    for (id<MTLDevice> dev in all) {
      auto d = std::make_unique<DeviceState>();
      d->device = dev;
      d->queue = [dev newCommandQueue];
      if (!d->queue) continue;
      max_group = std::min(max_group, static_cast<int>([dev maxThreadsPerThreadgroup].width));
      devices.push_back(std::move(d));
    }
    if (devices.empty()) {
      probe.reason = "Metal has no device here (MTLCopyAllDevices found none)";
      return probe;
    }
    BackendInfo i;
    i.name = "metal";
    i.label = "Metal";
    for (DType t : kAllDTypes)
      if (t != DType::F64) i.supported_dtypes.insert(t);  // Apple GPUs have no double precision
    i.supported_atomic_dtypes = {DType::I32, DType::U32, DType::F32};
    i.supports_device_reductions = false;
    i.supports_workgroups = true;
    i.max_workgroup_size = max_group;
    i.device_memory_spaces = {"metal"};
    i.asynchronous = true;
    probe.backend = std::make_unique<MetalBackend>(std::move(devices), std::move(i));
  }
  return probe;
}

}  // namespace tack::metal
