#include "runtime/disk_cache.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <system_error>
#include <thread>
#include <utility>

#include <fmt/core.h>
#include <xxhash.h>

#include "runtime/cache_file.hpp"
#include "runtime/hex.hpp"
#include "runtime/private_dir.hpp"
#include "tack/error.hpp"

namespace tack {
namespace {

using namespace cache_file;  // the entry format and file helpers, shared with the tools

// How finely an entry's modification time records its last use (DiskCache::load).
constexpr int64_t kUseTimeResolutionSeconds = 60;

void check_backend(std::string_view backend) {
  const bool ok = !backend.empty() && backend.size() <= 64 &&
                  std::all_of(backend.begin(), backend.end(), [](char c) {
                    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                           (c >= '0' && c <= '9') || c == '_';
                  });
  if (!ok) {
    throw ValueError(
        fmt::format("invalid backend name '{}' for the disk cache: expected letters, "
                    "digits and '_'",
                    backend));
  }
}

bool is_off(std::string_view value) {
  std::string lower;
  for (char c : value) lower.push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c));
  return lower == "0" || lower == "off" || lower == "false" || lower == "no";
}

const char* nonempty_env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && v[0] != '\0' ? v : nullptr;
}

// "1073741824", "512M", "2G", "1.5G": bytes; K, M, G and T are powers of 1024.
std::optional<uint64_t> parse_size(std::string_view text) {
  std::string s(text);
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || errno != 0 || !(value >= 0)) return std::nullopt;
  std::string_view unit(end);
  double scale = 1;
  if (!unit.empty()) {
    const char u = static_cast<char>(unit[0] >= 'a' ? unit[0] - 32 : unit[0]);
    scale = u == 'K' ? 0x1p10 : u == 'M' ? 0x1p20 : u == 'G' ? 0x1p30 : u == 'T' ? 0x1p40 : 0;
    unit.remove_prefix(1);
    if (unit == "iB" || unit == "ib" || unit == "B" || unit == "b") unit = {};
    if (scale == 0 || !unit.empty()) return std::nullopt;
  }
  const double bytes = value * scale;
  if (bytes >= 0x1p63) return std::nullopt;
  return static_cast<uint64_t>(bytes);
}

std::string size_text(uint64_t bytes) {
  if (bytes >= (uint64_t{1} << 30) && bytes % (uint64_t{1} << 30) == 0)
    return fmt::format("{} GiB", bytes >> 30);
  if (bytes >= (uint64_t{1} << 20) && bytes % (uint64_t{1} << 20) == 0)
    return fmt::format("{} MiB", bytes >> 20);
  return fmt::format("{} bytes", bytes);
}

// The limits from TACK_CACHE_MAX_BYTES and TACK_CACHE_LOCK_TIMEOUT; a value that does not parse
// is reported on stderr and the default used, as for TACK_CPU_THREADS.
DiskCacheLimits limits_from_environment() {
  DiskCacheLimits limits;
  if (const char* max = nonempty_env("TACK_CACHE_MAX_BYTES")) {
    if (auto bytes = parse_size(max); bytes && *bytes > 0) {
      limits.max_bytes = *bytes;
    } else {
      fmt::print(stderr,
                 "tack: ignoring TACK_CACHE_MAX_BYTES='{}': expected a positive size in bytes, "
                 "or a number with K, M, G or T (powers of 1024); using {}\n",
                 max, size_text(limits.max_bytes));
    }
  }
  limits.max_entry_bytes = std::min(limits.max_entry_bytes, limits.max_bytes);
  if (const char* timeout = nonempty_env("TACK_CACHE_LOCK_TIMEOUT")) {
    char* end = nullptr;
    const double seconds = std::strtod(timeout, &end);
    if (end != timeout && *end == '\0' && seconds >= 0 && seconds <= 86400) {
      limits.lock_timeout_seconds = seconds;
    } else {
      fmt::print(stderr,
                 "tack: ignoring TACK_CACHE_LOCK_TIMEOUT='{}': expected seconds from 0 to 86400; "
                 "using {}\n",
                 timeout, limits.lock_timeout_seconds);
    }
  }
  return limits;
}

std::string errno_or(int err, const char* otherwise) {
  return err != 0 ? errno_text(err) : std::string(otherwise);
}

}  // namespace

DiskCache& DiskCache::global() {
  static DiskCache* cache = from_environment().release();
  return *cache;
}

