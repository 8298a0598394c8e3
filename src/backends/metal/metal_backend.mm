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
#include <atomic>
#include <cstring>
#include <mutex>
#include <vector>

#include "backends/gpu/address_map.hpp"
#include "backends/gpu/gpu_backend.hpp"
#include "backends/gpu/texture_objects.hpp"
#include "backends/metal/metal_source.hpp"
#include "tack/error.hpp"

namespace tack::metal {
namespace {

struct DeviceState : backends::GpuDevice {
  id<MTLDevice> device = nil;
  id<MTLCommandQueue> queue = nil;
  id<MTLCommandBuffer> open = nil;  // encoding; not yet committed
  // Committed since the last wait: buffers of one queue run in order, and each may have failed.
  std::vector<id<MTLCommandBuffer>> committed;
  id<MTLBuffer> no_record = nil;  // bound where a variant has no debug record
  int launches = 0;               // encoded into `open`
  std::mutex mutex;
};

struct MetalCode : backends::GpuCode {
  id<MTLLibrary> library = nil;
  id<MTLComputePipelineState> main = nil;
  id<MTLComputePipelineState> result = nil;  // `<entry>_result`, kernels with a `return` value
};

std::string describe(NSError* error) {
  return error ? std::string([[error localizedDescription] UTF8String]) : "unknown error";
}

class MetalBackend final : public backends::GpuBackend {
 public:
  MetalBackend(std::vector<std::unique_ptr<DeviceState>> devices, BackendInfo info)
      : GpuBackend(std::move(info), gpu_devices(std::move(devices)), kNoGroupLimit) {}

  void* allocate(int device, size_t bytes) override {
    id<MTLDevice> dev = device_as<DeviceState>(device).device;
    id<MTLBuffer> b = [dev newBufferWithLength:std::max<size_t>(bytes, 64)
                                       options:MTLResourceStorageModeShared];
    if (!b)
      throw DeviceError(fmt::format("Metal device {} cannot allocate {} bytes", device, bytes));
    void* p = [b contents];
    memory_.add(p, std::max<size_t>(bytes, 1), b);
    return p;
  }
  void release(int device, void* ptr) override {
    release_textures(device, ptr);
    memory_.remove(ptr);  // ARC releases the buffer
  }
  bool owns(const void* address) override { return memory_.contains(address); }

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
    return fmt::format("{}; macOS {}; safe math", device_as<DeviceState>(device).description,
                       [[[NSProcessInfo processInfo] operatingSystemVersionString] UTF8String]);
  }

  std::string compile(const ir::Kernel& k, const detail::CompileOptions& o, int) override {
    return compile_artifact(k, o);  // refuses f64 before anything is compiled
  }

  void synchronize(int device) override {
    DeviceState& d = device_as<DeviceState>(device);
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

 private:
  // ---- the GPU layer's vendor calls ----

  std::unique_ptr<backends::GpuCode> load_module(const std::string& artifact, const ir::Kernel& k,
                                                 const detail::CompileOptions&,
                                                 int device) override {
    if (!is_msl_source(artifact))
      throw DeviceError(fmt::format("kernel '{}': the cached MSL source is malformed", k.name));
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
      id<MTLDevice> dev = device_as<DeviceState>(device).device;
      auto code = std::make_unique<MetalCode>();
      code->library = [dev newLibraryWithSource:source options:options error:&error];
      if (!code->library)
        throw DeviceError(fmt::format(
            "kernel '{}': Metal could not compile the generated MSL; this is a bug in Tack's MSL "
            "generator, please report it with `tack emit --backend metal`: {}",
            k.name, describe(error)));
      return code;
    }
  }

