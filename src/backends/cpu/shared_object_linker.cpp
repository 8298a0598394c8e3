#include "backends/cpu/shared_object_linker.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <gnu/lib-names.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <lld/Common/Driver.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include "backends/cpu/host_target.hpp"
#include "runtime/cache_file.hpp"

LLD_HAS_DRIVER(elf)

namespace tack::cpu {
namespace {

using cache_file::Fd;

// The path through which lld opens a descriptor of this process.
std::string path_of(const Fd& fd) {
  return fmt::format("/proc/self/fd/{}", fd.get());
}

std::runtime_error system_error(const char* what) {
  return std::runtime_error(
      fmt::format("cannot link the kernel: {}: {}", what, std::strerror(errno)));
}

// Whether the object calls a function it does not define (sinf, printf, memset...).
bool calls_out(const std::string& object) {
  auto file = llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(object, "kernel.o"));
  if (!file) {
    llvm::consumeError(file.takeError());
    return true;  // lld says what is wrong with it
  }
  for (const llvm::object::SymbolRef& sym : (*file)->symbols()) {
    auto flags = sym.getFlags();
    if (flags && (*flags & llvm::object::SymbolRef::SF_Undefined)) return true;
    if (!flags) llvm::consumeError(flags.takeError());
  }
  return false;
}

// The file of the C library `soname` (LIBM_SO, LIBC_SO) that this process has loaded. Asked of
// the dynamic loader by name rather than through the address of one of its functions: under a
// sanitizer, sinf and printf are the sanitizer's interceptors, which live in the program itself,
// and a kernel linked against the program cannot be loaded.
std::string library_path(const char* soname) {
  void* handle = ::dlopen(soname, RTLD_LAZY | RTLD_NOLOAD);
  link_map* map = nullptr;
  const bool found = handle != nullptr && ::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 &&
                     map != nullptr && map->l_name != nullptr && map->l_name[0] != '\0';
  std::string path = found ? map->l_name : "";
  if (handle != nullptr) ::dlclose(handle);
  if (!found)
    throw std::runtime_error(
        fmt::format("cannot link the kernel: {} is not loaded in this process", soname));
  return path;
}

// Runs lld's ELF driver; returns its error output, empty on success. lld keeps global state, so
// links run one at a time; a link that failed in a way lld cannot recover from (it says so) leaves
// it unusable in this process.
std::string run_lld(const std::vector<const char*>& args) {
  static std::mutex mutex;
  static bool broken = false;
  std::lock_guard lock(mutex);
  if (broken) return "lld failed earlier in this process and cannot link again; restart it";
  std::string errors;
  llvm::raw_string_ostream err(errors);
  const lld::Result r = lld::lldMain(args, llvm::nulls(), err, {{lld::Gnu, &lld::elf::link}});
  broken = !r.canRunAgain;
  if (r.retCode != 0 && errors.empty()) errors = fmt::format("lld failed ({})", r.retCode);
  return r.retCode == 0 ? std::string() : errors;
}

}  // namespace

std::string link_shared_object(const std::string& object) {
  // The input: an anonymous file in memory, which lld opens by its /proc path.
  Fd input(::memfd_create("tack-kernel.o", MFD_CLOEXEC));
  if (input.get() < 0) throw system_error("memfd_create");
  if (!cache_file::write_all(input.get(), object)) throw system_error("write");
  const std::string in = path_of(input);
  std::string libm, libc;
  const bool calls = calls_out(object);
  if (calls) {
    // Bound to these libraries' current symbol versions, as a program built here would be (exp's
    // of glibc 2.29, not its compatibility one); a symbol neither defines fails the link (-z defs)
    // rather than the load.
    libm = library_path(LIBM_SO);
    libc = library_path(LIBC_SO);
  }

  // The output: lld writes a file it finds is not a regular one from memory, in one piece, so a
  // pipe whose other end a thread drains receives the whole shared object.
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) throw system_error("pipe");
  Fd read_end(ends[0]), write_end(ends[1]);
  const std::string out = path_of(write_end);
  std::vector<const char*> args = {"ld.lld", "-shared", "--threads=1",
                                   // Calls between the kernel's own functions stay inside it.
                                   "-Bsymbolic", "--hash-style=gnu", "-z", "now", "-z",
                                   "noexecstack", "--build-id=none", "--strip-all", "-o",
                                   out.c_str(), in.c_str()};
  if (calls) {
    args.insert(args.end(), {"-z", "relro", "-z", "defs", libm.c_str(), libc.c_str()});
  } else if (loader_maps_read_only_objects()) {
    // Nothing to relocate: one read-and-execute segment, the dynamic section in it, so that the
    // loader maps it once and changes no protection afterwards. In a process with threads each
    // change of a mapping's protection (a writable segment mapped over the reserved range, its
    // RELRO part made read-only) waits for the other CPUs to flush their TLBs, which a virtual
    // machine makes slow: dlopen took 58-82 us from Python with NumPy loaded, 15-26 us so.
    args.insert(args.end(), {"-z", "norelro", "-z", "rodynamic", "--no-rosegment"});
  } else {
    args.insert(args.end(), {"-z", "relro"});
  }

  std::string shared_object, errors;
  {
    std::thread reader([&] {
      char buf[65536];
      for (;;) {
        const ssize_t got = ::read(read_end.get(), buf, sizeof buf);
        if (got > 0) {
          shared_object.append(buf, static_cast<size_t>(got));
        } else if (got == 0 || errno != EINTR) {
          break;
        }
      }
    });
    // Once lld is done (it closed its own descriptor of the pipe), closing ours ends the reader's
    // input, on every path.
    struct Join {
      Fd& write_end;
      std::thread& reader;
      ~Join() {
        write_end.close();
        reader.join();
      }
    } join{write_end, reader};
    errors = run_lld(args);
  }
  if (!errors.empty()) throw std::runtime_error("cannot link the kernel: " + errors);
  if (shared_object.empty()) throw std::runtime_error("cannot link the kernel: lld wrote nothing");
  return shared_object;
}

}  // namespace tack::cpu
