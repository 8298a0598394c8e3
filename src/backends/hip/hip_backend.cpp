#include "backends/hip/hip_backend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <optional>
#include <vector>

#include "backends/gpu/address_map.hpp"
#include "backends/gpu/artifact.hpp"
#include "backends/gpu/gpu_backend.hpp"
#include "backends/gpu/texture_objects.hpp"
#include "backends/hip/hip_api.hpp"
#include "codegen/c_family/c_generator.hpp"
#include "tack/error.hpp"

namespace tack::hip {
namespace {

// AMD GPUs run blocks of up to 1024 threads; Tack's groups are 256 at most.
constexpr int kMaxBlock = 1024;
// The block size of kernels without workgroup primitives (threads past the count return).
constexpr unsigned kDefaultBlock = 256;

struct DeviceState : backends::GpuDevice {
  std::string arch;  // gcnArchName: gfx90a:sramecc+:xnack-
  hipStream_t stream = nullptr;
};

struct HipCode : backends::GpuCode {
  const HipApi* api = nullptr;
  hipModule_t module = nullptr;
  hipFunction_t main = nullptr;
  hipFunction_t result = nullptr;  // `<entry>_result`, kernels with a `return` value
  ~HipCode() override {
    if (module) api->ModuleUnload(module);
  }
};

std::string generate(const ir::Kernel& k, const detail::CompileOptions& o) {
  return backends::generated_source(k, "hip", "HIP", o.symbol_prefix);
}

class HipBackend final : public backends::GpuBackend {
 public:
  HipBackend(const HipApi& api, std::vector<std::unique_ptr<DeviceState>> devices, BackendInfo info)
      : GpuBackend(std::move(info), gpu_devices(std::move(devices)), 0x7fffffffu), api_(api) {}

  // ---- memory ----

  void* allocate(int device, size_t bytes) override {
    started(device);
    void* p = nullptr;
    hipError_t e = api_.Malloc(&p, std::max<size_t>(bytes, 64));
    if (e != 0 || !p)
      throw DeviceError(
          fmt::format("HIP device {} cannot allocate {} bytes: {}", device, bytes, api_.error(e)));
    memory_.add(p, bytes, true);
    return p;
  }

  void release(int device, void* ptr) override {
    memory_.remove(ptr);
    api_.SetDevice(device);
    release_textures(device, ptr);
    api_.Free(ptr);  // the runtime waited for the device's queued work first
  }

  bool owns(const void* address) override { return memory_.contains(address); }

  void copy_to_host(int device, void* dst, const void* src, size_t n) override {
    if (n == 0) return;
    hipStream_t s = stream(device);
    check(api_.MemcpyAsync(dst, src, n, hipMemcpyDeviceToHost, s), "reading a buffer");
    check(api_.StreamSynchronize(s), "reading a buffer");
  }
  void copy_from_host(int device, void* dst, const void* src, size_t n) override {
    if (n == 0) return;
    hipStream_t s = stream(device);
    // Waited for: the caller's host memory may go away when this returns.
    check(api_.MemcpyAsync(dst, src, n, hipMemcpyHostToDevice, s), "writing a buffer");
    check(api_.StreamSynchronize(s), "writing a buffer");
  }
  void copy_on_device(int device, void* dst, const void* src, size_t n) override {
    if (n == 0) return;
    check(api_.MemcpyAsync(dst, src, n, hipMemcpyDeviceToDevice, stream(device)),
          "copying a buffer");
  }
  void fill(int device, void* dst, const void* pattern, size_t pattern_bytes,
            size_t count) override {
    if (count == 0) return;
    hipStream_t s = stream(device);
    if (pattern_bytes == 1) {
      check(api_.MemsetD8Async(dst, *static_cast<const unsigned char*>(pattern), count, s),
            "filling a buffer");
    } else if (pattern_bytes == 2) {
      unsigned short v;
      std::memcpy(&v, pattern, 2);
      check(api_.MemsetD16Async(dst, v, count, s), "filling a buffer");
    } else if (pattern_bytes == 4) {
      int v;
      std::memcpy(&v, pattern, 4);
      check(api_.MemsetD32Async(dst, v, count, s), "filling a buffer");
    } else {
      fill_by_copies(device, dst, pattern, pattern_bytes, count);  // no memset of 8 bytes
    }
  }

  // ---- code ----

  std::string cache_target(int device) override {
    const std::string& arch = device_as<DeviceState>(device).arch;
    int rtc_major = 0, rtc_minor = 0, driver = 0;
    api_.RtcVersion(&rtc_major, &rtc_minor);
    api_.DriverGetVersion(&driver);
    return fmt::format("{}; hipRTC {}.{}; driver {}; options {}", arch, rtc_major, rtc_minor,
                       driver, fmt::join(hiprtc_options(arch), " "));
  }

  std::string compile(const ir::Kernel& k, const detail::CompileOptions& o, int device) override {
    return compile_artifact(k, o, started_as<DeviceState>(device).arch);
  }

