#include "backends/cuda/cuda_backend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "backends/cuda/cu_api.hpp"
#include "backends/gpu/artifact.hpp"
#include "backends/gpu/gpu_backend.hpp"
#include "backends/gpu/texture_objects.hpp"
#include "codegen/c_family/c_generator.hpp"
#include "tack/error.hpp"

namespace tack::cuda {
namespace {

// NVRTC, loaded once per process (also without a driver: the tests compile PTX here).
struct Nvrtc {
  NvrtcApi api;
  std::string missing;
};

const Nvrtc& nvrtc() {
  static Nvrtc* n = [] {
    auto* x = new Nvrtc();  // leaked: compiled code may be loaded during static destruction
    x->missing = x->api.load();
    return x;
  }();
  return *n;
}

const NvrtcApi& require_nvrtc() {
  const Nvrtc& n = nvrtc();
  if (!n.missing.empty()) throw DeviceError(n.missing);
  return n.api;
}

// Exact arithmetic: no contraction of a * b + c into FMAs; division and sqrt stay correctly
// rounded (NVRTC's default without --use_fast_math).
constexpr const char* kNvrtcOptions = "--fmad=false";

struct DeviceState : backends::GpuDevice {
  CUdevice id = 0;
  int arch = 0;  // compute capability, 90 for 9.0
  int max_threads = 1;
  CUcontext context = nullptr;  // the device's primary context
  CUstream stream = nullptr;    // launches, copies and fills, in order
};

struct CudaCode : backends::GpuCode {
  const CuApi* cu = nullptr;
  CUcontext context = nullptr;
  CUmodule module = nullptr;
  CUfunction main = nullptr;
  CUfunction result = nullptr;  // `<entry>_result`, kernels with a `return` value
  ~CudaCode() override {
    // Errors are ignored: at exit the driver may already be gone.
    if (module && cu->CtxSetCurrent(context) == CUDA_SUCCESS) cu->ModuleUnload(module);
  }
};

class CudaBackend final : public backends::GpuBackend {
 public:
  CudaBackend(CuApi cu, int driver_version, std::vector<std::unique_ptr<DeviceState>> devices,
              BackendInfo info)
      : GpuBackend(std::move(info), gpu_devices(std::move(devices)), 0x7fffffffu),
        cu_(cu),
        driver_version_(driver_version) {}

  // ---- memory ----

  void* allocate(int device, size_t bytes) override {
    started(device);
    CUdeviceptr p = 0;
    if (CUresult r = cu_.MemAlloc(&p, std::max<size_t>(bytes, 1)); r != CUDA_SUCCESS)
      throw DeviceError(fmt::format("CUDA device {} cannot allocate {} bytes: {}", device, bytes,
                                    cu_.error_name(r)));
    return reinterpret_cast<void*>(p);
  }

  // Cannot throw: runs in destructors, possibly at exit after the driver is gone.
  void release(int device, void* ptr) override {
    cu_.CtxSetCurrent(device_as<DeviceState>(device).context);
    release_textures(device, ptr);
    cu_.MemFree(reinterpret_cast<CUdeviceptr>(ptr));
  }

  // Memory of another library: device memory, managed memory or pinned host memory, which
  // kernels can use at the same address (unified addressing). Plain host memory cannot.
  void* wrap(int device, void* ptr, size_t bytes) override {
    started(device);
    if (space_of(ptr).empty())
      throw ValueError(fmt::format(
          "array_from_ptr: {} is not CUDA memory; a CUDA array wraps memory from cuMemAlloc "
          "(cudaMalloc), managed or pinned host memory: copy host data in with tack::copyto",
          ptr));
    return ptr;
  }

  std::string memory_space(const void* address) override {
    // The driver answers for any context, but wants one current: device 0's primary context.
    try {
      started(0);
    } catch (const DeviceError&) {
      return "";
    }
    return space_of(address);
  }

