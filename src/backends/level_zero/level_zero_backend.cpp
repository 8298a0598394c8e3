#include "backends/level_zero/level_zero_backend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <mutex>

#include "backends/gpu/address_map.hpp"
#include "backends/gpu/artifact.hpp"
#include "backends/gpu/gpu_backend.hpp"
#include "backends/level_zero/ze_api.hpp"
#include "codegen/c_family/c_generator.hpp"
#include "tack/error.hpp"

namespace tack::level_zero {
namespace {

// The group size of kernels without workgroup primitives (threads past the count return).
constexpr uint32_t kDefaultGroup = 64;

struct DeviceState : backends::GpuDevice {
  ze_driver_handle_t driver = nullptr;
  ze_device_handle_t id = nullptr;
  std::string ocloc_device;  // the PCI id, which ocloc takes as a device name: 0x0bd5
  uint32_t module_flags = 0;
  uint32_t max_group = 1;
  uint32_t compute_ordinal = 0;  // the command queue group that runs kernels
  // The largest 2-D and 3-D images (0: none) and whether kernels may sample them.
  uint32_t image2d_max = 0, image3d_max = 0;
  bool samplers = false;
  ze_context_handle_t context = nullptr;
  ze_command_list_handle_t list = nullptr;  // immediate, asynchronous
  ze_event_pool_handle_t pool = nullptr;
  ze_event_handle_t done = nullptr;  // signalled by a barrier after everything queued
  std::mutex mutex;                  // one thread appends to the list at a time
};

struct ZeCode : backends::GpuCode {
  const ZeApi* ze = nullptr;
  ze_module_handle_t module = nullptr;
  ze_kernel_handle_t main = nullptr;
  ze_kernel_handle_t result = nullptr;  // `<entry>_result`, kernels with a `return` value
  std::mutex mutex;                     // arguments are set on the kernel object, then appended
  ~ZeCode() override {
    if (result) ze->KernelDestroy(result);
    if (main) ze->KernelDestroy(main);
    if (module) ze->ModuleDestroy(module);
  }
};

// "tack-level-zero 1\n", the native binary's and the SPIR-V's sizes (8 bytes each), then both.
constexpr char kArtifactMagic[] = "tack-level-zero 1\n";

std::string generate(const ir::Kernel& k, const detail::CompileOptions& o) {
  // Level Zero runs the OpenCL C generator's code (docs/architecture.md).
  return backends::generated_source(k, "level_zero", "Level Zero", o.symbol_prefix);
}

class LevelZeroBackend final : public backends::GpuBackend {
 public:
  LevelZeroBackend(ZeApi ze, std::vector<std::unique_ptr<DeviceState>> devices, BackendInfo info)
      : GpuBackend(std::move(info), gpu_devices(std::move(devices)), UINT32_MAX), ze_(ze) {}

  // ---- memory ----

  void* allocate(int device, size_t bytes) override {
    DeviceState& d = started_as<DeviceState>(device);
    ze_device_mem_alloc_desc_t desc{};
    desc.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC;
    void* p = nullptr;
    ze_result_t r = ze_.MemAllocDevice(d.context, &desc, std::max<size_t>(bytes, 64), 64, d.id, &p);
    if (r != ZE_RESULT_SUCCESS || !p)
      throw DeviceError(fmt::format("Level Zero device {} cannot allocate {} bytes: {}", device,
                                    bytes, result_name(r)));
    memory_.add(p, bytes, true);
    return p;
  }

  void release(int device, void* ptr) override {
    release_textures(device, ptr);
    memory_.remove(ptr);
    // The runtime waited for queued work first.
    ze_.MemFree(started_as<DeviceState>(device).context, ptr);
  }

  bool owns(const void* address) override { return memory_.contains(address); }

  void copy_to_host(int device, void* dst, const void* src, size_t n) override {
    copy(device, dst, src, n, "reading a buffer", true);
  }
  void copy_from_host(int device, void* dst, const void* src, size_t n) override {
    // Waited for: the caller's host memory may go away when this returns.
    copy(device, dst, src, n, "writing a buffer", true);
  }
  void copy_on_device(int device, void* dst, const void* src, size_t n) override {
    copy(device, dst, src, n, "copying a buffer", false);
  }
  void fill(int device, void* dst, const void* pattern, size_t pattern_bytes,
            size_t count) override {
    if (count == 0) return;
    DeviceState& d = started_as<DeviceState>(device);
    std::lock_guard lock(d.mutex);
    append(d,
           ze_.CommandListAppendMemoryFill(d.list, dst, pattern, pattern_bytes,
                                           pattern_bytes * count, nullptr, 0, nullptr),
           "filling a buffer");
  }

