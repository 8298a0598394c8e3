// Compiled kernel artifacts on disk, by key, shared by every backend and every process.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tack {

// This process's counters for one DiskCache. A disabled cache counts nothing.
struct DiskCacheStats {
  uint64_t hits = 0;
  uint64_t misses = 0;          // every load that returned nullopt, corrupt entries included
  uint64_t writes = 0;          // entries stored
  uint64_t corrupt = 0;         // entries found damaged, removed and reported as misses
  uint64_t write_failures = 0;  // stores that could not write (disk full, no permission)
};

// One entry of the cache directory, for `tack cache list` and friends.
struct CacheEntryInfo {
  std::string file;         // the file name, without the directory
  std::string key_summary;  // the first line of the key text
  uint64_t bytes = 0;       // the file's size
  std::string backend;      // from the file name
  int64_t mtime = 0;        // last modification, as a time_t
};

// A directory of `<backend>-<XXH3-128 of key>.tck` files.
//
// Each file holds the full key next to the artifact, so a hash collision reads as a miss rather
// than someone else's code, and a checksum, so a damaged file is recompiled, never run. Writes go
// to a temporary file renamed over the entry, so a reader sees a whole old entry or a whole new one
// even with several processes writing the same key. Nothing here throws for an I/O failure: the
// kernel still runs uncached, and last_error() says why.
//
// Thread safety: every member may be called from several threads at once.
class DiskCache {
 public:
  // The process's cache, configured from the environment on the first call (see from_environment).
  // Leaked so that it outlives every static destructor that might still compile a kernel.
  static DiskCache& global();

  // A cache configured as global() would be from the current environment: TACK_CACHE=0 disables it;
  // the directory is TACK_CACHE_DIR, else $XDG_CACHE_HOME/tack, else $HOME/.cache/tack.
  static std::unique_ptr<DiskCache> from_environment();

  // A cache in `dir`, which is created on the first store. A disabled cache misses every load
  // without counting and stores nothing; `disabled_reason` is what disabled_reason() then reports.
  explicit DiskCache(std::filesystem::path dir, bool enabled = true,
                     std::string disabled_reason = "disabled by the caller");
  DiskCache(const DiskCache&) = delete;
  DiskCache& operator=(const DiskCache&) = delete;

  // False when turned off, or once the directory could not be created.
  bool enabled() const { return enabled_.load(std::memory_order_acquire); }
  // Why the cache is disabled; empty while it is enabled.
  std::string disabled_reason() const;
  // The last I/O failure (a store that could not write, an entry that could not be read), or empty.
  std::string last_error() const;
  const std::filesystem::path& dir() const { return dir_; }

  // The artifact stored for (backend, key), or nullopt. A damaged entry is counted, deleted and
  // reported as a miss. `backend` must be a name of letters, digits and '_' (it is part of the file
  // name); anything else throws tack::ValueError, since it is a bug in the caller.
  std::optional<std::string> load(std::string_view backend, std::string_view key);
  // Stores the artifact for (backend, key), replacing any entry. Never throws for an I/O failure.
  void store(std::string_view backend, std::string_view key, std::string_view artifact);

  DiskCacheStats stats() const;

  // The valid-looking entries, newest first. These work on a disabled cache's directory too, so
  // that a tool can inspect or clear it with the cache turned off.
  std::vector<CacheEntryInfo> list() const;
  // Bytes in all entry files.
  uint64_t total_bytes() const;
  // Removes every entry (and leftover temporary files); returns the entries removed.
  size_t clear();

  // The file name that holds (backend, key). Exposed for tests and tools.
  static std::string file_name(std::string_view backend, std::string_view key);

 private:
  // Creates the directory once; on failure disables the cache and records why.
  bool ensure_dir();
  void record_error(std::string message) const;
  // Deletes `path` if it is still the file described by (dev, ino), i.e. not a fresh entry that
  // another process renamed over it after we read the damaged one.
  void remove_damaged(const std::filesystem::path& path, uint64_t dev, uint64_t ino);

  const std::filesystem::path dir_;
  std::atomic<bool> enabled_;

  mutable std::mutex mu_;
  std::string disabled_reason_;     // guarded by mu_
  mutable std::string last_error_;  // guarded by mu_
  bool dir_ready_ = false;          // guarded by mu_

  std::atomic<uint64_t> hits_{0}, misses_{0}, writes_{0}, corrupt_{0}, write_failures_{0};
  std::atomic<uint64_t> temp_counter_{0};
};

}  // namespace tack