  // One compute pipeline per entry. The main entry's thread limit (a pipeline under a
  // collective's 256 lanes cannot run it) is the code's group limit.
  std::string find_entry(backends::GpuCode& base, const std::string& name, backends::Entry which,
                         int device) override {
    auto& code = static_cast<MetalCode&>(base);
    @autoreleasepool {
      id<MTLFunction> f = [code.library newFunctionWithName:@(name.c_str())];
      if (!f) return "the MSL library has no function of that name";
      NSError* error = nil;
      id<MTLDevice> dev = device_as<DeviceState>(device).device;
      id<MTLComputePipelineState> p = [dev newComputePipelineStateWithFunction:f error:&error];
      if (!p) return "Metal could not make a pipeline: " + describe(error);
      if (which == backends::Entry::Result) {
        code.result = p;
        return "";
      }
      code.main = p;
      NSUInteger limit = p.maxTotalThreadsPerThreadgroup;
      code.max_group = static_cast<int>(std::min<NSUInteger>(limit, INT_MAX));
      code.default_group = static_cast<uint32_t>(std::min<NSUInteger>(64, limit));
      return "";
    }
  }

  void enqueue(backends::GpuCode& base, int device, const std::vector<backends::Dispatch>& ds,
               const ir::Kernel&) override {
    auto& code = static_cast<MetalCode&>(base);
    DeviceState& d = device_as<DeviceState>(device);
    std::lock_guard lock(d.mutex);
    @autoreleasepool {
      for (const backends::Dispatch& dispatch : ds)
        encode(d, dispatch.entry == backends::Entry::Main ? code.main : code.result, dispatch);
    }
  }

  // ---- hardware textures: an MTLTexture of 32-bit floats per texture, filled by the host from
  // the texels' shared storage once the work queued before has run. The sampler (normalized
  // coordinates, clamp to edge, linear) is the generated MSL's constexpr sampler. ----

  uint64_t create_texture(int device, const void* texels,
                          const backends::TextureShape& shape) override {
    @autoreleasepool {
      MTLTextureDescriptor* desc = [[MTLTextureDescriptor alloc] init];
      desc.textureType = shape.dims == 3 ? MTLTextureType3D : MTLTextureType2D;
      desc.pixelFormat = MTLPixelFormatR32Float;
      desc.width = static_cast<NSUInteger>(shape.width);
      desc.height = static_cast<NSUInteger>(shape.height);
      desc.depth = shape.dims == 3 ? static_cast<NSUInteger>(shape.depth) : 1;
      desc.usage = MTLTextureUsageShaderRead;
      id<MTLTexture> texture =
          [device_as<DeviceState>(device).device newTextureWithDescriptor:desc];
      if (!texture)
        throw DeviceError(fmt::format(
            "Metal device {} cannot make a {}-D texture of {} x {} x {} floats (Metal's limit is "
            "2048 per side in 3-D, 16384 in 2-D): use interp=\"linear_exact\" for larger ones",
            device, shape.dims, shape.width, shape.height, shape.depth));
      fill_texture(device, texture, texels, shape);
      const uint64_t handle = ++last_texture_;
      textures_.add(handle, texture);
      return handle;
    }
  }

  void refill_texture(int device, uint64_t handle, const void* texels,
                      const backends::TextureShape& shape) override {
    fill_texture(device, textures_.at(handle), texels, shape);
  }

  // A command buffer keeps the textures it uses alive until it has run: dropping ours is enough.
  void destroy_texture(int, uint64_t handle) override {
    textures_.take(handle);
  }

  // After the queued work (which may still write the texels), the host copies them in.
  void fill_texture(int device, id<MTLTexture> texture, const void* texels,
                    const backends::TextureShape& shape) {
    synchronize(device);
    const NSUInteger row = static_cast<NSUInteger>(shape.width) * sizeof(float);
    if (shape.dims == 3) {
      [texture replaceRegion:MTLRegionMake3D(0, 0, 0, static_cast<NSUInteger>(shape.width),
                                             static_cast<NSUInteger>(shape.height),
                                             static_cast<NSUInteger>(shape.depth))
                 mipmapLevel:0
                       slice:0
                   withBytes:texels
                 bytesPerRow:row
               bytesPerImage:row * static_cast<NSUInteger>(shape.height)];
    } else {
      [texture replaceRegion:MTLRegionMake2D(0, 0, static_cast<NSUInteger>(shape.width),
                                             static_cast<NSUInteger>(shape.height))
                 mipmapLevel:0
                   withBytes:texels
                 bytesPerRow:row];
    }
  }

