#include "backends/cpu/kernel_loader.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include <fmt/format.h>

#include "codegen/llvm/abi.hpp"
#include "runtime/cache_file.hpp"
#include "tack/error.hpp"

namespace tack::cpu {
namespace {

// The name dlopen gets for the descriptor `fd`. glibc returns an object already loaded under the
// same name without opening the file, and a descriptor's number is reused once it is closed, so
// each load spells its path differently: `n` in "./" (0) and ".//" (1) components, which the
// kernel resolves away.
std::string unique_path(int fd, uint64_t n) {
  std::string path = "/proc/self/fd/";
  do {
    path += (n & 1) ? ".//" : "./";
    n >>= 1;
  } while (n != 0);
  return path + std::to_string(fd);
}

// A file in memory that may be mapped executable. Where the system makes such files non-executable
// by default (vm.memfd_noexec = 1, Linux 6.3 and later), only MFD_EXEC allows it; older kernels do
// not know the flag (EINVAL) and need none.
int executable_memfd(const std::string& name) {
  constexpr unsigned kExec = 0x0010U;  // MFD_EXEC, newer than the C library's headers
  const int fd = ::memfd_create(name.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING | kExec);
  if (fd >= 0 || errno != EINVAL) return fd;
  return ::memfd_create(name.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING);
}

class Loader {
 public:
  LoadedKernel load(std::string_view image, const std::string& prefix, bool has_result) {
    std::lock_guard lock(mutex_);
    if (auto it = loaded_.find(prefix); it != loaded_.end()) return it->second;
    const auto fail = [&](const std::string& why) {
      return DeviceError(fmt::format("cannot load the compiled kernel {}: {}", prefix, why));
    };
    // A sealed file in memory holding exactly `image`: nothing can change it once it is written.
    const std::string name = "tack-kernel " + prefix;
    cache_file::Fd fd(executable_memfd(name));
    if (fd.get() < 0) throw fail(fmt::format("memfd_create: {}", std::strerror(errno)));
    if (!cache_file::write_all(fd.get(), image))
      throw fail(fmt::format("write: {}", std::strerror(errno)));
    if (::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) !=
        0)
      throw fail(fmt::format("sealing: {}", std::strerror(errno)));
    const std::string path = unique_path(fd.get(), loads_++);
    // RTLD_LOCAL: its symbols never resolve anyone else's. The mapping outlives the descriptor.
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = ::dlerror();
      throw fail(why ? why : "dlopen failed");
    }
    const auto find = [&](const std::string& symbol) {
      void* p = ::dlsym(handle, symbol.c_str());
      if (p == nullptr) {
        ::dlclose(handle);  // a damaged object: the recompiled one is loaded anew
        throw fail("it has no symbol " + symbol);
      }
      return p;
    };
    LoadedKernel k;
    k.chunk = reinterpret_cast<ChunkFn>(find(codegen::chunk_symbol(prefix)));
    if (has_result) k.result = reinterpret_cast<ResultFn>(find(codegen::result_symbol(prefix)));
    k.has_streamed_stores = ::dlsym(handle, codegen::streams_symbol(prefix).c_str()) != nullptr;
    loaded_[prefix] = k;
    return k;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, LoadedKernel> loaded_;
  uint64_t loads_ = 0;
};

}  // namespace

LoadedKernel load_kernel(std::string_view shared_object, const std::string& prefix,
                         bool has_result) {
  static auto* loader = new Loader();  // leaked: kernels may run during static destruction
  return loader->load(shared_object, prefix, has_result);
}

}  // namespace tack::cpu