  // ---- code ----

  std::string cache_target(int device) override {
    const DeviceState& d = device_as<DeviceState>(device);
    const Ocloc& oc = ocloc();
    return fmt::format("{}; ocloc {} -device {}; options {}", d.description,
                       oc.version ? oc.version() : 0, d.ocloc_device, build_options());
  }

  std::string compile(const ir::Kernel& k, const detail::CompileOptions& o, int device) override {
    return compile_artifact(k, o, device_as<DeviceState>(device).ocloc_device);
  }

  void synchronize(int device) override {
    DeviceState& d = device_as<DeviceState>(device);
    if (!d.list) return;
    std::lock_guard lock(d.mutex);
    wait(d, "finishing queued work");
  }

 private:
  // ---- the GPU layer's vendor calls ----

  std::string start(int device, backends::GpuDevice& base) override {
    auto& d = static_cast<DeviceState&>(base);
    ze_context_desc_t context{};
    context.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC;
    ze_result_t r = ze_.ContextCreate(d.driver, &context, &d.context);
    if (r == ZE_RESULT_SUCCESS) {
      // Immediate and asynchronous: an append returns once queued. Commands of one list may
      // overlap, so a barrier follows each one (see append).
      ze_command_queue_desc_t queue{};
      queue.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC;
      queue.ordinal = d.compute_ordinal;
      queue.mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS;
      queue.priority = ZE_COMMAND_QUEUE_PRIORITY_NORMAL;
      r = ze_.CommandListCreateImmediate(d.context, d.id, &queue, &d.list);
    }
    if (r == ZE_RESULT_SUCCESS) {
      ze_event_pool_desc_t pool{};
      pool.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC;
      pool.flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE;
      pool.count = 1;
      r = ze_.EventPoolCreate(d.context, &pool, 1, &d.id, &d.pool);
    }
    if (r == ZE_RESULT_SUCCESS) {
      ze_event_desc_t event{};
      event.stype = ZE_STRUCTURE_TYPE_EVENT_DESC;
      event.index = 0;
      event.signal = ZE_EVENT_SCOPE_FLAG_HOST;
      event.wait = ZE_EVENT_SCOPE_FLAG_HOST;
      r = ze_.EventCreate(d.pool, &event, &d.done);
    }
    if (r == ZE_RESULT_SUCCESS) return "";
    return fmt::format("Level Zero device {} ({}) has no context or command list: {}", device,
                       d.description, result_name(r));
  }

  std::unique_ptr<backends::GpuCode> load_module(const std::string& artifact, const ir::Kernel& k,
                                                 const detail::CompileOptions&,
                                                 int device) override {
    DeviceState& d = device_as<DeviceState>(device);
    std::string native, spirv;
    if (!unpack_artifact(artifact, native, spirv))
      throw DeviceError(
          fmt::format("kernel '{}': the cached Level Zero module is malformed", k.name));
    auto code = std::make_unique<ZeCode>();
    code->ze = &ze_;
    code->default_group = kDefaultGroup;
    code->max_group = static_cast<int>(std::min<uint32_t>(d.max_group, INT_MAX));
    std::string log;
    // The native binary; the SPIR-V when the driver refuses it (another driver build).
    code->module = create_module(d, ZE_MODULE_FORMAT_NATIVE, native, nullptr);
    if (!code->module) code->module = create_module(d, ZE_MODULE_FORMAT_IL_SPIRV, spirv, &log);
    if (!code->module)
      throw DeviceError(fmt::format(
          "kernel '{}': Level Zero refused both the native binary and the SPIR-V. Build log:\n{}",
          k.name, log));
    return code;
  }

  std::string find_entry(backends::GpuCode& base, const std::string& name, backends::Entry which,
                         int) override {
    auto& code = static_cast<ZeCode&>(base);
    ze_kernel_desc_t desc{};
    desc.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC;
    desc.pKernelName = name.c_str();
    ze_kernel_handle_t& h = which == backends::Entry::Main ? code.main : code.result;
    ze_result_t r = ze_.KernelCreate(code.module, &desc, &h);
    return r == ZE_RESULT_SUCCESS ? "" : result_name(r);
  }

