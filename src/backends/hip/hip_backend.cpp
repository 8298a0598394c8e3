#include "backends/hip/hip_backend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "backends/gpu_common.hpp"
#include "backends/hip/hip_api.hpp"
#include "codegen/c_family/c_generator.hpp"
#include "tack/error.hpp"

namespace tack::hip {
namespace {

// AMD GPUs run blocks of up to 1024 threads; Tack's groups are 256 at most.
constexpr int kMaxBlock = 1024;
// The block size of kernels without workgroup primitives (threads past the count return).
constexpr unsigned kDefaultBlock = 256;

struct DeviceState {
  std::string arch;  // gcnArchName: gfx90a:sramecc+:xnack-
  std::once_flag started;
  std::string start_error;
  hipStream_t stream = nullptr;
};

struct HipCode : detail::LoadedCode {
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

class HipBackend final : public detail::Backend {
 public:
  HipBackend(const HipApi& api, std::vector<std::unique_ptr<DeviceState>> devices, BackendInfo info)
      : Backend(std::move(info)), api_(api), devices_(std::move(devices)) {}

  int device_count() const override { return static_cast<int>(devices_.size()); }

  // ---- memory ----

  void* allocate(int device, size_t bytes) override {
    started(device);
    void* p = nullptr;
    hipError_t e = api_.Malloc(&p, std::max<size_t>(bytes, 64));
    if (e != 0 || !p)
      throw DeviceError(
          fmt::format("HIP device {} cannot allocate {} bytes: {}", device, bytes, api_.error(e)));
    std::lock_guard lock(mutex_);
    memory_[reinterpret_cast<uintptr_t>(p)] = std::max<size_t>(bytes, 1);
    return p;
  }

  void release(int device, void* ptr) override {
    {
      std::lock_guard lock(mutex_);
      memory_.erase(reinterpret_cast<uintptr_t>(ptr));
    }
    api_.SetDevice(device);
    api_.Free(ptr);  // the runtime waited for the device's queued work first
  }

  bool owns(const void* address) override {
    auto a = reinterpret_cast<uintptr_t>(address);
    std::lock_guard lock(mutex_);
    auto it = memory_.upper_bound(a);
    return it != memory_.begin() && a - std::prev(it)->first < std::prev(it)->second;
  }

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
      // 8-byte patterns: HIP has no such memset; copy the pattern from the host in chunks.
      constexpr size_t kChunk = 1 << 16;
      std::vector<char> block(std::min(count, kChunk) * pattern_bytes);
      for (size_t i = 0; i * pattern_bytes < block.size(); ++i)
        std::memcpy(block.data() + i * pattern_bytes, pattern, pattern_bytes);
      for (size_t done = 0; done < count; done += kChunk) {
        size_t n = std::min(kChunk, count - done) * pattern_bytes;
        check(api_.MemcpyAsync(static_cast<char*>(dst) + done * pattern_bytes, block.data(), n,
                               hipMemcpyHostToDevice, s),
              "filling a buffer");
        check(api_.StreamSynchronize(s), "filling a buffer");  // `block` is reused
      }
    }
  }

  // ---- code ----

  std::string cache_target(int device) override {
    int rtc_major = 0, rtc_minor = 0, driver = 0;
    api_.RtcVersion(&rtc_major, &rtc_minor);
    api_.DriverGetVersion(&driver);
    return fmt::format("{}; hipRTC {}.{}; driver {}; options {}", devices_.at(device)->arch,
                       rtc_major, rtc_minor, driver,
                       fmt::join(hiprtc_options(devices_.at(device)->arch), " "));
  }

  std::string compile(const ir::Kernel& k, const detail::CompileOptions& o, int device) override {
    return compile_artifact(k, o, started(device).arch);
  }

