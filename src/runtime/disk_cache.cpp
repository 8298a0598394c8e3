#include "runtime/disk_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <system_error>
#include <thread>
#include <utility>

#include <fmt/core.h>
#include <xxhash.h>

#include "tack/error.hpp"

namespace tack {
namespace {

// File layout, all integers little-endian:
//   magic[8] | format version u32 | key length u64 | key | artifact length u64 |
//   XXH3-64 of the artifact u64 | artifact
// The file must end exactly after the artifact.
constexpr std::string_view kMagic = "TACKCCH1";
constexpr uint32_t kFormatVersion = 1;
constexpr size_t kHeaderBytes = 8 + 4 + 8;  // magic, version, key length
constexpr size_t kTrailerBytes = 8 + 8;     // artifact length, checksum
constexpr std::string_view kEntrySuffix = ".tck";
constexpr std::string_view kTempSuffix = ".tmp";
// A temporary file this old belongs to a writer that died; younger ones may still be renamed.
constexpr time_t kStaleTempSeconds = 600;

void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t get_le(std::string_view data, size_t offset, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) {
    v |= static_cast<uint64_t>(static_cast<unsigned char>(data[offset + i])) << (8 * i);
  }
  return v;
}

struct ParsedEntry {
  std::string_view key;
  std::string_view artifact;
};

// Parses a whole entry file. Returns what is wrong with it, or nullptr when it is well formed.
// Every length is checked against the bytes actually present before it is used.
const char* parse_entry(std::string_view data, ParsedEntry* out) {
  if (data.size() < kHeaderBytes) return "truncated header";
  if (data.substr(0, kMagic.size()) != kMagic) return "bad magic";
  if (get_le(data, 8, 4) != kFormatVersion) return "unknown format version";
  const uint64_t key_len = get_le(data, 12, 8);
  size_t offset = kHeaderBytes;
  if (key_len > data.size() - offset) return "truncated key";
  out->key = data.substr(offset, key_len);
  offset += key_len;
  if (data.size() - offset < kTrailerBytes) return "truncated trailer";
  const uint64_t artifact_len = get_le(data, offset, 8);
  const uint64_t checksum = get_le(data, offset + 8, 8);
  offset += kTrailerBytes;
  if (artifact_len > data.size() - offset) return "truncated artifact";
  if (artifact_len < data.size() - offset) return "trailing bytes";
  out->artifact = data.substr(offset);
  if (XXH3_64bits(out->artifact.data(), out->artifact.size()) != checksum) {
    return "checksum mismatch";
  }
  return nullptr;
}

std::string errno_text(int err) {
  return std::error_code(err, std::generic_category()).message();
}

// Reads up to `size` bytes at `offset`; fewer only at end of file. nullopt on an I/O error.
std::optional<std::string> read_at(int fd, uint64_t offset, size_t size) {
  std::string buf(size, '\0');
  size_t done = 0;
  while (done < size) {
    const ssize_t got =
        ::pread(fd, buf.data() + done, size - done, static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      return std::nullopt;
    }
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  buf.resize(done);
  return buf;
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t put = ::write(fd, data.data(), data.size());
    if (put < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<size_t>(put));
  }
  return true;
}

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
  // Closes now and reports the error, which is where NFS and full disks may surface.
  bool close() {
    const int rc = ::close(std::exchange(fd_, -1));
    return rc == 0;
  }

 private:
  int fd_;
};

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

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// An entry file: `<backend>-<hash>.tck`, never a hidden temporary.
bool is_entry_name(std::string_view name) {
  return !name.empty() && name.front() != '.' && ends_with(name, kEntrySuffix);
}

bool is_temp_name(std::string_view name) {
  return !name.empty() && name.front() == '.' && ends_with(name, kTempSuffix);
}

