// Compiled kernel artifacts on disk, by key, shared by every backend and every process of one user.
#pragma once

#include <atomic>
#include <cstdint>
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
  uint64_t misses = 0;          // every load that returned nullopt, unusable entries included
  uint64_t writes = 0;          // entries stored
  uint64_t corrupt = 0;         // entries unusable (damaged, not a regular file, too big), removed
  uint64_t write_failures = 0;  // stores that did not write (disk full, no permission, too big)
  uint64_t refused = 0;  // entries refused for their owner or permissions, and refused directories
  uint64_t evictions = 0;      // entries removed to keep the cache under its size limit
  uint64_t lock_waits = 0;     // lock() calls that waited for another process's compile
  uint64_t lock_timeouts = 0;  // ... and gave up waiting, to compile here
};

// One entry of the cache directory, for `tack cache ls` and friends.
struct CacheEntryInfo {
  std::string file;         // the file name, without the directory
  std::string key_summary;  // the first line of the key text, unprintable bytes as '?'
  // The kernel's signature line of the key ("kernel NAME(x: f32[], ...)"), printable as above;
  // empty for an entry that is not a kernel's.
  std::string signature;
  uint64_t bytes = 0;   // the file's size
  std::string backend;  // from the file name
  int64_t mtime = 0;    // last use (a load or a store), as a time_t
};

// What clear() did.
struct CacheClearReport {
  size_t entries = 0;       // entry files removed
  uint64_t bytes = 0;       // their size
  size_t leftovers = 0;     // stale temporary and lock files, and non-files at entry names
  size_t failures = 0;      // files that could not be removed
  std::string first_error;  // why the first of those could not be removed
};

struct DiskCacheLimits {
  uint64_t max_bytes = uint64_t{1} << 30;         // all entries (TACK_CACHE_MAX_BYTES)
  uint64_t max_entry_bytes = uint64_t{64} << 20;  // one entry file; at most max_bytes
  double lock_timeout_seconds = 60;  // how long lock() waits for another process's compile
};

struct DiskCacheOptions {
  bool enabled = true;
  std::string disabled_reason = "disabled by the caller";  // when !enabled
  // The outermost directory that must be the user's own: the user's cache root ($XDG_CACHE_HOME,
  // ~/.cache) for the default directory. Empty: the cache directory itself (TACK_CACHE_DIR).
  std::string private_root;
  DiskCacheLimits limits;
  // Print one line on stderr when the cache turns itself off or refuses an entry (the process's
  // cache does; tests and tools read disabled_reason() and last_error() instead).
  bool warn = false;
};

// A directory of `<backend>-<XXH3-128 of key>.tck` files that only its user can write.
//
// The cache holds code that Tack executes, so it is used only where no one but the user (and
// root) can write: before the first entry is read, the directory and each of its parents are
// checked (see docs/backends.md, "The disk cache"); a directory that fails is not used, and the
// cache turns itself off with the reason. Each entry is opened without following links or
// blocking, and checked on its descriptor (a regular file of the user's, writable only by them,
// within the size limit) before a byte is read. A checksum then catches damage, not tampering.
//
// Each file holds the full key next to the artifact, so a hash collision reads as a miss rather
// than someone else's code. Writes go to a temporary file renamed over the entry, so a reader sees
// a whole old entry or a whole new one even with several processes writing the same key. An entry
// that cannot be used is removed (or, on an I/O error, skipped and replaced by the next store), so
// it is never retried forever. Nothing here throws for an I/O failure: the kernel still runs
// uncached, and last_error() says why.
//
// Thread safety: every member may be called from several threads at once.
class DiskCache {
 public:
  // The process's cache, configured from the environment on the first call (see from_environment).
  // Leaked so that it outlives every static destructor that might still compile a kernel.
  static DiskCache& global();

  // A cache configured as global() would be from the current environment: TACK_CACHE=0 disables it;
  // the directory is TACK_CACHE_DIR, else $XDG_CACHE_HOME/tack, else $HOME/.cache/tack;
  // TACK_CACHE_MAX_BYTES (bytes, or a number with K, M, G or T) bounds its size and
  // TACK_CACHE_LOCK_TIMEOUT (seconds) the wait for another process's compile.
  static std::unique_ptr<DiskCache> from_environment();

  // A cache in `dir`, which is created (0700) and checked on first use. A disabled cache misses
  // every load without counting and stores nothing.
  explicit DiskCache(std::string dir, DiskCacheOptions options = {});
  ~DiskCache();
  DiskCache(const DiskCache&) = delete;
  DiskCache& operator=(const DiskCache&) = delete;

  // Whether entries are used: false when turned off, or when the directory is unusable (it cannot
  // be created, or someone else could write it). Checks the directory on the first call.
  bool enabled() const;
  // Why the cache is disabled; empty while it is enabled.
  std::string disabled_reason() const;
  // The last I/O failure or refusal (a store that could not write, an entry refused), or empty.
  std::string last_error() const;
  const std::string& dir() const { return dir_; }
  const DiskCacheLimits& limits() const { return limits_; }