  std::unique_ptr<detail::LoadedCode> load(const std::string& artifact, const ir::Kernel& k,
                                           const detail::CompileOptions& o, int device) override {
    started(device);
    if (!is_code_object(artifact))
      throw DeviceError(
          fmt::format("kernel '{}': the cached HIP code object is malformed", k.name));
    auto code = std::make_unique<HipCode>();
    code->api = &api_;
    hipError_t e = api_.ModuleLoadData(&code->module, artifact.data());
    if (e != 0)
      throw DeviceError(fmt::format("kernel '{}': HIP could not load the code object for {}: {}",
                                    k.name, devices_.at(device)->arch, api_.error(e)));
    auto function = [&](const std::string& name) {
      hipFunction_t f = nullptr;
      hipError_t err = api_.ModuleGetFunction(&f, code->module, name.c_str());
      if (err != 0)
        throw DeviceError(fmt::format("kernel '{}': the HIP code object has no entry '{}': {}",
                                      k.name, name, api_.error(err)));
      return f;
    };
    code->main = function(o.symbol_prefix);
    if (k.result) code->result = function(o.symbol_prefix + "_result");
    return code;
  }

  void launch(detail::LoadedCode& base, const ir::Kernel& k, const detail::LaunchArgs& a,
              int device) override {
    auto& code = static_cast<HipCode&>(base);
    hipStream_t s = stream(device);
    // Every argument is at most 8 bytes: one slot each, its value in the low bytes.
    std::vector<uint64_t> slots;
    for (size_t p = 0; p < k.params.size(); ++p) {
      const ir::Param& param = k.params[p];
      if (param.is_local_array()) continue;
      if (param.type.is_array()) {
        slots.push_back(reinterpret_cast<uintptr_t>(a.params[p].data));
        for (int d = 0; d < param.type.rank; ++d)
          slots.push_back(static_cast<uint64_t>(a.params[p].shape[d]));
      } else {
        slots.push_back(a.params[p].scalar);
      }
    }
    for (size_t d = 0; d < k.dims.size(); ++d)
      for (int64_t v : {a.start[d], a.step[d], a.count[d]})
        slots.push_back(static_cast<uint64_t>(v));
    slots.push_back(reinterpret_cast<uintptr_t>(a.debug_record));
    slots.push_back(0);  // the result pointer, passed to `<entry>_result` only
    std::vector<void*> params(slots.size());
    for (size_t i = 0; i < slots.size(); ++i) params[i] = &slots[i];

    uint64_t total = detail::launch_threads(k, a);
    if (total > 0) {
      unsigned block =
          k.workgroup_size > 0 ? static_cast<unsigned>(k.workgroup_size) : kDefaultBlock;
      uint64_t blocks = (total + block - 1) / block;
      if (blocks > 0x7fffffffu)
        throw ValueError(fmt::format(
            "kernel '{}': {} iterations are more than HIP launches at once", k.name, total));
      hipError_t e = api_.ModuleLaunchKernel(code.main, static_cast<unsigned>(blocks), 1, 1, block,
                                             1, 1, 0, s, params.data(), nullptr);
      if (e != 0)
        throw DeviceError(
            fmt::format("kernel '{}': HIP could not queue the launch of {} threads: {}", k.name,
                        total, api_.error(e)));
    }
    if (k.result && a.result) {
      // One thread computes the value after the loop; the read waits for it.
      void* out = nullptr;
      hipError_t e = api_.Malloc(&out, 8);
      if (e != 0)
        throw DeviceError(
            fmt::format("kernel '{}': no HIP memory for the result: {}", k.name, api_.error(e)));
      slots.back() = reinterpret_cast<uintptr_t>(out);
      e = api_.ModuleLaunchKernel(code.result, 1, 1, 1, 1, 1, 1, 0, s, params.data(), nullptr);
      if (e == 0) e = api_.MemcpyAsync(a.result, out, 8, hipMemcpyDeviceToHost, s);
      if (e == 0) e = api_.StreamSynchronize(s);
      api_.Free(out);
      if (e != 0)
        throw DeviceError(fmt::format("kernel '{}': computing its return value failed: {}", k.name,
                                      api_.error(e)));
    }
  }