// Reads the header and key of an entry without its artifact, for list().
std::optional<CacheEntryInfo> describe_entry(const std::filesystem::path& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return std::nullopt;
  struct stat st;
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  auto header = read_at(fd.get(), 0, kHeaderBytes);
  if (!header || header->size() < kHeaderBytes) return std::nullopt;
  if (std::string_view(*header).substr(0, kMagic.size()) != kMagic) return std::nullopt;
  if (get_le(*header, 8, 4) != kFormatVersion) return std::nullopt;
  const uint64_t key_len = get_le(*header, 12, 8);
  if (key_len > size - kHeaderBytes || size - kHeaderBytes - key_len < kTrailerBytes) {
    return std::nullopt;
  }
  auto key = read_at(fd.get(), kHeaderBytes, key_len);
  if (!key || key->size() != key_len) return std::nullopt;
  auto trailer = read_at(fd.get(), kHeaderBytes + key_len, kTrailerBytes);
  if (!trailer || trailer->size() != kTrailerBytes) return std::nullopt;
  // The checksum is not verified here: that would read every artifact to print a listing.
  if (get_le(*trailer, 0, 8) != size - kHeaderBytes - key_len - kTrailerBytes) return std::nullopt;

  CacheEntryInfo info;
  info.file = path.filename().string();
  info.key_summary = key->substr(0, key->find('\n'));
  info.bytes = size;
  info.backend = info.file.substr(0, info.file.rfind('-'));
  info.mtime = static_cast<int64_t>(st.st_mtime);
  return info;
}

// Calls fn(path) for each directory entry. Errors end the walk instead of throwing, since
// directory_iterator's operator++ throws when the directory changes or vanishes mid-walk.
template <typename Fn>
void for_each_in_dir(const std::filesystem::path& dir, Fn fn) {
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) fn(it->path());
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

}  // namespace

DiskCache& DiskCache::global() {
  static DiskCache* cache = from_environment().release();
  return *cache;
}

std::unique_ptr<DiskCache> DiskCache::from_environment() {
  std::filesystem::path dir;
  std::string no_dir_reason;
  std::error_code ec;
  if (const char* env = nonempty_env("TACK_CACHE_DIR")) {
    // Absolute now, so that a later chdir() does not move the cache.
    dir = std::filesystem::absolute(env, ec);
    if (ec) dir = env;
  } else if (const char* xdg = nonempty_env("XDG_CACHE_HOME");
             xdg != nullptr && std::filesystem::path(xdg).is_absolute()) {
    // The XDG spec says a relative XDG_CACHE_HOME is invalid and must be ignored.
    dir = std::filesystem::path(xdg) / "tack";
  } else if (const char* home = nonempty_env("HOME")) {
    dir = std::filesystem::path(home) / ".cache" / "tack";
  } else {
    no_dir_reason = "no cache directory: TACK_CACHE_DIR, XDG_CACHE_HOME and HOME are unset";
  }

  if (const char* flag = std::getenv("TACK_CACHE"); flag != nullptr && is_off(flag)) {
    return std::make_unique<DiskCache>(std::move(dir), false, fmt::format("TACK_CACHE={}", flag));
  }
  if (!no_dir_reason.empty()) {
    return std::make_unique<DiskCache>(std::move(dir), false, std::move(no_dir_reason));
  }
  return std::make_unique<DiskCache>(std::move(dir), true);
}

DiskCache::DiskCache(std::filesystem::path dir, bool enabled, std::string disabled_reason)
    : dir_(std::move(dir)), enabled_(enabled) {
  if (!enabled) disabled_reason_ = std::move(disabled_reason);
}

std::string DiskCache::disabled_reason() const {
  std::lock_guard<std::mutex> lock(mu_);
  return disabled_reason_;
}

std::string DiskCache::last_error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_error_;
}

std::string DiskCache::file_name(std::string_view backend, std::string_view key) {
  const XXH128_hash_t h = XXH3_128bits(key.data(), key.size());
  return fmt::format("{}-{:016x}{:016x}{}", backend, h.high64, h.low64, kEntrySuffix);
}