  void copy_to_host(int device, void* dst, const void* src, size_t n) override {
    if (n == 0) return;
    CUstream s = stream(device);
    check(cu_.MemcpyDtoHAsync(dst, address(src), n, s), "copying to the host");
    check(cu_.StreamSynchronize(s), "copying to the host");
  }
  void copy_from_host(int device, void* dst, const void* src, size_t n) override {
    if (n == 0) return;
    CUstream s = stream(device);
    // Waited for: the caller's host memory may go away when this returns.
    check(cu_.MemcpyHtoDAsync(address(dst), src, n, s), "copying from the host");
    check(cu_.StreamSynchronize(s), "copying from the host");
  }
  void copy_on_device(int device, void* dst, const void* src, size_t n) override {
    if (n == 0) return;
    check(cu_.MemcpyDtoDAsync(address(dst), address(src), n, stream(device)),
          "copying on the device");
  }
  void fill(int device, void* dst, const void* pattern, size_t pattern_bytes,
            size_t count) override {
    if (count == 0) return;
    CUstream s = stream(device);
    CUdeviceptr d = address(dst);
    if (pattern_bytes == 1) {
      unsigned char v;
      std::memcpy(&v, pattern, 1);
      check(cu_.MemsetD8Async(d, v, count, s), "filling a buffer");
    } else if (pattern_bytes == 2) {
      unsigned short v;
      std::memcpy(&v, pattern, 2);
      check(cu_.MemsetD16Async(d, v, count, s), "filling a buffer");
    } else if (pattern_bytes == 4) {
      unsigned v;
      std::memcpy(&v, pattern, 4);
      check(cu_.MemsetD32Async(d, v, count, s), "filling a buffer");
    } else {
      fill_by_copies(device, dst, pattern, pattern_bytes, count);  // no memset of 8 bytes
    }
  }

  // ---- code ----

  std::string cache_target(int device) override {
    const DeviceState& d = device_as<DeviceState>(device);
    return fmt::format("device {}; {}", d.description, ptx_cache_target(d.arch, driver_version_));
  }

  std::string compile(const ir::Kernel& k, const detail::CompileOptions& o, int device) override {
    return compile_ptx(k, o, device_as<DeviceState>(device).arch);
  }

  void synchronize(int device) override {
    DeviceState& d = device_as<DeviceState>(device);
    if (!d.stream) return;
    check(cu_.CtxSetCurrent(d.context), "making the device's context current");
    check(cu_.StreamSynchronize(d.stream), "running queued work");
  }

 private:
  // ---- the GPU layer's vendor calls ----

  // The device's primary context and stream.
  std::string start(int device, backends::GpuDevice& base) override {
    auto& d = static_cast<DeviceState&>(base);
    CUresult r = cu_.PrimaryCtxRetain(&d.context, d.id);
    if (r == CUDA_SUCCESS) r = cu_.CtxSetCurrent(d.context);
    if (r == CUDA_SUCCESS) r = cu_.StreamCreate(&d.stream, 0);
    if (r == CUDA_SUCCESS) return "";
    return fmt::format("CUDA device {} ({}) has no context or stream: {}", device, d.description,
                       cu_.error_name(r));
  }

  void make_current(int, backends::GpuDevice& d) override {
    check(cu_.CtxSetCurrent(static_cast<DeviceState&>(d).context),
          "making the device's context current");
  }

  std::unique_ptr<backends::GpuCode> load_module(const std::string& artifact, const ir::Kernel& k,
                                                 const detail::CompileOptions&,
                                                 int device) override {
    auto code = std::make_unique<CudaCode>();
    code->cu = &cu_;
    code->context = device_as<DeviceState>(device).context;
    // The PTX is text: the driver compiles it for the device here.
    if (CUresult r = cu_.ModuleLoadData(&code->module, artifact.c_str()); r != CUDA_SUCCESS)
      throw DeviceError(fmt::format("kernel '{}': the CUDA driver did not load its PTX: {}", k.name,
                                    cu_.error_name(r)));
    return code;
  }

  std::string find_entry(backends::GpuCode& base, const std::string& name, backends::Entry which,
                         int device) override {
    auto& code = static_cast<CudaCode&>(base);
    CUfunction f = nullptr;
    if (CUresult r = cu_.ModuleGetFunction(&f, code.module, name.c_str()); r != CUDA_SUCCESS)
      return cu_.error_name(r);
    if (which == backends::Entry::Result) {
      code.result = f;
      return "";
    }
    code.main = f;
    // What the compiled code allows per block (its registers may allow fewer than the device).
    if (cu_.FuncGetAttribute(&code.max_group, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f) !=
        CUDA_SUCCESS)
      code.max_group = device_as<DeviceState>(device).max_threads;
    code.default_group =
        static_cast<uint32_t>(std::min(256, std::max(32, code.max_group / 32 * 32)));
    return "";
  }

  // cuLaunchKernel takes a pointer to each argument's value (docs/backends.md).
  void enqueue(backends::GpuCode& base, int device, const std::vector<backends::Dispatch>& ds,
               const ir::Kernel& k) override {
    auto& code = static_cast<CudaCode&>(base);
    CUstream s = stream(device);
    for (const backends::Dispatch& d : ds) {
      backends::ArgPointers args(d.args);
      CUresult r = cu_.LaunchKernel(d.entry == backends::Entry::Main ? code.main : code.result,
                                    static_cast<unsigned>(d.groups), 1, 1, d.group, 1, 1, 0, s,
                                    args.data(), nullptr);
      if (r != CUDA_SUCCESS)
        throw DeviceError(fmt::format("kernel '{}': CUDA could not queue {}: {}", k.name, d.what(),
                                      cu_.error_name(r)));
    }
  }