  void synchronize(int device) override {
    DeviceState& d = *devices_.at(device);
    if (!d.stream) return;
    api_.SetDevice(device);
    check(api_.StreamSynchronize(d.stream), "finishing queued work");
  }

  std::string emit(const ir::Kernel& k, const detail::CompileOptions& o, bool) override {
    return generate(k, o);
  }

 private:
  DeviceState& started(int device) {
    DeviceState& d = *devices_.at(device);
    std::call_once(d.started, [&] {
      hipError_t e = api_.SetDevice(device);
      if (e == 0) e = api_.StreamCreate(&d.stream);
      if (e != 0)
        d.start_error =
            fmt::format("HIP device {} ({}) has no stream: {}", device, d.arch, api_.error(e));
    });
    if (!d.start_error.empty()) throw DeviceError(d.start_error);
    api_.SetDevice(device);  // HIP's current device is per thread
    return d;
  }
  hipStream_t stream(int device) { return started(device).stream; }

  void check(hipError_t e, const char* what) const {
    if (e != 0) throw DeviceError(fmt::format("HIP: {} failed: {}", what, api_.error(e)));
  }

  const HipApi& api_;
  std::vector<std::unique_ptr<DeviceState>> devices_;
  std::mutex mutex_;                    // guards memory_
  std::map<uintptr_t, size_t> memory_;  // allocations: address -> bytes
};

BackendInfo make_info() {
  BackendInfo i;
  i.name = "hip";
  i.label = "HIP";
  for (DType t : kAllDTypes) i.supported_dtypes.insert(t);
  i.supported_atomic_dtypes = {DType::I32, DType::U32, DType::I64,
                               DType::U64, DType::F32, DType::F64};
  i.supports_device_reductions = false;
  i.supports_workgroups = true;
  i.max_workgroup_size = kMaxBlock;
  i.device_memory_spaces = {"hip"};
  i.asynchronous = true;
  return i;
}

}  // namespace

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

Probe make_hip_backend() {
  Probe probe;
  const HipApi& api = hip_api();
  if (!api.runtime_missing.empty()) {
    probe.reason = api.runtime_missing;
    return probe;
  }
  if (!api.rtc_missing.empty()) {
    probe.reason = api.rtc_missing;
    return probe;
  }
  // hipInit first: nothing else is valid when it fails.
  api.share_environment();
  if (hipError_t e = api.Init(0); e != 0) {
    probe.reason = fmt::format(
        "hipInit failed with {} ({} loaded): there is no AMD GPU here, or its driver (amdgpu, "
        "/dev/kfd) is not usable by this user",
        api.error(e), api.library);
    return probe;
  }
  int n = 0;
  if (hipError_t e = api.GetDeviceCount(&n); e != 0 || n <= 0) {
    probe.reason = fmt::format("HIP has no device here ({})",
                               e != 0 ? api.error(e) : std::string("hipGetDeviceCount gave 0"));
    return probe;
  }
  std::vector<std::unique_ptr<DeviceState>> devices;
  for (int i = 0; i < n; ++i) {
    auto d = std::make_unique<DeviceState>();
    std::vector<char> props(16384, '\0');  // larger than hipDeviceProp_t in any release
    if (hipError_t e = api.GetDeviceProperties(props.data(), i); e != 0) {
      probe.reason = fmt::format("HIP cannot describe device {}: {}", i, api.error(e));
      return probe;
    }
    d->arch = find_arch_name(props.data(), props.size());
    if (d->arch.empty()) {
      probe.reason = fmt::format("HIP device {} reports no gfx architecture", i);
      return probe;
    }
    devices.push_back(std::move(d));
  }
  probe.backend = std::make_unique<HipBackend>(api, std::move(devices), make_info());
  return probe;
}

}  // namespace tack::hip