std::optional<std::string> DiskCache::load(std::string_view backend, std::string_view key) {
  check_backend(backend);
  if (!enabled()) return std::nullopt;
  const std::filesystem::path path = dir_ / file_name(backend, key);

  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    const int err = errno;
    if (err != ENOENT && err != ENOTDIR) {
      record_error(fmt::format("cannot open cache entry {}: {}", path.string(), errno_text(err)));
    }
    misses_.fetch_add(1, std::memory_order_relaxed);
    return std::nullopt;
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    record_error(fmt::format("cache entry {} is not a readable file", path.string()));
    misses_.fetch_add(1, std::memory_order_relaxed);
    return std::nullopt;
  }
  // Entries are never modified in place (writers rename a new file over them), so the size read
  // here is the size of this file for as long as it is open.
  auto data = read_at(fd.get(), 0, static_cast<size_t>(st.st_size));
  if (!data) {
    // An I/O error says nothing about the bytes; leave the file for the next store to replace.
    record_error(fmt::format("cannot read cache entry {}: {}", path.string(), errno_text(errno)));
    misses_.fetch_add(1, std::memory_order_relaxed);
    return std::nullopt;
  }
  fd.close();

  ParsedEntry entry;
  const char* problem = parse_entry(*data, &entry);
  if (problem == nullptr && entry.key != key) problem = "stored key differs (hash collision)";
  if (problem != nullptr) {
    record_error(fmt::format("removed damaged cache entry {}: {}", path.string(), problem));
    corrupt_.fetch_add(1, std::memory_order_relaxed);
    misses_.fetch_add(1, std::memory_order_relaxed);
    remove_damaged(path, static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino));
    return std::nullopt;
  }
  hits_.fetch_add(1, std::memory_order_relaxed);
  // Erasing the header in place reuses the buffer instead of allocating a second copy.
  const size_t artifact_offset = static_cast<size_t>(entry.artifact.data() - data->data());
  data->erase(0, artifact_offset);
  return std::move(*data);
}

void DiskCache::store(std::string_view backend, std::string_view key, std::string_view artifact) {
  check_backend(backend);
  if (!enabled() || !ensure_dir()) return;
  const std::string name = file_name(backend, key);
  const std::filesystem::path final_path = dir_ / name;

  std::string head;
  head.reserve(kHeaderBytes + key.size() + kTrailerBytes);
  head.append(kMagic);
  put_u32(head, kFormatVersion);
  put_u64(head, key.size());
  head.append(key);
  put_u64(head, artifact.size());
  put_u64(head, XXH3_64bits(artifact.data(), artifact.size()));

  const auto fail = [&](const std::string& what, int err) {
    write_failures_.fetch_add(1, std::memory_order_relaxed);
    record_error(fmt::format("cannot write cache entry {}: {}: {}", final_path.string(), what,
                             errno_text(err)));
  };

  // Unique across processes (pid), threads (thread id) and calls (counter); hidden and suffixed so
  // that list() and load() never mistake it for an entry.
  const size_t tid = std::hash<std::thread::id>{}(std::this_thread::get_id());
  std::filesystem::path temp_path;
  int raw_fd = -1;
  for (int attempt = 0; attempt < 4 && raw_fd < 0; ++attempt) {
    temp_path =
        dir_ / fmt::format(".{}.{}.{:x}.{}{}", name, ::getpid(), tid,
                           temp_counter_.fetch_add(1, std::memory_order_relaxed), kTempSuffix);
    raw_fd = ::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (raw_fd >= 0) break;
    if (errno == ENOENT) {
      // Someone removed the directory (`rm -rf ~/.cache/tack`) while we run: make it again.
      {
        std::lock_guard<std::mutex> lock(mu_);
        dir_ready_ = false;
      }
      if (!ensure_dir()) return;
    } else if (errno != EEXIST) {  // EEXIST: a dead process's leftover with our pid; next counter
      break;
    }
  }
  if (raw_fd < 0) {
    fail("cannot create a temporary file", errno);
    return;
  }
  Fd fd(raw_fd);
  // No fsync: a file cut short by a crash fails its length or checksum check and is recompiled.
  if (!write_all(fd.get(), head) || !write_all(fd.get(), artifact)) {
    fail("write failed", errno);
    ::unlink(temp_path.c_str());
    return;
  }
  if (!fd.close()) {
    fail("close failed", errno);
    ::unlink(temp_path.c_str());
    return;
  }
  if (::rename(temp_path.c_str(), final_path.c_str()) != 0) {
    fail("rename failed", errno);
    ::unlink(temp_path.c_str());
    return;
  }
  writes_.fetch_add(1, std::memory_order_relaxed);
}