  std::pair<id<MTLBuffer>, size_t> resolve(const void* address) {
    auto found = memory_.find(address);
    if (!found)
      throw DeviceError(fmt::format(
          "{} is not in Metal memory: pass arrays allocated on the Metal device", address));
    return {found->handle, found->offset};
  }

  void commit(DeviceState& d) {
    if (!d.open) return;
    [d.open commit];
    d.committed.push_back(d.open);
    d.open = nil;
    d.launches = 0;
  }

  // Encodes one dispatch: every argument but the textures is a [[buffer(n)]] in the generator's
  // order; textures are [[texture(n)]], numbered from 0 on their own.
  void encode(DeviceState& d, id<MTLComputePipelineState> pipeline,
              const backends::Dispatch& dispatch) {
    if (!d.open) d.open = [d.queue commandBuffer];
    id<MTLComputeCommandEncoder> enc = [d.open computeCommandEncoder];
    [enc setComputePipelineState:pipeline];
    NSUInteger slot = 0, texture_slot = 0;
    for (const backends::KernelArg& a : dispatch.args) {
      if (a.kind == backends::KernelArg::Kind::Texture) {
        [enc setTexture:textures_.at(a.bits) atIndex:texture_slot++];
      } else if (a.kind == backends::KernelArg::Kind::Value) {
        [enc setBytes:&a.bits length:a.bytes atIndex:slot++];  // the low bytes
      } else if (a.bits) {
        auto [buffer, offset] = resolve(a.address());
        [enc setBuffer:buffer offset:offset atIndex:slot++];
      } else {  // no debug record
        if (!d.no_record)
          d.no_record = [d.device newBufferWithLength:64 options:MTLResourceStorageModeShared];
        [enc setBuffer:d.no_record offset:0 atIndex:slot++];
      }
    }
    // Whole groups: threads past the count return at once.
    [enc dispatchThreadgroups:MTLSizeMake(static_cast<NSUInteger>(dispatch.groups), 1, 1)
        threadsPerThreadgroup:MTLSizeMake(dispatch.group, 1, 1)];
    [enc endEncoding];
    if (++d.launches >= kLaunchesPerCommandBuffer) commit(d);
  }

  backends::AddressMap<id<MTLBuffer>> memory_;         // shared storage: the contents' addresses
  backends::TextureObjects<id<MTLTexture>> textures_;  // by the handle create_texture() gave
  std::atomic<uint64_t> last_texture_ = 0;
};

}  // namespace

detail::Probe probe() {
  @autoreleasepool {
    NSArray<id<MTLDevice>>* all = MTLCopyAllDevices();
    std::vector<std::unique_ptr<DeviceState>> devices;
    int max_group = 1 << 30;
    bool float_filtering = true;  // linear filtering of R32Float textures, on every device
    for (id<MTLDevice> dev in all) {
      auto d = std::make_unique<DeviceState>();
      d->device = dev;
      d->description = [[dev name] UTF8String];
      d->queue = [dev newCommandQueue];
      if (!d->queue) continue;
      max_group = std::min(max_group, static_cast<int>([dev maxThreadsPerThreadgroup].width));
      if (@available(macOS 11.0, iOS 14.0, *))
        float_filtering = float_filtering && [dev supports32BitFloatFiltering];
      else
        float_filtering = false;
      devices.push_back(std::move(d));
    }
    if (devices.empty()) {
      return {nullptr, "Metal has no device here (MTLCopyAllDevices found none)"};
    }
    // Apple GPUs have no double precision.
    BackendInfo i = backends::gpu_info(declared_info(), /*fp64=*/false,
                                       {DType::I32, DType::U32, DType::F32}, max_group);
    i.supports_hardware_textures = float_filtering;
    return {std::make_unique<MetalBackend>(std::move(devices), std::move(i)), ""};
  }
}

}  // namespace tack::metal
