#include "backends/cuda/cu_api.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <glob.h>

#include <cstdlib>
#include <vector>

#include "backends/gpu/vendor_library.hpp"

namespace tack::cuda {
namespace {

// Binds every function of a table; returns the names missing, comma-separated.
template <typename Table>
std::string bind(void* lib, Table& t);

template <>
std::string bind(void* lib, CuApi& t) {
  std::string missing;
#define TACK_CU_BIND(member, symbol, ...) backends::bind_symbol(lib, t.member, symbol, missing);
  TACK_CU_FUNCTIONS(TACK_CU_BIND)
#undef TACK_CU_BIND
  return missing;
}

template <>
std::string bind(void* lib, NvrtcApi& t) {
  std::string missing;
#define TACK_NVRTC_BIND(member, symbol, ...) backends::bind_symbol(lib, t.member, symbol, missing);
  TACK_NVRTC_FUNCTIONS(TACK_NVRTC_BIND)
#undef TACK_NVRTC_BIND
  return missing;
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// Files matching a glob pattern, sorted, newest version last.
std::vector<std::string> matching(const std::string& pattern) {
  std::vector<std::string> out;
  glob_t g{};
  if (glob(pattern.c_str(), 0, nullptr, &g) == 0)
    for (size_t i = 0; i < g.gl_pathc; ++i) out.push_back(g.gl_pathv[i]);
  globfree(&g);
  return out;
}

}  // namespace

std::string CuApi::load() {
  std::string path = backends::library_path("TACK_CUDA_LIBRARY", "libcuda.so.1");
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    return fmt::format(
        "the CUDA driver library '{}' cannot be loaded ({}): CUDA needs an NVIDIA GPU and its "
        "driver (libcuda.so.1 comes with the driver, not with the CUDA toolkit)",
        path, dlerror());
  if (std::string missing = bind(lib, *this); !missing.empty())
    return fmt::format(
        "'{}' lacks CUDA driver functions ({}): install a driver for CUDA 11 or later", path,
        missing);
  // cuInit first: no other call is valid before it succeeds.
  if (CUresult r = Init(0); r != CUDA_SUCCESS)
    return fmt::format("the CUDA driver '{}' did not initialize (cuInit: {}): no usable NVIDIA GPU",
                       path, error_name(r));
  return "";
}

std::string CuApi::error_name(CUresult r) const {
  const char* name = nullptr;
  if (GetErrorName && GetErrorName(r, &name) == CUDA_SUCCESS && name)
    return fmt::format("{} ({})", name, r);
  return fmt::format("CUDA error {}", r);
}

std::string NvrtcApi::load() {
  std::vector<std::string> candidates;
  if (std::string p = env("TACK_NVRTC_LIBRARY"); !p.empty()) {
    candidates.push_back(p);  // only this one: the user said where it is
  } else {
    std::vector<std::string> roots;
    for (const char* var : {"CUDA_PATH", "CUDA_HOME"})
      if (std::string v = env(var); !v.empty()) roots.push_back(v);
    roots.push_back("/usr/local/cuda");
    for (const std::string& root : roots)
      for (const char* rel : {"lib64/libnvrtc.so", "targets/x86_64-linux/lib/libnvrtc.so",
                              "targets/sbsa-linux/lib/libnvrtc.so", "lib/libnvrtc.so"})
        for (const std::string& f : matching(root + "/" + rel + "*"))
          if (f.find(".alt.") == std::string::npos) candidates.push_back(f);
    // The nvidia-cuda-nvrtc wheel (nvidia/cuda_nvrtc/lib for CUDA 12, nvidia/cu13/lib for 13)
    // in the active Python environment.
    for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"})
      if (std::string prefix = env(var); !prefix.empty())
        for (const char* sub : {"cu13", "cuda_nvrtc"})
          for (const std::string& f : matching(fmt::format(
                   "{}/lib/python3*/site-packages/nvidia/{}/lib/libnvrtc.so*", prefix, sub)))
            candidates.push_back(f);
    for (const char* name : {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"})
      candidates.push_back(name);  // LD_LIBRARY_PATH and the loader's cache
  }
  void* lib = nullptr;
  std::string first_error;
  for (const std::string& c : candidates) {
    lib = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib) {
      path = c;
      break;
    }
    if (first_error.empty()) first_error = dlerror();
  }
  if (!lib)
    return fmt::format(
        "NVRTC (libnvrtc.so) was not found ({}): install the CUDA toolkit (CUDA_PATH, CUDA_HOME "
        "or /usr/local/cuda) or `pip install nvidia-cuda-nvrtc`, or set TACK_NVRTC_LIBRARY",
        first_error);
  if (std::string missing = bind(lib, *this); !missing.empty())
    return fmt::format("'{}' lacks NVRTC functions ({})", path, missing);
  Version(&major, &minor);
  return "";
}

}  // namespace tack::cuda