DiskCacheStats DiskCache::stats() const {
  DiskCacheStats s;
  s.hits = hits_.load(std::memory_order_relaxed);
  s.misses = misses_.load(std::memory_order_relaxed);
  s.writes = writes_.load(std::memory_order_relaxed);
  s.corrupt = corrupt_.load(std::memory_order_relaxed);
  s.write_failures = write_failures_.load(std::memory_order_relaxed);
  return s;
}

std::vector<CacheEntryInfo> DiskCache::list() const {
  std::vector<CacheEntryInfo> entries;
  if (dir_.empty()) return entries;
  for_each_in_dir(dir_, [&](const std::filesystem::path& path) {
    if (!is_entry_name(path.filename().string())) return;
    if (auto info = describe_entry(path)) entries.push_back(std::move(*info));
  });
  std::sort(entries.begin(), entries.end(), [](const CacheEntryInfo& a, const CacheEntryInfo& b) {
    return a.mtime != b.mtime ? a.mtime > b.mtime : a.file < b.file;
  });
  return entries;
}

uint64_t DiskCache::total_bytes() const {
  uint64_t total = 0;
  if (dir_.empty()) return total;
  for_each_in_dir(dir_, [&](const std::filesystem::path& path) {
    struct stat st;
    if (is_entry_name(path.filename().string()) && ::stat(path.c_str(), &st) == 0 &&
        S_ISREG(st.st_mode)) {
      total += static_cast<uint64_t>(st.st_size);
    }
  });
  return total;
}

size_t DiskCache::clear() {
  size_t removed = 0;
  if (dir_.empty()) return removed;
  const time_t now = std::time(nullptr);
  std::vector<std::filesystem::path> doomed;
  // Collected first: removing while iterating a directory may skip or repeat names.
  for_each_in_dir(dir_, [&](const std::filesystem::path& path) {
    const std::string name = path.filename().string();
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
    // A young temporary file is another process's store in progress; removing it would fail that.
    if (is_entry_name(name) || (is_temp_name(name) && now - st.st_mtime > kStaleTempSeconds)) {
      doomed.push_back(path);
    }
  });
  for (const auto& path : doomed) {
    if (::unlink(path.c_str()) == 0 && is_entry_name(path.filename().string())) ++removed;
  }
  return removed;
}

bool DiskCache::ensure_dir() {
  std::lock_guard<std::mutex> lock(mu_);
  if (dir_ready_) return true;
  if (!enabled()) return false;
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  std::error_code is_dir_ec;
  if (!std::filesystem::is_directory(dir_, is_dir_ec)) {
    const std::string reason =
        fmt::format("cannot create the cache directory {}: {}", dir_.string(),
                    ec ? ec.message() : std::string("not a directory"));
    disabled_reason_ = reason;
    last_error_ = reason;
    enabled_.store(false, std::memory_order_release);
    return false;
  }
  dir_ready_ = true;
  return true;
}

void DiskCache::record_error(std::string message) const {
  std::lock_guard<std::mutex> lock(mu_);
  last_error_ = std::move(message);
}

void DiskCache::remove_damaged(const std::filesystem::path& path, uint64_t dev, uint64_t ino) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return;
  if (static_cast<uint64_t>(st.st_dev) != dev || static_cast<uint64_t>(st.st_ino) != ino) return;
  ::unlink(path.c_str());
}

}  // namespace tack