  // Arguments are set on the kernel object; each launch is followed by a barrier (see append).
  void enqueue(backends::GpuCode& base, int device, const std::vector<backends::Dispatch>& ds,
               const ir::Kernel& k) override {
    auto& code = static_cast<ZeCode&>(base);
    DeviceState& d = started_as<DeviceState>(device);
    std::lock_guard code_lock(code.mutex);
    std::lock_guard list_lock(d.mutex);
    for (const backends::Dispatch& dispatch : ds) {
      ze_kernel_handle_t kernel = dispatch.entry == backends::Entry::Main ? code.main : code.result;
      uint32_t slot = 0;
      for (const backends::KernelArg& a : dispatch.args) {
        // A value in its low bytes; an address as a pointer and an image as its handle (the
        // same 8 bytes).
        ze_result_t r = ze_.KernelSetArgumentValue(kernel, slot, a.bytes, &a.bits);
        if (r != ZE_RESULT_SUCCESS)
          throw DeviceError(fmt::format("kernel '{}': Level Zero refused argument {}: {}", k.name,
                                        slot, result_name(r)));
        ++slot;
      }
      ze_result_t r = ze_.KernelSetGroupSize(kernel, dispatch.group, 1, 1);
      ze_group_count_t count{static_cast<uint32_t>(dispatch.groups), 1, 1};
      if (r == ZE_RESULT_SUCCESS)
        r = ze_.CommandListAppendLaunchKernel(d.list, kernel, &count, nullptr, 0, nullptr);
      if (r == ZE_RESULT_SUCCESS) r = ze_.CommandListAppendBarrier(d.list, nullptr, 0, nullptr);
      if (r != ZE_RESULT_SUCCESS)
        throw DeviceError(fmt::format("kernel '{}': Level Zero could not queue {}: {}", k.name,
                                      dispatch.what(), result_name(r)));
    }
  }

  // ---- hardware textures: a 32-bit float image per texture, copied from its memory; the
  // sampler is the generated OpenCL C's program-scope sampler_t ----

  uint64_t create_texture(int device, const void* texels,
                          const backends::TextureShape& shape) override {
    DeviceState& d = started_as<DeviceState>(device);
    uint64_t max = shape.dims == 3 ? d.image3d_max : d.image2d_max;
    if (static_cast<uint64_t>(std::max({shape.width, shape.height, shape.depth})) > max)
      throw ValueError(fmt::format(
          "a {}-D texture of {}x{}x{} texels is larger than Level Zero device {}'s images (at "
          "most {} per side): make it with interp=\"linear_exact\" (sampled in software, any "
          "size)",
          shape.dims, shape.width, shape.height, shape.depth, device, max));
    ze_image_desc_t desc{};
    desc.stype = ZE_STRUCTURE_TYPE_IMAGE_DESC;
    desc.flags = 0;  // read only by kernels
    desc.type = shape.dims == 3 ? ZE_IMAGE_TYPE_3D : ZE_IMAGE_TYPE_2D;
    desc.format = {ZE_IMAGE_FORMAT_LAYOUT_32, ZE_IMAGE_FORMAT_TYPE_FLOAT,
                   ZE_IMAGE_FORMAT_SWIZZLE_R, ZE_IMAGE_FORMAT_SWIZZLE_0,
                   ZE_IMAGE_FORMAT_SWIZZLE_0, ZE_IMAGE_FORMAT_SWIZZLE_1};
    desc.width = static_cast<uint64_t>(shape.width);
    desc.height = static_cast<uint32_t>(shape.height);
    desc.depth = static_cast<uint32_t>(shape.dims == 3 ? shape.depth : 1);
    ze_image_handle_t image = nullptr;
    if (ze_result_t r = ze_.ImageCreate(d.context, d.id, &desc, &image); r != ZE_RESULT_SUCCESS)
      throw DeviceError(fmt::format("Level Zero device {} cannot make a {}-D f32 image: {}", device,
                                    shape.dims, result_name(r)));
    uint64_t handle = reinterpret_cast<uintptr_t>(image);
    try {
      refill_texture(device, handle, texels, shape);
    } catch (...) {
      ze_.ImageDestroy(image);
      throw;
    }
    return handle;
  }

  void refill_texture(int device, uint64_t handle, const void* texels,
                      const backends::TextureShape&) override {
    DeviceState& d = started_as<DeviceState>(device);
    std::lock_guard lock(d.mutex);
    append(d,
           ze_.CommandListAppendImageCopyFromMemory(d.list, image_of(handle), texels, nullptr,
                                                    nullptr, 0, nullptr),
           "copying texels into an image");
  }

  // The list's queued work may still read the image: waited for first.
  void destroy_texture(int device, uint64_t handle) override {
    DeviceState& d = device_as<DeviceState>(device);
    {
      std::lock_guard lock(d.mutex);
      try {
        wait(d, "finishing queued work");
      } catch (const DeviceError&) {
        // The error is raised again by the next synchronization; the image goes regardless.
      }
    }
    ze_.ImageDestroy(image_of(handle));
  }