std::unique_ptr<DiskCache> DiskCache::from_environment() {
  std::string dir;
  DiskCacheOptions options;
  options.warn = true;
  options.limits = limits_from_environment();
  if (const char* env = nonempty_env("TACK_CACHE_DIR")) {
    // Absolute now, so that a later chdir() does not move the cache.
    dir = absolute_path(env).value_or(env);
  } else if (const char* xdg = nonempty_env("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/') {
    // The XDG spec says a relative XDG_CACHE_HOME is invalid and must be ignored.
    options.private_root = xdg;
    dir = joined_path(options.private_root, "tack");
  } else if (const char* home = nonempty_env("HOME")) {
    options.private_root = joined_path(home, ".cache");
    dir = joined_path(options.private_root, "tack");
  } else {
    options.enabled = false;
    options.disabled_reason =
        "no cache directory: TACK_CACHE_DIR, XDG_CACHE_HOME and HOME are unset";
  }
  if (const char* flag = std::getenv("TACK_CACHE"); flag != nullptr && is_off(flag)) {
    options.enabled = false;
    options.disabled_reason = fmt::format("TACK_CACHE={}", flag);
  }
  return std::make_unique<DiskCache>(std::move(dir), std::move(options));
}

DiskCache::DiskCache(std::string dir, DiskCacheOptions options)
    : dir_(std::move(dir)),
      private_root_(std::move(options.private_root)),
      limits_(options.limits),
      warn_(options.warn),
      enabled_(options.enabled) {
  if (!options.enabled) disabled_reason_ = std::move(options.disabled_reason);
}

DiskCache::~DiskCache() {
  std::lock_guard<std::mutex> lock(mu_);
  if (dir_fd_ >= 0) ::close(dir_fd_);
  for (int fd : retired_fds_) ::close(fd);
}

bool DiskCache::enabled() const {
  if (!enabled_.load(std::memory_order_acquire)) return false;
  std::lock_guard<std::mutex> lock(mu_);
  if (!checked_) dir_fd_locked();
  return enabled_.load(std::memory_order_acquire);
}

std::string DiskCache::disabled_reason() const {
  enabled();  // checks the directory if no one has yet
  std::lock_guard<std::mutex> lock(mu_);
  return disabled_reason_;
}

std::string DiskCache::last_error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_error_;
}

std::string DiskCache::file_name(std::string_view backend, std::string_view key) {
  const XXH128_hash_t h = XXH3_128bits(key.data(), key.size());
  std::string name(backend);
  name += '-';
  detail::append_hex(name, h.high64, 16);
  detail::append_hex(name, h.low64, 16);
  name += kEntrySuffix;
  return name;
}

int DiskCache::dir_fd_locked() const {
  if (dir_fd_ >= 0) return dir_fd_;
  if (!enabled_.load(std::memory_order_acquire)) return -1;
  PrivateDir d = open_private_dir(dir_, private_root_);
  if (d.fd < 0) {
    // A directory that is not private turns the cache off, whenever it is found. One that cannot
    // be created does too at the first use; later (it was removed under us) a store fails, and
    // the next one tries again.
    if (d.refused) refused_.fetch_add(1, std::memory_order_relaxed);
    if (d.refused || !checked_) {
      disable(d.error);
    } else {
      last_error_ = d.error;
    }
    checked_ = true;
    return -1;
  }
  checked_ = true;
  real_dir_ = d.real;
  dir_fd_ = d.fd;
  local_.store(on_local_file_system(d.fd), std::memory_order_relaxed);
  return dir_fd_;
}

int DiskCache::dir_fd() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dir_fd_locked();
}

void DiskCache::reopen_dir(int stale_fd) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (dir_fd_ != stale_fd || stale_fd < 0) return;
  // Kept open: another thread may be using it in an openat() right now.
  retired_fds_.push_back(dir_fd_);
  dir_fd_ = -1;
}

void DiskCache::disable(std::string reason) const {
  if (warn_ && !warned_.exchange(true)) {
    fmt::print(stderr,
               "tack: warning: the kernel cache on disk is off for this process: {}. Kernels still "
               "run, compiled in each process.\n",
               reason);
  }
  disabled_reason_ = reason;
  last_error_ = std::move(reason);
  enabled_.store(false, std::memory_order_release);
}

void DiskCache::record_error(std::string message) const {
  std::lock_guard<std::mutex> lock(mu_);
  last_error_ = std::move(message);
}

void DiskCache::warn_once(const std::string& message) const {
  if (warn_ && !warned_.exchange(true)) fmt::print(stderr, "tack: warning: {}\n", message);
}

std::string DiskCache::real_dir() const {
  std::lock_guard<std::mutex> lock(mu_);
  return real_dir_.empty() ? dir_ : real_dir_;
}

