#include "backends/cpu/kernel_loader.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

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

// The program headers of the checked image, or nullopt when it is not a 64-bit ELF file whose
// headers lie within it.
std::optional<std::vector<Elf64_Phdr>> program_headers(std::string_view image) {
  Elf64_Ehdr eh;
  if (image.size() < sizeof eh) return std::nullopt;
  std::memcpy(&eh, image.data(), sizeof eh);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phoff > image.size() ||
      uint64_t{eh.e_phnum} * sizeof(Elf64_Phdr) > image.size() - eh.e_phoff)
    return std::nullopt;
  std::vector<Elf64_Phdr> out(eh.e_phnum);
  std::memcpy(out.data(), image.data() + eh.e_phoff, out.size() * sizeof(Elf64_Phdr));
  for (const Elf64_Phdr& ph : out)
    if (ph.p_type == PT_LOAD &&
        (ph.p_offset > image.size() || ph.p_filesz > image.size() - ph.p_offset))
      return std::nullopt;
  return out;
}

// Where the checked code of an object opened from the disk cache's file lies in the process.
struct CheckedCode {
  uintptr_t base = 0;
  std::vector<Elf64_Phdr> headers;  // the checked image's
  bool contains(const void* address) const {
    const auto a = reinterpret_cast<uintptr_t>(address);
    for (const Elf64_Phdr& ph : headers)
      if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) && (ph.p_flags & PF_W) == 0 &&
          a >= base + ph.p_vaddr && a - (base + ph.p_vaddr) < ph.p_filesz)
        return true;
    return false;
  }
};

// The program headers the loader mapped the object at `base` by.
std::span<const Elf64_Phdr> mapped_headers(uintptr_t base) {
  struct Search {
    uintptr_t base;
    std::span<const Elf64_Phdr> found;
  } search{base, {}};
  ::dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* s = static_cast<Search*>(data);
        if (info->dlpi_addr != s->base) return 0;
        s->found = {info->dlpi_phdr, info->dlpi_phnum};
        return 1;
      },
      &search);
  return search.found;
}

// The code of an object dlopen mapped from the disk cache's file, when it was mapped by the
// checked program headers and its code and read-only data are the checked bytes; nullopt when
// they differ (the file changed in between). A writable segment (only objects that call the C
// library have one: its functions' addresses, and the dynamic section) is not compared: the
// loader writes to it.
std::optional<CheckedCode> checked_code(void* handle, std::string_view image) {
  std::optional<std::vector<Elf64_Phdr>> headers = program_headers(image);
  link_map* map = nullptr;
  if (!headers || ::dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr ||
      map->l_addr == 0)
    return std::nullopt;
  // Mapped by the same headers, the ranges compared below are the ones the loader mapped.
  const std::span<const Elf64_Phdr> mapped = mapped_headers(map->l_addr);
  if (mapped.size() != headers->size() ||
      std::memcmp(mapped.data(), headers->data(), mapped.size_bytes()) != 0)
    return std::nullopt;
  for (const Elf64_Phdr& ph : *headers)
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_W) == 0 &&
        std::memcmp(reinterpret_cast<const void*>(map->l_addr + ph.p_vaddr),
                    image.data() + ph.p_offset, ph.p_filesz) != 0)
      return std::nullopt;
  return CheckedCode{map->l_addr, std::move(*headers)};
}

class Loader {
 public:
  LoadedKernel load(std::string_view image, const std::string& stored_at, const std::string& prefix,
                    bool has_result) {
    std::lock_guard lock(mutex_);
    if (auto it = loaded_.find(prefix); it != loaded_.end()) return it->second;
    std::optional<LoadedKernel> k;
    if (!stored_at.empty()) k = load_stored(image, stored_at, prefix, has_result);
    if (!k) k = load_copy(image, prefix, has_result);
    loaded_[prefix] = *k;
    return *k;
  }