  static ze_image_handle_t image_of(uint64_t handle) {
    return reinterpret_cast<ze_image_handle_t>(static_cast<uintptr_t>(handle));
  }

  // Appends a copy of `n` bytes; with `done`, waits until it has run.
  void copy(int device, void* dst, const void* src, size_t n, const char* what, bool done) {
    if (n == 0) return;
    DeviceState& d = started_as<DeviceState>(device);
    std::lock_guard lock(d.mutex);
    append(d, ze_.CommandListAppendMemoryCopy(d.list, dst, src, n, nullptr, 0, nullptr), what);
    if (done) wait(d, what);
  }

  // After each command appended: a barrier, so that the list runs in order like a stream.
  void append(DeviceState& d, ze_result_t r, const char* what) {
    if (r == ZE_RESULT_SUCCESS) r = ze_.CommandListAppendBarrier(d.list, nullptr, 0, nullptr);
    if (r != ZE_RESULT_SUCCESS)
      throw DeviceError(fmt::format("Level Zero: {} failed: {}", what, result_name(r)));
  }

  // Waits for everything appended so far (the caller holds d.mutex).
  void wait(DeviceState& d, const char* what) {
    ze_result_t r = ze_.EventHostReset(d.done);
    if (r == ZE_RESULT_SUCCESS) r = ze_.CommandListAppendBarrier(d.list, d.done, 0, nullptr);
    if (r == ZE_RESULT_SUCCESS) r = ze_.EventHostSynchronize(d.done, UINT64_MAX);
    if (r != ZE_RESULT_SUCCESS)
      throw DeviceError(fmt::format("Level Zero: {} failed: {}", what, result_name(r)));
  }

  // A module, or null when the driver refuses the input (its log in *log when given).
  ze_module_handle_t create_module(DeviceState& d, ze_module_format_t format,
                                   const std::string& input, std::string* log) {
    if (input.empty()) return nullptr;
    // SPIR-V is compiled for the device here: Level Zero spells the exact-division option
    // -ze-... (as oneAPI's Unified Runtime does for zeModuleCreate); the native binary was built
    // with it already.
    const char* flags = "-ze-fp32-correctly-rounded-divide-sqrt";
    ze_module_desc_t desc{};
    desc.stype = ZE_STRUCTURE_TYPE_MODULE_DESC;
    desc.format = format;
    desc.inputSize = input.size();
    desc.pInputModule = reinterpret_cast<const uint8_t*>(input.data());
    desc.pBuildFlags = format == ZE_MODULE_FORMAT_IL_SPIRV ? flags : nullptr;
    ze_module_handle_t module = nullptr;
    ze_module_build_log_handle_t build_log = nullptr;
    ze_result_t r = ze_.ModuleCreate(d.context, d.id, &desc, &module, log ? &build_log : nullptr);
    if (build_log) {
      size_t n = 0;
      if (ze_.ModuleBuildLogGetString(build_log, &n, nullptr) == ZE_RESULT_SUCCESS && n) {
        std::string text(n, '\0');
        ze_.ModuleBuildLogGetString(build_log, &n, text.data());
        while (!text.empty() && text.back() == '\0') text.pop_back();
        *log = fmt::format("{} ({})", text, result_name(r));
      }
      ze_.ModuleBuildLogDestroy(build_log);
    }
    if (r != ZE_RESULT_SUCCESS) {
      if (module) ze_.ModuleDestroy(module);
      return nullptr;
    }
    return module;
  }