std::string DiskCache::path_of(const std::string& name) const {
  return joined_path(real_dir(), name);
}

void DiskCache::remove_unusable(int dir_fd, const std::string& name, uint64_t dev, uint64_t ino) {
  struct stat st;
  if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return;
  if (static_cast<uint64_t>(st.st_dev) != dev || static_cast<uint64_t>(st.st_ino) != ino) return;
  if (S_ISDIR(st.st_mode)) {
    // By name, but inside the checked directory, which no one else can change; remove_all does
    // not follow the links it finds.
    std::error_code ec;
    std::filesystem::remove_all(path_of(name), ec);
  } else {
    ::unlinkat(dir_fd, name.c_str(), 0);
  }
}

std::optional<std::string> DiskCache::load(std::string_view backend, std::string_view key,
                                           bool counted, std::string* stored_at) {
  check_backend(backend);
  if (!enabled()) return std::nullopt;
  const int dfd = dir_fd();
  const std::string name = file_name(backend, key);
  const auto miss = [&] {
    if (counted) misses_.fetch_add(1, std::memory_order_relaxed);
    return std::nullopt;
  };
  if (dfd < 0) return miss();
  const std::string shown = path_of(name);

  // What was found at the entry's name and cannot be used: refused, or unusable; removed either
  // way, so that it is not tried again.
  const auto reject = [&](const struct stat& st, const std::string& problem, bool refused) {
    if (refused) {
      refused_.fetch_add(1, std::memory_order_relaxed);
      // Tack writes its entries 0600 in a directory only the user can write: an entry that fails
      // was put there by someone else, or by a process of the user's that loosened it.
      const std::string message = fmt::format(
          "refused cache entry {}: it {}, so its code may not be yours; removed it, the kernel is "
          "compiled again. Keep only your own files, writable by you alone, in {} (`chmod 600` "
          "your files there, remove other users' files, and `chmod 700` the directory)",
          shown, problem, real_dir());
      record_error(message);
      warn_once(message);
    } else {
      corrupt_.fetch_add(1, std::memory_order_relaxed);
      record_error(fmt::format("removed unusable cache entry {}: it {}", shown, problem));
    }
    remove_unusable(dfd, name, static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino));
    return miss();
  };

  Fd fd(::openat(dfd, name.c_str(), kEntryOpenFlags));
  struct stat st;
  if (fd.get() < 0) {
    const int err = errno;
    if (err == ENOENT) return miss();
    // ELOOP (a link), ENXIO (a socket), EACCES (a file this user may not read), ...
    if (::fstatat(dfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
      bool refused = false;
      std::string problem = file_problem(st, limits_.max_entry_bytes, &refused);
      if (problem.empty() && (err == EACCES || err == EPERM)) problem = "cannot be read";
      if (!problem.empty()) return reject(st, problem, refused);
    }
    // Out of descriptors or memory, an I/O error: nothing wrong with the entry itself.
    record_error(fmt::format("cannot open cache entry {}: {}", shown, errno_text(err)));
    return miss();
  }
  if (::fstat(fd.get(), &st) != 0) {
    record_error(fmt::format("cannot inspect cache entry {}: {}", shown, errno_text(errno)));
    return miss();
  }
  bool refused = false;
  if (std::string problem = file_problem(st, limits_.max_entry_bytes, &refused); !problem.empty())
    return reject(st, problem, refused);

  // Entries are never modified in place (writers rename a new file over them), so the size read
  // here is the size of this file for as long as it is open; it is within max_entry_bytes.
  auto data = read_at(fd.get(), 0, static_cast<size_t>(st.st_size));
  if (!data) {
    // An I/O error says nothing about the bytes: skipped, and replaced by the next store.
    record_error(fmt::format("cannot read cache entry {}: {}", shown, errno_text(errno)));
    return miss();
  }

  ParsedEntry entry;
  const char* problem = parse_entry(*data, &entry);
  if (problem == nullptr && entry.key != key) problem = "stored key differs (hash collision)";
  if (problem != nullptr) {
    record_error(fmt::format("removed damaged cache entry {}: {}", shown, problem));
    corrupt_.fetch_add(1, std::memory_order_relaxed);
    remove_unusable(dfd, name, static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino));
    return miss();
  }
  // The modification time is the time of last use, which eviction goes by (access times are
  // often not kept), to the minute: an entry used within the last one is not touched again.
  if (std::time(nullptr) - st.st_mtime >= kUseTimeResolutionSeconds) ::futimens(fd.get(), nullptr);
  fd.close();
  if (counted) hits_.fetch_add(1, std::memory_order_relaxed);
  if (stored_at != nullptr && local_.load(std::memory_order_relaxed)) *stored_at = shown;
  // The artifact is the file's start: cutting the buffer short reuses it without a second copy.
  data->resize(entry.artifact.size());
  return std::move(*data);
}