  // ---- hardware textures: a CUDA array per texture, copied from its memory, and a texture
  // object with normalized coordinates, clamp-to-edge addressing and linear filtering ----

  uint64_t create_texture(int device, const void* texels,
                          const backends::TextureShape& shape) override {
    started(device);
    CuArray3dDescriptor desc{};
    desc.width = static_cast<size_t>(shape.width);
    desc.height = static_cast<size_t>(shape.height);
    desc.depth = shape.dims == 3 ? static_cast<size_t>(shape.depth) : 0;
    desc.format = CU_AD_FORMAT_FLOAT;
    desc.num_channels = 1;
    CUarray array = nullptr;
    check(cu_.Array3DCreate(&array, &desc), "making a CUDA array for a texture");
    CuResourceDesc resource{};
    resource.type = CU_RESOURCE_TYPE_ARRAY;
    resource.res.array = array;
    CuTextureDesc sampling{};
    for (int& mode : sampling.address_mode) mode = CU_TR_ADDRESS_MODE_CLAMP;
    sampling.filter_mode = CU_TR_FILTER_MODE_LINEAR;
    sampling.flags = CU_TRSF_NORMALIZED_COORDINATES;
    CUtexObject texture = 0;
    try {
      refill_array(device, array, texels, shape);
      check(cu_.TexObjectCreate(&texture, &resource, &sampling, nullptr),
            "making a texture object");
    } catch (...) {
      cu_.ArrayDestroy(array);
      throw;
    }
    arrays_.add(texture, array);
    return texture;
  }

  void refill_texture(int device, uint64_t handle, const void* texels,
                      const backends::TextureShape& shape) override {
    refill_array(device, arrays_.at(handle), texels, shape);
  }

  // Cannot throw (release() calls it). The stream's queued work is waited for first, since the
  // driver frees the array at once.
  void destroy_texture(int device, uint64_t handle) override {
    std::optional<CUarray> array = arrays_.take(handle);
    if (!array) return;
    cu_.StreamSynchronize(device_as<DeviceState>(device).stream);
    cu_.TexObjectDestroy(handle);
    cu_.ArrayDestroy(*array);
  }

  // Queues the copy of the texels (row-major, x fastest) into the array.
  void refill_array(int device, CUarray array, const void* texels,
                    const backends::TextureShape& shape) {
    CuMemcpy3d copy{};
    copy.src_memory_type = CU_MEMORYTYPE_DEVICE;
    copy.src_device = address(texels);
    copy.src_pitch = static_cast<size_t>(shape.width) * sizeof(float);
    copy.src_height = static_cast<size_t>(shape.height);
    copy.dst_memory_type = CU_MEMORYTYPE_ARRAY;
    copy.dst_array = array;
    copy.width_bytes = copy.src_pitch;
    copy.height = static_cast<size_t>(shape.height);
    copy.depth = static_cast<size_t>(shape.depth);
    check(cu_.Memcpy3DAsync(&copy, stream(device)), "copying texels into a CUDA array");
  }

  CUstream stream(int device) { return started_as<DeviceState>(device).stream; }

  static CUdeviceptr address(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }

  void check(CUresult r, const char* what) const {
    if (r != CUDA_SUCCESS)
      throw DeviceError(fmt::format("CUDA: {} failed: {}", what, cu_.error_name(r)));
  }

  // "cuda", "cuda_managed", "cuda_pinned", or "" for memory CUDA does not know.
  std::string space_of(const void* p) const {
    unsigned type = 0;
    if (cu_.PointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, address(p)) !=
        CUDA_SUCCESS)
      return "";
    int managed = 0;
    if (cu_.PointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, address(p)) ==
            CUDA_SUCCESS &&
        managed)
      return "cuda_managed";
    if (type == CU_MEMORYTYPE_HOST) return "cuda_pinned";
    if (type == CU_MEMORYTYPE_DEVICE || type == CU_MEMORYTYPE_UNIFIED) return "cuda";
    return "";
  }

  CuApi cu_;
  int driver_version_ = 0;
  backends::TextureObjects<CUarray> arrays_;  // each texture object's array
};