  void synchronize(int device) override {
    DeviceState& d = device_as<DeviceState>(device);
    if (!d.stream) return;
    api_.SetDevice(device);
    check(api_.StreamSynchronize(d.stream), "finishing queued work");
  }

 private:
  // ---- the GPU layer's vendor calls ----

  std::string start(int device, backends::GpuDevice& base) override {
    auto& d = static_cast<DeviceState&>(base);
    hipError_t e = api_.SetDevice(device);
    if (e == 0) e = api_.StreamCreate(&d.stream);
    if (e == 0) return "";
    return fmt::format("HIP device {} ({}) has no stream: {}", device, d.arch, api_.error(e));
  }

  void make_current(int device, backends::GpuDevice&) override {
    api_.SetDevice(device);  // HIP's current device is per thread
  }

  std::unique_ptr<backends::GpuCode> load_module(const std::string& artifact, const ir::Kernel& k,
                                                 const detail::CompileOptions&,
                                                 int device) override {
    if (!is_code_object(artifact))
      throw DeviceError(
          fmt::format("kernel '{}': the cached HIP code object is malformed", k.name));
    auto code = std::make_unique<HipCode>();
    code->api = &api_;
    code->default_group = kDefaultBlock;
    hipError_t e = api_.ModuleLoadData(&code->module, artifact.data());
    if (e != 0)
      throw DeviceError(fmt::format("kernel '{}': HIP could not load the code object for {}: {}",
                                    k.name, device_as<DeviceState>(device).arch, api_.error(e)));
    return code;
  }

  std::string find_entry(backends::GpuCode& base, const std::string& name, backends::Entry which,
                         int) override {
    auto& code = static_cast<HipCode&>(base);
    hipFunction_t& f = which == backends::Entry::Main ? code.main : code.result;
    hipError_t e = api_.ModuleGetFunction(&f, code.module, name.c_str());
    return e == 0 ? "" : api_.error(e);
  }

  // hipModuleLaunchKernel takes a pointer to each argument's value, as CUDA does.
  void enqueue(backends::GpuCode& base, int device, const std::vector<backends::Dispatch>& ds,
               const ir::Kernel& k) override {
    auto& code = static_cast<HipCode&>(base);
    hipStream_t s = stream(device);
    for (const backends::Dispatch& d : ds) {
      backends::ArgPointers args(d.args);
      hipError_t e = api_.ModuleLaunchKernel(
          d.entry == backends::Entry::Main ? code.main : code.result,
          static_cast<unsigned>(d.groups), 1, 1, d.group, 1, 1, 0, s, args.data(), nullptr);
      if (e != 0)
        throw DeviceError(fmt::format("kernel '{}': HIP could not queue {}: {}", k.name, d.what(),
                                      api_.error(e)));
    }
  }

  // ---- hardware textures: a HIP array per texture, copied from its memory, and a texture
  // object with normalized coordinates, clamp-to-edge addressing and linear filtering (as
  // CUDA's; the generated HIP C samples it with tex3D<float>/tex2D<float>) ----

  uint64_t create_texture(int device, const void* texels,
                          const backends::TextureShape& shape) override {
    started(device);
    api_.SetDevice(device);
    HipArray3dDescriptor desc{};
    desc.width = static_cast<size_t>(shape.width);
    desc.height = static_cast<size_t>(shape.height);
    desc.depth = shape.dims == 3 ? static_cast<size_t>(shape.depth) : 0;
    desc.format = HIP_AD_FORMAT_FLOAT;
    desc.num_channels = 1;
    hipArray_t array = nullptr;
    check(api_.Array3DCreate(&array, &desc), "making a HIP array for a texture");
    HipResourceDesc resource{};
    resource.type = HIP_RESOURCE_TYPE_ARRAY;
    resource.res.array = array;
    HipTextureDesc sampling{};
    for (int& mode : sampling.address_mode) mode = HIP_TR_ADDRESS_MODE_CLAMP;
    sampling.filter_mode = HIP_TR_FILTER_MODE_LINEAR;
    sampling.flags = HIP_TRSF_NORMALIZED_COORDINATES;
    hipTextureObject_t texture = nullptr;
    try {
      refill_array(device, array, texels, shape);
      check(api_.TexObjectCreate(&texture, &resource, &sampling, nullptr),
            "making a texture object");
    } catch (...) {
      api_.ArrayDestroy(array);
      throw;
    }
    const auto handle = reinterpret_cast<uint64_t>(texture);
    arrays_.add(handle, array);
    return handle;
  }

  void refill_texture(int device, uint64_t handle, const void* texels,
                      const backends::TextureShape& shape) override {
    api_.SetDevice(device);
    refill_array(device, arrays_.at(handle), texels, shape);
  }