  ZeApi ze_;
  backends::AddressMap<bool> memory_;  // the allocations, for owns()
};

}  // namespace

BackendInfo declared_info() {
  return detail::declared("level_zero", "Level Zero", {"level_zero"});
}

std::string build_options() {
  // Exact arithmetic, as on OpenCL: correctly rounded division and sqrt, no fast math (the
  // source turns FP_CONTRACT off).
  return "-cl-fp32-correctly-rounded-divide-sqrt";
}

BackendInfo make_info(const std::vector<uint32_t>& module_flags, int max_group_size, bool images) {
  bool fp64 = !module_flags.empty();
  for (uint32_t flags : module_flags) fp64 &= (flags & ZE_DEVICE_MODULE_FLAG_FP64) != 0;
  BackendInfo i = backends::gpu_info(declared_info(), fp64, {DType::I32, DType::U32, DType::F32},
                                     max_group_size);
  i.supports_hardware_textures = images;
  return i;
}

bool unpack_artifact(const std::string& a, std::string& native, std::string& spirv) {
  return backends::unpack_pair(kArtifactMagic, a, native, spirv);
}

std::string compile_artifact(const ir::Kernel& k, const detail::CompileOptions& o,
                             const std::string& device) {
  OclocOutput out = ocloc_compile(generate(k, o), device, build_options(), k.name);
  return backends::pack_pair(kArtifactMagic, out.native, out.spirv);
}

detail::Probe probe() {
  ZeApi ze;
  if (std::string why = ze.load(); !why.empty()) return {nullptr, why};
  // zeInit before anything else: after a failed zeInit, other calls are undefined (the loader
  // crashes in zeDriverGet).
  if (ze_result_t r = ze.Init(ZE_INIT_FLAG_GPU_ONLY); r != ZE_RESULT_SUCCESS)
    return {nullptr, fmt::format("zeInit failed with {}: there is no Intel GPU here, or its driver "
                                 "(intel-level-zero-gpu, "
                                 "/dev/dri) is not usable by this user",
                                 result_name(r))};
  uint32_t n_drivers = 0;
  ze.DriverGet(&n_drivers, nullptr);
  std::vector<ze_driver_handle_t> drivers(n_drivers);
  if (n_drivers) ze.DriverGet(&n_drivers, drivers.data());
  std::vector<std::unique_ptr<DeviceState>> devices;
  for (ze_driver_handle_t driver : drivers) {
    ze_driver_properties_t dp{};
    dp.stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES;
    ze.DriverGetProperties(driver, &dp);
    uint32_t count = 0;
    if (ze.DeviceGet(driver, &count, nullptr) != ZE_RESULT_SUCCESS || count == 0) continue;
    std::vector<ze_device_handle_t> ids(count);
    if (ze.DeviceGet(driver, &count, ids.data()) != ZE_RESULT_SUCCESS) continue;
    for (ze_device_handle_t id : ids) {
      ze_device_properties_t props{};
      props.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
      if (ze.DeviceGetProperties(id, &props) != ZE_RESULT_SUCCESS ||
          props.type != ZE_DEVICE_TYPE_GPU)
        continue;
      auto d = std::make_unique<DeviceState>();
      d->driver = driver;
      d->id = id;
      d->ocloc_device = fmt::format("0x{:04x}", props.deviceId);
      d->description =
          fmt::format("{} (PCI {}); driver 0x{:x}", props.name, d->ocloc_device, dp.driverVersion);
      // The f64 decision, made when the device starts.
      ze_device_module_properties_t mp{};
      mp.stype = ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES;
      if (ze.DeviceGetModuleProperties(id, &mp) == ZE_RESULT_SUCCESS) d->module_flags = mp.flags;
      ze_device_compute_properties_t cp{};
      cp.stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES;
      if (ze.DeviceGetComputeProperties(id, &cp) == ZE_RESULT_SUCCESS)
        d->max_group = cp.maxTotalGroupSize;
      ze_device_image_properties_t ip{};
      ip.stype = ZE_STRUCTURE_TYPE_DEVICE_IMAGE_PROPERTIES;
      if (ze.DeviceGetImageProperties(id, &ip) == ZE_RESULT_SUCCESS) {
        d->image2d_max = ip.maxImageDims2D;
        d->image3d_max = ip.maxImageDims3D;
        d->samplers = ip.maxSamplers > 0 && ip.maxReadImageArgs > 0;
      }
      uint32_t groups = 0;
      ze.DeviceGetCommandQueueGroupProperties(id, &groups, nullptr);
      std::vector<ze_command_queue_group_properties_t> gp(groups);
      for (auto& g : gp) g.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES;
      if (groups) ze.DeviceGetCommandQueueGroupProperties(id, &groups, gp.data());
      for (uint32_t g = 0; g < groups; ++g)
        if (gp[g].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE) {
          d->compute_ordinal = g;
          break;
        }
      devices.push_back(std::move(d));
    }
  }
  if (devices.empty()) {
    return {
        nullptr,
        fmt::format("Level Zero has no GPU device here ({} driver{}): install Intel's GPU driver "
                    "(intel-level-zero-gpu)",
                    n_drivers, n_drivers == 1 ? "" : "s")};
  }
  std::vector<uint32_t> flags;
  uint32_t max_group = UINT32_MAX;
  bool images = true;
  for (const auto& d : devices) {
    flags.push_back(d->module_flags);
    max_group = std::min(max_group, d->max_group);
    images &= d->samplers && d->image2d_max > 0 && d->image3d_max > 0;
  }
  BackendInfo info =
      make_info(flags, static_cast<int>(std::min<uint32_t>(max_group, 1 << 30)), images);
  return {std::make_unique<LevelZeroBackend>(ze, std::move(devices), std::move(info)), ""};
}

}  // namespace tack::level_zero