 private:
  static DeviceError failure(const std::string& prefix, const std::string& why) {
    return DeviceError(fmt::format("cannot load the compiled kernel {}: {}", prefix, why));
  }

  // The entry points of a loaded object, or nullopt (the handle closed, `*why` set) when one is
  // missing or, given `checked`, lies outside the checked code.
  static std::optional<LoadedKernel> entries(void* handle, const std::string& prefix,
                                             bool has_result, std::string* why,
                                             const CheckedCode* checked = nullptr) {
    const auto find = [&](const std::string& symbol) -> void* {
      void* p = ::dlsym(handle, symbol.c_str());
      if (p == nullptr)
        *why = "it has no symbol " + symbol;
      else if (checked && !checked->contains(p))
        *why = symbol + " is not in its checked code";
      else
        return p;
      return nullptr;
    };
    LoadedKernel k;
    k.chunk = reinterpret_cast<ChunkFn>(find(codegen::chunk_symbol(prefix)));
    if (k.chunk && has_result)
      k.result = reinterpret_cast<ResultFn>(find(codegen::result_symbol(prefix)));
    if (!k.chunk || (has_result && !k.result)) {
      ::dlclose(handle);  // a damaged object: the recompiled one is loaded anew
      return std::nullopt;
    }
    k.has_streamed_stores = ::dlsym(handle, codegen::streams_symbol(prefix).c_str()) != nullptr;
    return k;
  }

  // The disk cache's entry, opened where it lies: a file that begins with `image` in the checked
  // cache directory, whose parents only the user and root can change (private_dir.hpp). This
  // spares a copy in memory and a path through /proc, the most of a warm first call's loading.
  // nullopt, for the copy in memory instead, when anything differs from the checked bytes.
  std::optional<LoadedKernel> load_stored(std::string_view image, const std::string& stored_at,
                                          const std::string& prefix, bool has_result) {
    // dlopen replaces $ORIGIN and $LIB in a name, a path too: one with a '$' could name another
    // file, whose constructors would run before it is compared.
    if (stored_at.find('$') != std::string::npos) return std::nullopt;
    void* handle = ::dlopen(stored_at.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) return std::nullopt;
    const std::optional<CheckedCode> checked = checked_code(handle, image);
    if (!checked) {
      ::dlclose(handle);
      return std::nullopt;
    }
    std::string why;
    return entries(handle, prefix, has_result, &why, &*checked);
  }

  // A sealed file in memory holding exactly `image`: nothing can change it once it is written.
  LoadedKernel load_copy(std::string_view image, const std::string& prefix, bool has_result) {
    const std::string name = "tack-kernel " + prefix;
    cache_file::Fd fd(executable_memfd(name));
    if (fd.get() < 0) throw failure(prefix, fmt::format("memfd_create: {}", std::strerror(errno)));
    if (!cache_file::write_all(fd.get(), image))
      throw failure(prefix, fmt::format("write: {}", std::strerror(errno)));
    if (::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) !=
        0)
      throw failure(prefix, fmt::format("sealing: {}", std::strerror(errno)));
    const std::string path = unique_path(fd.get(), loads_++);
    // RTLD_LOCAL: its symbols never resolve anyone else's. The mapping outlives the descriptor.
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = ::dlerror();
      throw failure(prefix, why ? why : "dlopen failed");
    }
    std::string why;
    if (std::optional<LoadedKernel> k = entries(handle, prefix, has_result, &why)) return *k;
    throw failure(prefix, why);
  }

  std::mutex mutex_;
  std::unordered_map<std::string, LoadedKernel> loaded_;
  uint64_t loads_ = 0;
};

}  // namespace

LoadedKernel load_kernel(std::string_view shared_object, const std::string& stored_at,
                         const std::string& prefix, bool has_result) {
  static auto* loader = new Loader();  // leaked: kernels may run during static destruction
  return loader->load(shared_object, stored_at, prefix, has_result);
}

}  // namespace tack::cpu
