// The cache directory as tools see it (`tack cache ls | stats | clear`): by path, so that they work
// on a disabled cache's directory too, never following a link or opening anything but a file.
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "runtime/cache_file.hpp"
#include "runtime/disk_cache.hpp"
#include "runtime/private_dir.hpp"

namespace tack {

using namespace cache_file;

std::vector<CacheEntryInfo> DiskCache::list() const {
  std::vector<CacheEntryInfo> entries;
  if (dir_.empty()) return entries;
  for_each_name(-1, dir_, [&](const std::string& name) {
    if (!is_entry_name(name)) return;
    if (auto info = describe_entry(joined_path(dir_, name))) entries.push_back(std::move(*info));
  });
  std::sort(entries.begin(), entries.end(), [](const CacheEntryInfo& a, const CacheEntryInfo& b) {
    return a.mtime != b.mtime ? a.mtime > b.mtime : a.file < b.file;
  });
  return entries;
}

uint64_t DiskCache::total_bytes() const {
  uint64_t total = 0;
  if (dir_.empty()) return total;
  for_each_name(-1, dir_, [&](const std::string& name) {
    struct stat st;
    if (is_entry_name(name) && ::lstat(joined_path(dir_, name).c_str(), &st) == 0 &&
        S_ISREG(st.st_mode)) {
      total += static_cast<uint64_t>(st.st_size);
    }
  });
  return total;
}

size_t DiskCache::unusable_entries() const {
  size_t count = 0;
  if (dir_.empty()) return count;
  for_each_name(-1, dir_, [&](const std::string& name) {
    if (is_entry_name(name) && !describe_entry(joined_path(dir_, name))) ++count;
  });
  return count;
}

CacheClearReport DiskCache::clear() {
  CacheClearReport report;
  if (dir_.empty()) return report;
  const time_t now = std::time(nullptr);
  std::vector<std::string> names;
  // Collected first: removing while iterating a directory may skip or repeat names.
  for_each_name(-1, dir_, [&](const std::string& name) { names.push_back(name); });
  for (const std::string& name : names) {
    const std::string path = joined_path(dir_, name);
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) continue;
    int err = 0;
    if (is_entry_name(name)) {
      if (S_ISDIR(st.st_mode)) {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
        err = ec.value();
      } else if (::unlink(path.c_str()) != 0) {
        err = errno;
      }
      if (err == 0 && S_ISREG(st.st_mode)) {
        ++report.entries;
        report.bytes += static_cast<uint64_t>(st.st_size);
      } else if (err == 0) {
        ++report.leftovers;
      }
    } else if (is_temp_name(name) && S_ISREG(st.st_mode) && now - st.st_mtime > kStaleTempSeconds) {
      // A young temporary file is another process's store in progress; removing it would fail it.
      if (::unlink(path.c_str()) == 0)
        ++report.leftovers;
      else
        err = errno;
    } else if (is_lock_name(name)) {
      // Only a lock no one holds: removing a held one would let a second process compile.
      Fd fd(::open(path.c_str(), kEntryOpenFlags));
      if (fd.get() >= 0 && ::flock(fd.get(), LOCK_EX | LOCK_NB) == 0) {
        if (::unlink(path.c_str()) == 0)
          ++report.leftovers;
        else
          err = errno;
      }
    }
    if (err != 0) {
      if (report.failures++ == 0) {
        report.first_error = fmt::format("cannot remove {}: {}", path, errno_text(err));
      }
    }
  }
  return report;
}

}  // namespace tack