void DiskCache::store(std::string_view backend, std::string_view key, std::string_view artifact,
                      bool counted) {
  check_backend(backend);
  if (!enabled()) return;
  const std::string name = file_name(backend, key);

  const auto fail = [&](const std::string& what, int err) {
    write_failures_.fetch_add(1, std::memory_order_relaxed);
    record_error(fmt::format("cannot write cache entry {}: {}{}", path_of(name), what,
                             err != 0 ? ": " + errno_text(err) : std::string()));
  };

  const uint64_t bytes = artifact.size() + key.size() + kFooterBytes;
  if (bytes > limits_.max_entry_bytes) {
    fail(fmt::format("{} bytes is over the limit of {} for one entry", bytes,
                     size_text(limits_.max_entry_bytes)),
         0);
    return;
  }
  const std::string tail = entry_tail(key, artifact);

  // Unique across processes (pid), threads (thread id) and calls (counter); hidden and suffixed so
  // that list() and load() never mistake it for an entry.
  const size_t tid = std::hash<std::thread::id>{}(std::this_thread::get_id());
  std::string temp;
  int dfd = -1;
  int raw_fd = -1;
  int err = 0;
  for (int attempt = 0; attempt < 4 && raw_fd < 0; ++attempt) {
    dfd = dir_fd();
    if (dfd < 0) {
      fail("the directory is unusable", 0);
      return;
    }
    temp = fmt::format(".{}.{}.{:x}.{}{}", name, ::getpid(), tid,
                       temp_counter_.fetch_add(1, std::memory_order_relaxed), kTempSuffix);
    raw_fd =
        ::openat(dfd, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    err = errno;
    if (raw_fd >= 0) break;
    if (err == ENOENT) {
      // Someone removed the directory (`rm -rf ~/.cache/tack`) while we run: make it again.
      reopen_dir(dfd);
    } else if (err != EEXIST) {  // EEXIST: a dead process's leftover with our pid; next counter
      break;
    }
  }
  if (raw_fd < 0) {
    fail("cannot create a temporary file", err);
    return;
  }
  Fd fd(raw_fd);
  // No fsync: a file cut short by a crash fails its length or checksum check and is recompiled.
  if (!write_all(fd.get(), artifact) || !write_all(fd.get(), tail)) {
    fail("write failed", errno);
    ::unlinkat(dfd, temp.c_str(), 0);
    return;
  }
  if (!fd.close()) {
    fail("close failed", errno);
    ::unlinkat(dfd, temp.c_str(), 0);
    return;
  }
  int renamed = ::renameat(dfd, temp.c_str(), dfd, name.c_str());
  if (renamed != 0 && (errno == EISDIR || errno == ENOTEMPTY || errno == EEXIST)) {
    // A directory at the entry's name: it is in our own directory, so it goes.
    std::error_code ec;
    std::filesystem::remove_all(path_of(name), ec);
    renamed = ::renameat(dfd, temp.c_str(), dfd, name.c_str());
  }
  if (renamed != 0) {
    fail("rename failed", errno);
    ::unlinkat(dfd, temp.c_str(), 0);
    return;
  }
  if (counted) writes_.fetch_add(1, std::memory_order_relaxed);
  evict(dfd, name);
}

void DiskCache::evict(int dir_fd, const std::string& keep) {
  struct Item {
    std::string name;
    uint64_t bytes;
    struct timespec used;
  };
  std::vector<Item> items;
  uint64_t total = 0;
  for_each_name(dir_fd, dir_, [&](const std::string& name) {
    struct stat st;
    if (!is_entry_name(name) || ::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISREG(st.st_mode)) {
      return;
    }
#ifdef __APPLE__
    items.push_back({name, static_cast<uint64_t>(st.st_size), st.st_mtimespec});
#else
    items.push_back({name, static_cast<uint64_t>(st.st_size), st.st_mtim});
#endif
    total += static_cast<uint64_t>(st.st_size);
  });
  if (total <= limits_.max_bytes) return;
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    return a.used.tv_sec != b.used.tv_sec ? a.used.tv_sec < b.used.tv_sec
                                          : a.used.tv_nsec < b.used.tv_nsec;
  });
  for (const Item& item : items) {
    if (total <= limits_.max_bytes) break;
    if (item.name == keep) continue;
    // ENOENT: another process evicted it first; it is gone either way.
    if (::unlinkat(dir_fd, item.name.c_str(), 0) == 0) {
      evictions_.fetch_add(1, std::memory_order_relaxed);
    }
    total -= item.bytes;
  }
}

