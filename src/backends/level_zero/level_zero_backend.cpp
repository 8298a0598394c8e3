#include "backends/level_zero/level_zero_backend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <map>
#include <mutex>

#include "backends/gpu_common.hpp"
#include "backends/level_zero/ze_api.hpp"
#include "codegen/c_family/c_generator.hpp"
#include "tack/error.hpp"

namespace tack::level_zero {
namespace {

// The group size of kernels without workgroup primitives (threads past the count return).
constexpr uint32_t kDefaultGroup = 64;

struct DeviceState {
  ze_driver_handle_t driver = nullptr;
  ze_device_handle_t id = nullptr;
  std::string ocloc_device;  // the PCI id, which ocloc takes as a device name: 0x0bd5
  std::string description;   // name, PCI id, driver version
  uint32_t module_flags = 0;
  uint32_t max_group = 1;
  uint32_t compute_ordinal = 0;  // the command queue group that runs kernels
  std::once_flag started;
  std::string start_error;
  ze_context_handle_t context = nullptr;
  ze_command_list_handle_t list = nullptr;  // immediate, asynchronous
  ze_event_pool_handle_t pool = nullptr;
  ze_event_handle_t done = nullptr;  // signalled by a barrier after everything queued
  std::mutex mutex;                  // one thread appends to the list at a time
};

struct ZeCode : detail::LoadedCode {
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

class LevelZeroBackend final : public detail::Backend {
 public:
  LevelZeroBackend(ZeApi ze, std::vector<std::unique_ptr<DeviceState>> devices, BackendInfo info)
      : Backend(std::move(info)), ze_(ze), devices_(std::move(devices)) {}

  int device_count() const override { return static_cast<int>(devices_.size()); }

  // ---- memory ----

  void* allocate(int device, size_t bytes) override {
    DeviceState& d = started(device);
    ze_device_mem_alloc_desc_t desc{};
    desc.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC;
    void* p = nullptr;
    ze_result_t r = ze_.MemAllocDevice(d.context, &desc, std::max<size_t>(bytes, 64), 64, d.id, &p);
    if (r != ZE_RESULT_SUCCESS || !p)
      throw DeviceError(fmt::format("Level Zero device {} cannot allocate {} bytes: {}", device,
                                    bytes, result_name(r)));
    std::lock_guard lock(mutex_);
    memory_[reinterpret_cast<uintptr_t>(p)] = std::max<size_t>(bytes, 1);
    return p;
  }

  void release(int device, void* ptr) override {
    {
      std::lock_guard lock(mutex_);
      memory_.erase(reinterpret_cast<uintptr_t>(ptr));
    }
    ze_.MemFree(started(device).context, ptr);  // the runtime waited for queued work first
  }

  bool owns(const void* address) override {
    auto a = reinterpret_cast<uintptr_t>(address);
    std::lock_guard lock(mutex_);
    auto it = memory_.upper_bound(a);
    return it != memory_.begin() && a - std::prev(it)->first < std::prev(it)->second;
  }

  void copy_to_host(int device, void* dst, const void* src, size_t n) override {
    if (n == 0) return;
    DeviceState& d = started(device);
    std::lock_guard lock(d.mutex);
    append(d, ze_.CommandListAppendMemoryCopy(d.list, dst, src, n, nullptr, 0, nullptr),
           "reading a buffer");
    wait(d, "reading a buffer");
  }
  void copy_from_host(int device, void* dst, const void* src, size_t n) override {
    if (n == 0) return;
    DeviceState& d = started(device);
    std::lock_guard lock(d.mutex);
    append(d, ze_.CommandListAppendMemoryCopy(d.list, dst, src, n, nullptr, 0, nullptr),
           "writing a buffer");
    wait(d, "writing a buffer");  // the caller's host memory may go away when this returns
  }
  void copy_on_device(int device, void* dst, const void* src, size_t n) override {
    if (n == 0) return;
    DeviceState& d = started(device);
    std::lock_guard lock(d.mutex);
    append(d, ze_.CommandListAppendMemoryCopy(d.list, dst, src, n, nullptr, 0, nullptr),
           "copying a buffer");
  }
  void fill(int device, void* dst, const void* pattern, size_t pattern_bytes,
            size_t count) override {
    if (count == 0) return;
    DeviceState& d = started(device);
    std::lock_guard lock(d.mutex);
    append(d,
           ze_.CommandListAppendMemoryFill(d.list, dst, pattern, pattern_bytes,
                                           pattern_bytes * count, nullptr, 0, nullptr),
           "filling a buffer");
  }

  // ---- code ----

  std::string cache_target(int device) override {
    const DeviceState& d = *devices_.at(device);
    const Ocloc& oc = ocloc();
    return fmt::format("{}; ocloc {} -device {}; options {}", d.description,
                       oc.version ? oc.version() : 0, d.ocloc_device, build_options());
  }

