#include "backends/level_zero/ze_api.hpp"

#include <fmt/format.h>

#include "backends/gpu/vendor_library.hpp"
#include "tack/error.hpp"

namespace tack::level_zero {

std::string ZeApi::load() {
  std::string path = backends::library_path("TACK_LEVEL_ZERO_LIBRARY", "libze_loader.so.1");
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    return fmt::format(
        "the Level Zero loader '{}' cannot be loaded ({}): install it and Intel's GPU driver "
        "(apt-get install libze1 intel-level-zero-gpu)",
        path, dlerror());
  std::string missing;
#define TACK_ZE_LOAD(name) backends::bind_symbol(lib, name, "ze" #name, missing);
  TACK_ZE_FUNCTIONS(TACK_ZE_LOAD)
#undef TACK_ZE_LOAD
  if (!missing.empty())
    return fmt::format("'{}' lacks Level Zero 1.4 functions ({}): install libze1 1.8 or later",
                       path, missing);
  return "";
}

std::string result_name(ze_result_t r) {
  const char* name = nullptr;
  switch (r) {
#define TACK_ZE_RESULT(c) \
  case c:                 \
    name = #c;            \
    break;
    TACK_ZE_RESULT(ZE_RESULT_NOT_READY)
    TACK_ZE_RESULT(ZE_RESULT_ERROR_DEVICE_LOST)
    TACK_ZE_RESULT(ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY)
    TACK_ZE_RESULT(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)
    TACK_ZE_RESULT(ZE_RESULT_ERROR_MODULE_BUILD_FAILURE)
    TACK_ZE_RESULT(ZE_RESULT_ERROR_MODULE_LINK_FAILURE)
    TACK_ZE_RESULT(ZE_RESULT_ERROR_UNINITIALIZED)
    TACK_ZE_RESULT(ZE_RESULT_ERROR_UNSUPPORTED_VERSION)
    TACK_ZE_RESULT(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE)
    TACK_ZE_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT)
    TACK_ZE_RESULT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE)
    TACK_ZE_RESULT(ZE_RESULT_ERROR_INVALID_NULL_POINTER)
    TACK_ZE_RESULT(ZE_RESULT_ERROR_INVALID_SIZE)
    TACK_ZE_RESULT(ZE_RESULT_ERROR_UNSUPPORTED_SIZE)
    TACK_ZE_RESULT(ZE_RESULT_ERROR_INVALID_NATIVE_BINARY)
    TACK_ZE_RESULT(ZE_RESULT_ERROR_INVALID_KERNEL_NAME)
    TACK_ZE_RESULT(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX)
    TACK_ZE_RESULT(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE)
    TACK_ZE_RESULT(ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION)
    TACK_ZE_RESULT(ZE_RESULT_ERROR_UNKNOWN)
#undef TACK_ZE_RESULT
    default:
      break;
  }
  return name ? fmt::format("{} (0x{:x})", name, static_cast<uint32_t>(r))
              : fmt::format("Level Zero error 0x{:x}", static_cast<uint32_t>(r));
}

const Ocloc& ocloc() {
  static const Ocloc loaded = [] {
    Ocloc o;
    const char* env = std::getenv("TACK_OCLOC_LIBRARY");
    std::string path = env && *env ? env : "libocloc.so";
    void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      o.missing = fmt::format(
          "the Intel offline compiler '{}' cannot be loaded ({}): install intel-opencl-icd", path,
          dlerror());
      return o;
    }
    o.invoke = reinterpret_cast<Ocloc::Invoke>(dlsym(lib, "oclocInvoke"));
    o.free_output = reinterpret_cast<Ocloc::FreeOutput>(dlsym(lib, "oclocFreeOutput"));
    o.version = reinterpret_cast<Ocloc::Version>(dlsym(lib, "oclocVersion"));
    if (!o.invoke || !o.free_output)
      o.missing = fmt::format("'{}' lacks oclocInvoke or oclocFreeOutput", path);
    return o;
  }();
  return loaded;
}

OclocOutput ocloc_compile(const std::string& source, const std::string& device,
                          const std::string& options, const std::string& kernel_name) {
  const Ocloc& oc = ocloc();
  if (!oc.missing.empty()) throw DeviceError(oc.missing);
  std::vector<const char*> argv = {"ocloc",     "compile", "-q",           "-file",
                                   "kernel.cl", "-device", device.c_str(), "-output_no_suffix",
                                   "-output",   "kernel"};
  if (!options.empty()) {
    argv.push_back("-options");
    argv.push_back(options.c_str());
  }
  const uint8_t* data = reinterpret_cast<const uint8_t*>(source.c_str());
  uint64_t length = source.size() + 1;  // ocloc reads the terminator too
  const char* name = "kernel.cl";
  uint32_t n = 0;
  uint8_t** outputs = nullptr;
  uint64_t* lengths = nullptr;
  char** names = nullptr;
  int rc = oc.invoke(static_cast<unsigned>(argv.size()), argv.data(), 1, &data, &length, &name, 0,
                     nullptr, nullptr, nullptr, &n, &outputs, &lengths, &names);
  OclocOutput out;
  for (uint32_t i = 0; i < n; ++i) {
    std::string file = names && names[i] ? names[i] : "";
    std::string bytes(reinterpret_cast<const char*>(outputs[i]), lengths[i]);
    auto ends_with = [&](const char* s) {
      std::string suffix = s;
      return file.size() >= suffix.size() &&
             file.compare(file.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    if (ends_with(".spv"))
      out.spirv = bytes;
    else if (ends_with(".log"))
      out.log += bytes;
    else if (file == "kernel" || ends_with(".bin"))
      out.native = bytes;
  }
  oc.free_output(&n, &outputs, &lengths, &names);
  while (!out.log.empty() && (out.log.back() == '\0' || out.log.back() == '\n')) out.log.pop_back();
  if (rc != 0 || out.native.empty() || out.spirv.empty())
    throw DeviceError(fmt::format(
        "kernel '{}': ocloc could not compile the generated OpenCL C for {} (status {}{}{}); "
        "this is a bug in Tack's OpenCL C generator, please report it with `tack emit --backend "
        "level_zero`. Log:\n{}",
        kernel_name, device, rc, out.native.empty() ? ", no native binary" : "",
        out.spirv.empty() ? ", no SPIR-V" : "", out.log));
  return out;
}

}  // namespace tack::level_zero