BackendInfo make_info(const std::vector<std::unique_ptr<DeviceState>>& devices) {
  int max_threads = 1 << 30;
  for (const auto& d : devices) max_threads = std::min(max_threads, d->max_threads);
  BackendInfo i = backends::gpu_info(
      declared_info(), true,
      {DType::I32, DType::U32, DType::I64, DType::U64, DType::F32, DType::F64}, max_threads);
  i.supports_hardware_textures = true;  // every CUDA device since compute capability 3.0
  return i;
}

}  // namespace

BackendInfo declared_info() {
  return detail::declared("cuda", "CUDA", {"cuda", "cuda_pinned", "cuda_managed"},
                          BackendInfo::Addresses::Driver, 2 /* kDLCUDA */);
}

std::string nvrtc_missing() {
  return nvrtc().missing;
}

std::string ptx_cache_target(int arch, int driver_version) {
  const NvrtcApi& rtc = require_nvrtc();
  return fmt::format("arch compute_{}; nvrtc {}.{}; driver {}; options {}", arch, rtc.major,
                     rtc.minor, driver_version, kNvrtcOptions);
}

std::string compile_ptx(const ir::Kernel& k, const detail::CompileOptions& o, int arch) {
  const NvrtcApi& rtc = require_nvrtc();
  std::string source = backends::generated_source(k, "cuda", "CUDA", o.symbol_prefix);
  nvrtcProgram prog = nullptr;
  std::string file = k.name + ".cu";
  if (nvrtcResult r = rtc.CreateProgram(&prog, source.c_str(), file.c_str(), 0, nullptr, nullptr);
      r != NVRTC_SUCCESS)
    throw DeviceError(fmt::format("kernel '{}': NVRTC could not create a program: {}", k.name,
                                  rtc.GetErrorString(r)));
  struct Destroy {
    const NvrtcApi& rtc;
    nvrtcProgram& p;
    ~Destroy() { rtc.DestroyProgram(&p); }
  } destroy{rtc, prog};
  std::string arch_option = fmt::format("--gpu-architecture=compute_{}", arch);
  const char* options[] = {arch_option.c_str(), kNvrtcOptions};
  nvrtcResult r = rtc.CompileProgram(prog, 2, options);
  if (r != NVRTC_SUCCESS) {
    size_t n = 0;
    rtc.GetProgramLogSize(prog, &n);
    std::string log(n, '\0');
    if (n) rtc.GetProgramLog(prog, log.data());
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    throw DeviceError(fmt::format(
        "kernel '{}': NVRTC {}.{} could not compile the generated CUDA C for compute_{} ({}); "
        "if the architecture is newer than this NVRTC, install a newer CUDA toolkit; otherwise "
        "this is a bug in Tack's CUDA generator, please report it with `tack emit --backend "
        "cuda`. Log:\n{}",
        k.name, rtc.major, rtc.minor, arch, rtc.GetErrorString(r), log));
  }
  size_t size = 0;
  rtc.GetPTXSize(prog, &size);
  std::string ptx(size, '\0');
  if (size) rtc.GetPTX(prog, ptx.data());
  while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();  // c_str() supplies the terminator
  return ptx;
}

detail::Probe probe() {
  CuApi cu;
  if (std::string why = cu.load(); !why.empty()) return {nullptr, why};
  int count = 0;
  CUresult r = cu.DeviceGetCount(&count);
  if (r != CUDA_SUCCESS || count == 0)
    return {nullptr, fmt::format("the CUDA driver sees no device{}",
                                 r == CUDA_SUCCESS ? "" : " (" + cu.error_name(r) + ")")};
  std::vector<std::unique_ptr<DeviceState>> devices;
  for (int i = 0; i < count; ++i) {
    auto d = std::make_unique<DeviceState>();
    if (cu.DeviceGet(&d->id, i) != CUDA_SUCCESS) continue;
    char name[256] = {};
    cu.DeviceGetName(name, sizeof name - 1, d->id);
    d->description = name;
    int major = 0, minor = 0;
    cu.DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d->id);
    cu.DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d->id);
    d->arch = major * 10 + minor;
    cu.DeviceGetAttribute(&d->max_threads, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, d->id);
    devices.push_back(std::move(d));
  }
  if (devices.empty()) return {nullptr, "the CUDA driver lists devices but none could be opened"};
  if (std::string why = nvrtc_missing(); !why.empty())
    return {nullptr, fmt::format("the CUDA driver works, but {}", why)};
  int driver_version = 0;
  cu.DriverGetVersion(&driver_version);
  BackendInfo info = make_info(devices);
  return {std::make_unique<CudaBackend>(cu, driver_version, std::move(devices), std::move(info)),
          ""};
}

}  // namespace tack::cuda