// ---- Entry locks ----

DiskCache::EntryLock::EntryLock(EntryLock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      dir_fd_(std::exchange(other.dir_fd_, -1)),
      name_(std::move(other.name_)),
      waited_(other.waited_) {}

DiskCache::EntryLock& DiskCache::EntryLock::operator=(EntryLock&& other) noexcept {
  if (this != &other) {
    release();
    fd_ = std::exchange(other.fd_, -1);
    dir_fd_ = std::exchange(other.dir_fd_, -1);
    name_ = std::move(other.name_);
    waited_ = other.waited_;
  }
  return *this;
}

DiskCache::EntryLock::~EntryLock() {
  release();
}

void DiskCache::EntryLock::release() {
  if (fd_ >= 0) {
    // Removed while still held: a waiter that then gets this file's lock sees it gone and takes a
    // fresh one, so no two processes ever hold the claim at once.
    ::unlinkat(dir_fd_, name_.c_str(), 0);
    // Unlocked explicitly: a child forked meanwhile shares the open file, and closing ours alone
    // would leave the lock held until the child exits.
    ::flock(fd_, LOCK_UN);
    ::close(std::exchange(fd_, -1));
  }
  if (dir_fd_ >= 0) ::close(std::exchange(dir_fd_, -1));
}

DiskCache::EntryLock DiskCache::lock(std::string_view backend, std::string_view key) {
  check_backend(backend);
  EntryLock out;
  if (!enabled()) return out;
  const int dfd = dir_fd();
  if (dfd < 0) return out;
  const std::string name = fmt::format(".{}{}", file_name(backend, key), kLockSuffix);
  const auto shown = [&] { return path_of(name); };
  using Clock = std::chrono::steady_clock;
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(limits_.lock_timeout_seconds));
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    Fd fd(
        ::openat(dfd, name.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600));
    struct stat st;
    if (fd.get() < 0 || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
      record_error(fmt::format("cannot lock cache entry {}: {}; compiling without the lock",
                               shown(), errno_or(fd.get() < 0 ? errno : 0, "not a regular file")));
      return out;
    }
    // Polled rather than blocking, so that the wait can end. The kernel drops a lock when its
    // holder exits, however it dies: a lock file left behind by a killed process is free.
    for (;;) {
      if (::flock(fd.get(), LOCK_EX | LOCK_NB) == 0) break;
      if (errno == EINTR) continue;
      if (errno != EWOULDBLOCK) {
        record_error(fmt::format("cannot lock cache entry {}: {}; compiling without the lock",
                                 shown(), errno_text(errno)));
        return out;
      }
      if (!out.waited_) {
        out.waited_ = true;
        lock_waits_.fetch_add(1, std::memory_order_relaxed);
      }
      if (Clock::now() >= deadline) {
        lock_timeouts_.fetch_add(1, std::memory_order_relaxed);
        record_error(
            fmt::format("waited {} s for another process compiling the kernel of {} "
                        "(TACK_CACHE_LOCK_TIMEOUT); compiling here",
                        limits_.lock_timeout_seconds, shown()));
        return out;
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds(50));
    }
    // A lock on a file its holder removed (see release) claims nothing: start again.
    struct stat now;
    if (::fstatat(dfd, name.c_str(), &now, AT_SYMLINK_NOFOLLOW) == 0 && now.st_dev == st.st_dev &&
        now.st_ino == st.st_ino) {
      out.fd_ = fd.release();
      out.dir_fd_ = ::fcntl(dfd, F_DUPFD_CLOEXEC, 0);
      out.name_ = name;
      return out;
    }
    out.waited_ = true;
  }
}

DiskCacheStats DiskCache::stats() const {
  DiskCacheStats s;
  s.hits = hits_.load(std::memory_order_relaxed);
  s.misses = misses_.load(std::memory_order_relaxed);
  s.writes = writes_.load(std::memory_order_relaxed);
  s.corrupt = corrupt_.load(std::memory_order_relaxed);
  s.write_failures = write_failures_.load(std::memory_order_relaxed);
  s.refused = refused_.load(std::memory_order_relaxed);
  s.evictions = evictions_.load(std::memory_order_relaxed);
  s.lock_waits = lock_waits_.load(std::memory_order_relaxed);
  s.lock_timeouts = lock_timeouts_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace tack