  std::string compile(const ir::Kernel& k, const detail::CompileOptions& o, int device) override {
    return compile_artifact(k, o, devices_.at(device)->ocloc_device);
  }

  std::unique_ptr<detail::LoadedCode> load(const std::string& artifact, const ir::Kernel& k,
                                           const detail::CompileOptions& o, int device) override {
    DeviceState& d = started(device);
    std::string native, spirv;
    if (!unpack_artifact(artifact, native, spirv))
      throw DeviceError(
          fmt::format("kernel '{}': the cached Level Zero module is malformed", k.name));
    auto code = std::make_unique<ZeCode>();
    code->ze = &ze_;
    std::string log;
    // The native binary; the SPIR-V when the driver refuses it (another driver build).
    code->module = create_module(d, ZE_MODULE_FORMAT_NATIVE, native, nullptr);
    if (!code->module) code->module = create_module(d, ZE_MODULE_FORMAT_IL_SPIRV, spirv, &log);
    if (!code->module)
      throw DeviceError(fmt::format(
          "kernel '{}': Level Zero refused both the native binary and the SPIR-V. Build log:\n{}",
          k.name, log));
    auto kernel = [&](const std::string& name) {
      ze_kernel_desc_t desc{};
      desc.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC;
      desc.pKernelName = name.c_str();
      ze_kernel_handle_t h = nullptr;
      ze_result_t r = ze_.KernelCreate(code->module, &desc, &h);
      if (r != ZE_RESULT_SUCCESS)
        throw DeviceError(fmt::format("kernel '{}': the Level Zero module has no entry '{}': {}",
                                      k.name, name, result_name(r)));
      return h;
    };
    code->main = kernel(o.symbol_prefix);
    if (k.result) code->result = kernel(o.symbol_prefix + "_result");
    return code;
  }

  void launch(detail::LoadedCode& base, const ir::Kernel& k, const detail::LaunchArgs& a,
              int device) override {
    auto& code = static_cast<ZeCode&>(base);
    DeviceState& d = started(device);
    if (k.workgroup_size > 0 && static_cast<uint32_t>(k.workgroup_size) > d.max_group)
      throw DeviceError(fmt::format(
          "kernel '{}' runs in workgroups of {} work items, but Level Zero device {} ({}) allows "
          "at most {}",
          k.name, k.workgroup_size, device, d.description, d.max_group));
    std::lock_guard code_lock(code.mutex);
    std::lock_guard list_lock(d.mutex);
    uint32_t slot = 0;
    auto set = [&](ze_kernel_handle_t kernel, size_t size, const void* value) {
      ze_result_t r = ze_.KernelSetArgumentValue(kernel, slot, size, value);
      if (r != ZE_RESULT_SUCCESS)
        throw DeviceError(fmt::format("kernel '{}': Level Zero refused argument {}: {}", k.name,
                                      slot, result_name(r)));
      ++slot;
    };
    auto set_all = [&](ze_kernel_handle_t kernel) {
      slot = 0;
      for (size_t p = 0; p < k.params.size(); ++p) {
        const ir::Param& param = k.params[p];
        if (param.is_local_array()) continue;
        if (param.type.is_array()) {
          set(kernel, sizeof(void*), &a.params[p].data);
          for (int dim = 0; dim < param.type.rank; ++dim) set(kernel, 8, &a.params[p].shape[dim]);
        } else {
          set(kernel, dtype_size(param.type.dtype), &a.params[p].scalar);  // the low bytes
        }
      }
      for (size_t dim = 0; dim < k.dims.size(); ++dim) {
        set(kernel, 8, &a.start[dim]);
        set(kernel, 8, &a.step[dim]);
        set(kernel, 8, &a.count[dim]);
      }
      set(kernel, sizeof(void*), &a.debug_record);
    };
    auto queue = [&](ze_kernel_handle_t kernel, uint32_t group, uint32_t groups) {
      ze_result_t r = ze_.KernelSetGroupSize(kernel, group, 1, 1);
      ze_group_count_t count{groups, 1, 1};
      if (r == ZE_RESULT_SUCCESS)
        r = ze_.CommandListAppendLaunchKernel(d.list, kernel, &count, nullptr, 0, nullptr);
      if (r == ZE_RESULT_SUCCESS) r = ze_.CommandListAppendBarrier(d.list, nullptr, 0, nullptr);
      if (r != ZE_RESULT_SUCCESS)
        throw DeviceError(fmt::format("kernel '{}': Level Zero could not queue the launch: {}",
                                      k.name, result_name(r)));
    };

    uint64_t total = detail::launch_threads(k, a);
    if (total > 0) {
      set_all(code.main);
      uint32_t group =
          k.workgroup_size > 0 ? static_cast<uint32_t>(k.workgroup_size) : kDefaultGroup;
      uint64_t groups = (total + group - 1) / group;
      if (groups > UINT32_MAX)
        throw ValueError(fmt::format(
            "kernel '{}': {} iterations are more than Level Zero launches at once", k.name, total));
      queue(code.main, group, static_cast<uint32_t>(groups));
    }
    if (k.result && a.result) {
      // One work item computes the value after the loop; the read waits for it.
      ze_device_mem_alloc_desc_t desc{};
      desc.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC;
      void* out = nullptr;
      ze_result_t r = ze_.MemAllocDevice(d.context, &desc, 8, 8, d.id, &out);
      if (r != ZE_RESULT_SUCCESS)
        throw DeviceError(fmt::format("kernel '{}': no Level Zero memory for the result: {}",
                                      k.name, result_name(r)));
      struct Free {
        const ZeApi& ze;
        ze_context_handle_t context;
        void* p;
        ~Free() { ze.MemFree(context, p); }
      } free_out{ze_, d.context, out};
      set_all(code.result);
      set(code.result, sizeof(void*), &out);
      queue(code.result, 1, 1);
      append(d, ze_.CommandListAppendMemoryCopy(d.list, a.result, out, 8, nullptr, 0, nullptr),
             "reading a kernel's return value");
      wait(d, "computing a kernel's return value");
    }
  }

