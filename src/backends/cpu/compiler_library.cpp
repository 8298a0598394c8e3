// Loading the compiler library (cpu_compiler.hpp) from libtack's own directory.
#include <dlfcn.h>

#include <filesystem>
#include <mutex>

#include <fmt/format.h>

#include "backends/cpu/cpu_compiler.hpp"
#include "runtime/source_id.hpp"
#include "tack/error.hpp"

namespace tack::cpu {
namespace {

// The directory of the library this function is part of, as the dynamic loader found it. The
// compiler library is taken from there and nowhere else: not from a search path or the current
// directory, which someone else might be able to write.
std::filesystem::path own_directory() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<const void*>(&own_directory), &info) == 0 ||
      info.dli_fname == nullptr)
    return {};
  std::error_code ec;
  std::filesystem::path path = std::filesystem::absolute(info.dli_fname, ec);
  return ec ? std::filesystem::path() : path.parent_path();
}

struct Loaded {
  Compiler* compiler = nullptr;
  std::string error;  // why it could not be loaded
};

Loaded load() {
  Loaded out;
  const std::filesystem::path dir = own_directory();
  if (dir.empty()) {
    out.error =
        "the CPU backend cannot compile: the directory of libtack is unknown, so its "
        "compiler library cannot be found";
    return out;
  }
  const std::string path = (dir / kCompilerLibrary).string();
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    out.error = fmt::format(
        "the CPU backend cannot compile: its compiler library {} does not load ({}). It is "
        "installed next to libtack; reinstall Tack to restore it. Kernels already in the disk "
        "cache still run",
        path, why ? why : "no reason given");
    return out;
  }
  auto entry = reinterpret_cast<CompilerEntry>(::dlsym(handle, kCompilerEntry));
  const char* its_id = nullptr;
  Compiler* c = entry ? entry(&its_id) : nullptr;
  if (c == nullptr || its_id == nullptr || std::string(its_id) != detail::source_id()) {
    out.error = fmt::format(
        "the CPU backend cannot compile: {} belongs to another build of Tack (sources {}, this "
        "libtack's {}); reinstall Tack so that both come from one build",
        path, its_id ? its_id : "unknown", detail::source_id());
    return out;
  }
  out.compiler = c;
  return out;
}

}  // namespace

Compiler& compiler() {
  static std::once_flag once;
  static Loaded* loaded = nullptr;  // leaked: compiled kernels may be needed during exit
  std::call_once(once, [] { loaded = new Loaded(load()); });
  if (loaded->compiler == nullptr) throw DeviceError(loaded->error);
  return *loaded->compiler;
}

CompiledKernel compile_kernel(const ir::Kernel& k, const codegen::LlvmOptions& options,
                              const HostTarget& target, bool keep_ir) {
  CompiledKernel out = compiler().compile(k, options, target, keep_ir);
  if (out.error.empty()) return out;
  if (out.internal_error) throw Error(out.error);
  throw DeviceError(fmt::format("kernel '{}': {}", k.name, out.error));
}

}  // namespace tack::cpu