  // Cannot throw (release() calls it). The stream's queued work is waited for first, since the
  // runtime frees the array at once.
  void destroy_texture(int device, uint64_t handle) override {
    std::optional<hipArray_t> array = arrays_.take(handle);
    if (!array) return;
    api_.StreamSynchronize(device_as<DeviceState>(device).stream);
    api_.TexObjectDestroy(reinterpret_cast<hipTextureObject_t>(handle));
    api_.ArrayDestroy(*array);
  }

  // Queues the copy of the texels (row-major, x fastest) into the array; the extent is in
  // elements, since an array is copied.
  void refill_array(int device, hipArray_t array, const void* texels,
                    const backends::TextureShape& shape) {
    HipMemcpy3dParms copy{};
    copy.src_ptr.ptr = const_cast<void*>(texels);
    copy.src_ptr.pitch = static_cast<size_t>(shape.width) * sizeof(float);
    copy.src_ptr.xsize = static_cast<size_t>(shape.width);
    copy.src_ptr.ysize = static_cast<size_t>(shape.height);
    copy.dst_array = array;
    copy.extent = {static_cast<size_t>(shape.width), static_cast<size_t>(shape.height),
                   static_cast<size_t>(shape.depth)};
    copy.kind = hipMemcpyDeviceToDevice;
    check(api_.Memcpy3DAsync(&copy, stream(device)), "copying texels into a HIP array");
  }

  hipStream_t stream(int device) { return started_as<DeviceState>(device).stream; }

  void check(hipError_t e, const char* what) const {
    if (e != 0) throw DeviceError(fmt::format("HIP: {} failed: {}", what, api_.error(e)));
  }

  const HipApi& api_;
  backends::AddressMap<bool> memory_;            // the allocations, for owns()
  backends::TextureObjects<hipArray_t> arrays_;  // each texture object's array
};

BackendInfo make_info() {
  BackendInfo i = backends::gpu_info(
      declared_info(), true,
      {DType::I32, DType::U32, DType::I64, DType::U64, DType::F32, DType::F64}, kMaxBlock);
  i.supports_hardware_textures = true;  // every GPU ROCm runs samples 3-D textures
  return i;
}

}  // namespace

BackendInfo declared_info() {
  return detail::declared("hip", "HIP", {"hip"});
}

std::string find_arch_name(const char* props, size_t bytes) {
  // gcnArchName follows the 256-byte device name in every layout: the first field that starts
  // with "gfx", a decimal digit, and holds only [0-9a-z:+-] up to its terminator.
  for (size_t i = 256; i + 4 < bytes; ++i) {
    if (props[i - 1] != '\0' || std::strncmp(props + i, "gfx", 3) != 0 ||
        !std::isdigit(static_cast<unsigned char>(props[i + 3])))
      continue;
    size_t end = i;
    while (end < bytes && props[end] != '\0') {
      char c = props[end];
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == ':' || c == '+' || c == '-')) break;
      ++end;
    }
    if (end < bytes && props[end] == '\0') return std::string(props + i, end - i);
  }
  return "";
}

bool is_code_object(const std::string& artifact) {
  return artifact.size() > 64 && artifact.compare(0, 4,
                                                  "\x7f"
                                                  "ELF") == 0;
}

std::string compile_artifact(const ir::Kernel& k, const detail::CompileOptions& o,
                             const std::string& arch) {
  return compile_code_object(hip_api(), generate(k, o), arch, k.name);
}

detail::Probe probe() {
  const HipApi& api = hip_api();
  if (!api.runtime_missing.empty()) return {nullptr, api.runtime_missing};
  if (!api.rtc_missing.empty()) return {nullptr, api.rtc_missing};
  // hipInit first: nothing else is valid when it fails.
  api.share_environment();
  if (hipError_t e = api.Init(0); e != 0) {
    return {
        nullptr,
        fmt::format(
            "hipInit failed with {} ({} loaded): there is no AMD GPU here, or its driver (amdgpu, "
            "/dev/kfd) is not usable by this user",
            api.error(e), api.library)};
  }
  int n = 0;
  if (hipError_t e = api.GetDeviceCount(&n); e != 0 || n <= 0)
    return {nullptr, fmt::format("HIP has no device here ({})",
                                 e != 0 ? api.error(e) : std::string("hipGetDeviceCount gave 0"))};
  std::vector<std::unique_ptr<DeviceState>> devices;
  for (int i = 0; i < n; ++i) {
    auto d = std::make_unique<DeviceState>();
    std::vector<char> props(16384, '\0');  // larger than hipDeviceProp_t in any release
    if (hipError_t e = api.GetDeviceProperties(props.data(), i); e != 0)
      return {nullptr, fmt::format("HIP cannot describe device {}: {}", i, api.error(e))};
    d->arch = find_arch_name(props.data(), props.size());
    d->description = d->arch;
    if (d->arch.empty())
      return {nullptr, fmt::format("HIP device {} reports no gfx architecture", i)};
    devices.push_back(std::move(d));
  }
  return {std::make_unique<HipBackend>(api, std::move(devices), make_info()), ""};
}

}  // namespace tack::hip