  // The artifact stored for (backend, key), or nullopt. An unusable entry is counted, removed and
  // reported as a miss. `backend` must be a name of letters, digits and '_' (it is part of the
  // file name); anything else throws tack::ValueError, since it is a bug in the caller.
  // `counted`: whether a hit or miss counts in stats() (an entry that is not a kernel's, like the
  // CPU backend's description of the host, does not). On a hit, where the directory is on a local
  // file system, `stored_at` (when given) is set to the path of the entry's file, which begins
  // with the artifact, in the checked directory; it is left empty otherwise.
  std::optional<std::string> load(std::string_view backend, std::string_view key,
                                  bool counted = true, std::string* stored_at = nullptr);
  // Stores the artifact for (backend, key), replacing any entry, then evicts the least recently
  // used entries while the cache is over max_bytes. Never throws for an I/O failure. `counted`:
  // whether the write counts in stats().
  void store(std::string_view backend, std::string_view key, std::string_view artifact,
             bool counted = true);

  // A claim on one entry across processes, held while it is compiled, so that concurrent first
  // calls compile once: the others wait in lock() and then load. Released (and its lock file
  // removed) when destroyed; the kernel releases it when its holder dies, even by SIGKILL.
  class EntryLock {
   public:
    EntryLock() = default;
    EntryLock(EntryLock&& other) noexcept;
    EntryLock& operator=(EntryLock&& other) noexcept;
    ~EntryLock();
    // False when the cache is off, locks are unsupported here, or the wait timed out.
    bool held() const { return fd_ >= 0; }
    // Whether another process held the claim first: its entry may be there now.
    bool waited() const { return waited_; }

   private:
    friend class DiskCache;
    void release();
    int fd_ = -1;
    int dir_fd_ = -1;  // a duplicate of the cache's, to remove the lock file
    std::string name_;
    bool waited_ = false;
  };
  // Waits up to limits().lock_timeout_seconds while another process holds the claim on (backend,
  // key); then returns it held, or not held on a timeout (the caller compiles for itself).
  EntryLock lock(std::string_view backend, std::string_view key);

  DiskCacheStats stats() const;

  // The valid-looking entries, newest first. These work on a disabled cache's directory too, so
  // that a tool can inspect or clear it with the cache turned off; they never follow a link or
  // open anything but a regular file.
  std::vector<CacheEntryInfo> list() const;
  // Bytes in all entry files.
  uint64_t total_bytes() const;
  // Files at entry names that are not valid entries (damaged, not regular files).
  size_t unusable_entries() const;
  // Removes every entry, stale temporary and lock files, and anything else at an entry's name.
  CacheClearReport clear();

  // The file name that holds (backend, key). Exposed for tests and tools.
  static std::string file_name(std::string_view backend, std::string_view key);

 private:
  // The directory's descriptor: opened and checked on the first call (again after it was
  // removed); on failure the cache is disabled, or for a directory that vanished later, -1 is
  // returned until it can be created again. dir_fd_locked requires mu_.
  int dir_fd_locked() const;
  int dir_fd() const;
  // Forgets the directory's descriptor (it was removed under us) unless it changed since.
  void reopen_dir(int stale_fd) const;
  void disable(std::string reason) const;  // requires mu_
  void record_error(std::string message) const;
  void warn_once(const std::string& message) const;
  std::string real_dir() const;                        // the checked directory's canonical path
  std::string path_of(const std::string& name) const;  // an entry's path in it, for messages
  // Removes what is at `name` if it is still the file (dev, ino) that was found unusable, not a
  // fresh entry that another process renamed over it since.
  void remove_unusable(int dir_fd, const std::string& name, uint64_t dev, uint64_t ino);
  // Removes the least recently used entries, never `keep`, while they are over max_bytes.
  void evict(int dir_fd, const std::string& keep);

  // Strings, not std::filesystem: a first kernel call would run the C++ library's path code.
  const std::string dir_;
  const std::string private_root_;
  const DiskCacheLimits limits_;
  const bool warn_;

  mutable std::mutex mu_;
  mutable std::atomic<bool> enabled_;
  mutable std::string disabled_reason_;  // guarded by mu_
  mutable std::string last_error_;       // guarded by mu_
  mutable bool checked_ = false;         // guarded by mu_; the directory was checked once
  mutable int dir_fd_ = -1;              // guarded by mu_; the checked directory, open
  mutable std::string real_dir_;         // guarded by mu_
  // The directory is on a local file system (on_local_file_system): load() gives its entries'
  // paths, for the CPU backend to dlopen them where they lie.
  mutable std::atomic<bool> local_{false};
  // Descriptors of directories removed under us, closed only by the destructor since another
  // thread may still be using one. Guarded by mu_.
  mutable std::vector<int> retired_fds_;
  mutable std::atomic<bool> warned_{false};

  mutable std::atomic<uint64_t> hits_{0}, misses_{0}, writes_{0}, corrupt_{0}, write_failures_{0},
      refused_{0}, evictions_{0}, lock_waits_{0}, lock_timeouts_{0};
  std::atomic<uint64_t> temp_counter_{0};
};

}  // namespace tack
