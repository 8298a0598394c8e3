#include "backends/hip/hip_api.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <link.h>
#include <unistd.h>

#include <cstdlib>

#include "backends/gpu/vendor_library.hpp"
#include "tack/error.hpp"

namespace tack::hip {
namespace {

using backends::bind_symbol;

HipApi load() {
  HipApi api;
  const char* env = std::getenv("TACK_HIP_LIBRARY");
  std::vector<std::string> candidates;
  if (env && *env)
    candidates = {env};
  else
    candidates = {"libamdhip64.so.5", "libamdhip64.so.6", "libamdhip64.so"};
  void* lib = nullptr;
  std::string why;
  for (const std::string& name : candidates) {
    // Never closed (vendor_library.hpp).
    lib = dlmopen(LM_ID_NEWLM, name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib) {
      api.library = name;
      break;
    }
    const char* e = dlerror();
    why += fmt::format("{}{}", why.empty() ? "" : "; ", e ? e : name);
  }
  if (!lib) {
    api.runtime_missing = api.rtc_missing = fmt::format(
        "the HIP runtime ({}) cannot be loaded ({}): install ROCm's libamdhip64 (Debian: "
        "apt-get install libamdhip64-dev rocm-device-libs) and an AMD GPU driver",
        fmt::join(candidates, ", "), why);
    return api;
  }
  api.environment = static_cast<char***>(dlsym(lib, "environ"));
  std::string missing;
  bind_symbol(lib, api.Init, "hipInit", missing);
  bind_symbol(lib, api.GetDeviceCount, "hipGetDeviceCount", missing);
  bind_symbol(lib, api.SetDevice, "hipSetDevice", missing);
  api.GetDeviceProperties = reinterpret_cast<decltype(api.GetDeviceProperties)>(
      dlsym(lib, "hipGetDevicePropertiesR0600"));
  if (!api.GetDeviceProperties)
    bind_symbol(lib, api.GetDeviceProperties, "hipGetDeviceProperties", missing);
  bind_symbol(lib, api.DriverGetVersion, "hipDriverGetVersion", missing);
  bind_symbol(lib, api.GetErrorString, "hipGetErrorString", missing);
  bind_symbol(lib, api.StreamCreate, "hipStreamCreate", missing);
  bind_symbol(lib, api.StreamSynchronize, "hipStreamSynchronize", missing);
  bind_symbol(lib, api.Malloc, "hipMalloc", missing);
  bind_symbol(lib, api.Free, "hipFree", missing);
  bind_symbol(lib, api.MemcpyAsync, "hipMemcpyAsync", missing);
  bind_symbol(lib, api.MemsetD8Async, "hipMemsetD8Async", missing);
  bind_symbol(lib, api.MemsetD16Async, "hipMemsetD16Async", missing);
  bind_symbol(lib, api.MemsetD32Async, "hipMemsetD32Async", missing);
  bind_symbol(lib, api.ModuleLoadData, "hipModuleLoadData", missing);
  bind_symbol(lib, api.ModuleUnload, "hipModuleUnload", missing);
  bind_symbol(lib, api.ModuleGetFunction, "hipModuleGetFunction", missing);
  bind_symbol(lib, api.ModuleLaunchKernel, "hipModuleLaunchKernel", missing);
  bind_symbol(lib, api.Array3DCreate, "hipArray3DCreate", missing);
  bind_symbol(lib, api.ArrayDestroy, "hipArrayDestroy", missing);
  bind_symbol(lib, api.Memcpy3DAsync, "hipMemcpy3DAsync", missing);
  bind_symbol(lib, api.TexObjectCreate, "hipTexObjectCreate", missing);
  bind_symbol(lib, api.TexObjectDestroy, "hipTexObjectDestroy", missing);
  if (!missing.empty())
    api.runtime_missing = fmt::format(
        "'{}' lacks HIP runtime functions ({}): install ROCm 5 or later", api.library, missing);

  // hipRTC: inside libamdhip64 up to ROCm 5, its own libhiprtc.so since ROCm 6, loaded into the
  // same namespace.
  void* rtc = lib;
  if (!dlsym(rtc, "hiprtcCompileProgram")) {
    Lmid_t lmid = LM_ID_BASE;
    rtc = nullptr;
    if (dlinfo(lib, RTLD_DI_LMID, &lmid) == 0)
      for (const char* name : {"libhiprtc.so.6", "libhiprtc.so"})
        if ((rtc = dlmopen(lmid, name, RTLD_NOW | RTLD_LOCAL))) break;
  }
  if (!rtc) {
    api.rtc_missing = fmt::format(
        "hipRTC is neither in '{}' nor in libhiprtc.so: install ROCm's hipRTC (Debian: "
        "apt-get install libamdhip64-dev rocm-device-libs)",
        api.library);
    return api;
  }
  missing.clear();
  bind_symbol(rtc, api.RtcVersion, "hiprtcVersion", missing);
  bind_symbol(rtc, api.RtcCreateProgram, "hiprtcCreateProgram", missing);
  bind_symbol(rtc, api.RtcCompileProgram, "hiprtcCompileProgram", missing);
  bind_symbol(rtc, api.RtcGetProgramLogSize, "hiprtcGetProgramLogSize", missing);
  bind_symbol(rtc, api.RtcGetProgramLog, "hiprtcGetProgramLog", missing);
  bind_symbol(rtc, api.RtcGetCodeSize, "hiprtcGetCodeSize", missing);
  bind_symbol(rtc, api.RtcGetCode, "hiprtcGetCode", missing);
  bind_symbol(rtc, api.RtcDestroyProgram, "hiprtcDestroyProgram", missing);
  if (!missing.empty())
    api.rtc_missing = fmt::format("hipRTC lacks functions ({}): install ROCm 5 or later", missing);
  return api;
}

}  // namespace

std::string HipApi::error(hipError_t e) const {
  const char* s = GetErrorString ? GetErrorString(e) : nullptr;
  return s ? fmt::format("{} ({})", s, e) : fmt::format("HIP error {}", e);
}

void HipApi::share_environment() const {
  if (environment) *environment = ::environ;
}

const HipApi& hip_api() {
  static const HipApi api = load();
  return api;
}

std::vector<std::string> hiprtc_options(const std::string& arch) {
  // No fast math: clang contracts a * b + c into FMAs by default for HIP; division and sqrt stay
  // correctly rounded (hipRTC's default without -ffast-math).
  return {"--offload-arch=" + arch, "-ffp-contract=off"};
}

std::string compile_code_object(const HipApi& api, const std::string& source,
                                const std::string& arch, const std::string& kernel_name) {
  if (!api.rtc_missing.empty()) throw DeviceError(api.rtc_missing);
  api.share_environment();
  hiprtcProgram prog = nullptr;
  std::string file = kernel_name + ".hip";
  if (api.RtcCreateProgram(&prog, source.c_str(), file.c_str(), 0, nullptr, nullptr) != 0)
    throw DeviceError(fmt::format("kernel '{}': hipRTC could not create a program", kernel_name));
  std::vector<std::string> options = hiprtc_options(arch);
  std::vector<const char*> argv;
  for (const std::string& o : options) argv.push_back(o.c_str());
  hiprtcResult rc = api.RtcCompileProgram(prog, static_cast<int>(argv.size()), argv.data());
  std::string code;
  if (rc == 0) {
    size_t n = 0;
    if (api.RtcGetCodeSize(prog, &n) == 0 && n > 0) {
      code.assign(n, '\0');
      if (api.RtcGetCode(prog, code.data()) != 0) code.clear();
    }
  }
  if (rc != 0 || code.empty()) {
    size_t n = 0;
    std::string log;
    if (api.RtcGetProgramLogSize(prog, &n) == 0 && n > 0) {
      log.assign(n, '\0');
      api.RtcGetProgramLog(prog, log.data());
      while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    }
    api.RtcDestroyProgram(&prog);
    throw DeviceError(fmt::format(
        "kernel '{}': hipRTC could not compile the generated HIP C for {} (error {}); this is a "
        "bug in Tack's HIP generator, please report it with `tack emit --backend hip`. Log:\n{}",
        kernel_name, arch, rc, log));
  }
  api.RtcDestroyProgram(&prog);
  return code;
}

}  // namespace tack::hip