  void synchronize(int device) override {
    DeviceState& d = *devices_.at(device);
    if (!d.list) return;
    std::lock_guard lock(d.mutex);
    wait(d, "finishing queued work");
  }

  std::string emit(const ir::Kernel& k, const detail::CompileOptions& o, bool) override {
    return generate(k, o);
  }

 private:
  DeviceState& started(int device) {
    DeviceState& d = *devices_.at(device);
    std::call_once(d.started, [&] {
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
      if (r != ZE_RESULT_SUCCESS)
        d.start_error = fmt::format("Level Zero device {} ({}) has no context or command list: {}",
                                    device, d.description, result_name(r));
    });
    if (!d.start_error.empty()) throw DeviceError(d.start_error);
    return d;
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
  std::vector<std::unique_ptr<DeviceState>> devices_;
  std::mutex mutex_;                    // guards memory_
  std::map<uintptr_t, size_t> memory_;  // allocations: address -> bytes
};

}  // namespace

std::string build_options() {
  // Exact arithmetic, as on OpenCL: correctly rounded division and sqrt, no fast math (the
  // source turns FP_CONTRACT off).
  return "-cl-fp32-correctly-rounded-divide-sqrt";
}

BackendInfo make_info(const std::vector<uint32_t>& module_flags, int max_group_size) {
  BackendInfo i;
  i.name = "level_zero";
  i.label = "Level Zero";
  bool fp64 = !module_flags.empty();
  for (uint32_t flags : module_flags) fp64 &= (flags & ZE_DEVICE_MODULE_FLAG_FP64) != 0;
  for (DType t : kAllDTypes)
    if (t != DType::F64 || fp64) i.supported_dtypes.insert(t);
  i.supported_atomic_dtypes = {DType::I32, DType::U32, DType::F32};
  i.supports_device_reductions = false;
  i.supports_workgroups = true;
  i.max_workgroup_size = max_group_size;
  i.device_memory_spaces = {"level_zero"};
  i.asynchronous = true;
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

Probe make_level_zero_backend() {
  Probe probe;
  ZeApi ze;
  if (std::string why = ze.load(); !why.empty()) {
    probe.reason = why;
    return probe;
  }
  // zeInit before anything else: after a failed zeInit, other calls are undefined (the loader
  // crashes in zeDriverGet).
  if (ze_result_t r = ze.Init(ZE_INIT_FLAG_GPU_ONLY); r != ZE_RESULT_SUCCESS) {
    probe.reason = fmt::format(
        "zeInit failed with {}: there is no Intel GPU here, or its driver (intel-level-zero-gpu, "
        "/dev/dri) is not usable by this user",
        result_name(r));
    return probe;
  }
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
    probe.reason = fmt::format(
        "Level Zero has no GPU device here ({} driver{}): install Intel's GPU driver "
        "(intel-level-zero-gpu)",
        n_drivers, n_drivers == 1 ? "" : "s");
    return probe;
  }
  std::vector<uint32_t> flags;
  uint32_t max_group = UINT32_MAX;
  for (const auto& d : devices) {
    flags.push_back(d->module_flags);
    max_group = std::min(max_group, d->max_group);
  }
  BackendInfo info = make_info(flags, static_cast<int>(std::min<uint32_t>(max_group, 1 << 30)));
  probe.backend = std::make_unique<LevelZeroBackend>(ze, std::move(devices), std::move(info));
  return probe;
}

}  // namespace tack::level_zero
