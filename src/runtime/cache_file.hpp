// One disk-cache entry file: its format, and the file helpers that the cache and its tools share.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <ctime>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "runtime/disk_cache.hpp"

namespace tack::cache_file {

// File layout, all integers little-endian:
//   artifact | key | artifact length u64 | key length u64 | XXH3-64 of the artifact u64 |
//   format version u32 | magic[8]
// The artifact comes first so that a file that holds a shared object is one (the CPU backend
// dlopens its entries where they lie). A file cut short loses its footer, which is checked first.
constexpr std::string_view kMagic = "TACKCCH2";
constexpr uint32_t kFormatVersion = 2;
constexpr size_t kFooterBytes = 8 + 8 + 8 + 4 + 8;  // lengths, checksum, version, magic
constexpr std::string_view kEntrySuffix = ".tck";
constexpr std::string_view kTempSuffix = ".tmp";
constexpr std::string_view kLockSuffix = ".lock";
// A temporary file this old belongs to a writer that died; younger ones may still be renamed.
constexpr time_t kStaleTempSeconds = 600;

// Opened as an entry is: never following a link, never blocking on a FIFO or device.
constexpr int kEntryOpenFlags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;

// Everything of an entry file that comes after its artifact.
std::string entry_tail(std::string_view key, std::string_view artifact);

struct ParsedEntry {
  std::string_view key;
  std::string_view artifact;
};
// Parses a whole entry file. Returns what is wrong with it, or nullptr when it is well formed.
const char* parse_entry(std::string_view data, ParsedEntry* out);

// The header and key of an entry without its artifact (for `tack cache ls`), or nullopt for
// anything that is not a regular file holding a valid-looking entry.
std::optional<CacheEntryInfo> describe_entry(const std::filesystem::path& path);

std::string errno_text(int err);
// Reads up to `size` bytes at `offset`; fewer only at end of file. nullopt on an I/O error.
std::optional<std::string> read_at(int fd, uint64_t offset, size_t size);
bool write_all(int fd, std::string_view data);

// An entry file: `<backend>-<hash>.tck`, never a hidden temporary.
bool is_entry_name(std::string_view name);
bool is_temp_name(std::string_view name);  // a store in progress: `.<entry>.<pid>...tmp`
bool is_lock_name(std::string_view name);  // `.<entry>.lock`

// Closes on every path out of a scope.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }
  // Closes now and reports the error, which is where NFS and full disks may surface.
  bool close() {
    const int rc = ::close(std::exchange(fd_, -1));
    return rc == 0;
  }

 private:
  int fd_;
};

// Calls fn(name) for each name in the directory `dir_fd` (or `dir` when it is -1), without
// following links. Errors end the walk instead of throwing.
template <typename Fn>
void for_each_name(int dir_fd, const std::filesystem::path& dir, Fn fn) {
  // A descriptor of its own: readdir's position lives in the open file, which a dup would share.
  const int fd = dir_fd >= 0 ? ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                             : ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  DIR* d = ::fdopendir(fd);
  if (d == nullptr) {
    ::close(fd);
    return;
  }
  while (const dirent* e = ::readdir(d)) {
    const std::string_view name = e->d_name;
    if (name == "." || name == "..") continue;
    fn(std::string(name));
  }
  ::closedir(d);
}

}  // namespace tack::cache_file
