// The disk cache runs only code its user wrote there (private, bounded, one compile), under the
// faults and planted files of docs/backends.md's threat model. Each test holds as root and as an
// unprivileged user: run as root, CacheSafetyAsUser runs this suite and the process tests again as
// `nobody`.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "runtime/disk_cache.hpp"

extern char** environ;

namespace tack {
namespace {

namespace fs = std::filesystem;

constexpr uid_t kNobody = 65534;
const std::string kKey = "tack 0.1.0\nbackend cpu\ntarget x86_64\nkernel k(a: f32[n])\n";
const std::string kArtifact =
    "\x7f"
    "ELF object code that would run";

bool is_root() {
  return ::geteuid() == 0;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_file(const fs::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Runs `child` in a forked process that a 20 s alarm ends if it hangs; returns its exit status
// (0 = success, 100 + the signal that ended it).
template <typename F>
int in_child(F child) {
  const pid_t pid = fork();
  if (pid == 0) {
    ::alarm(20);
    _exit(child() ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

class CacheSafety : public testing::Test {
 protected:
  void SetUp() override {
    std::string templ = (fs::temp_directory_path() / "tack_cache_safety_XXXXXX").string();
    ASSERT_NE(mkdtemp(templ.data()), nullptr);
    root_ = templ;
    dir_ = root_ / "cache";
  }
  void TearDown() override {
    // A directory left at mode 000 cannot be emptied by its (unprivileged) owner.
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(root_, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_directory(ec) && !it->is_symlink(ec)) ::chmod(it->path().c_str(), 0700);
    }
    fs::remove_all(root_, ec);
  }

  fs::path entry_path(const fs::path& dir = {}) const {
    return (dir.empty() ? dir_ : dir) / DiskCache::file_name("cpu", kKey);
  }

  // The bytes of a valid entry for (cpu, kKey, kArtifact), exactly as a store writes them: what a
  // cache that accepted the file would run.
  std::string valid_entry() {
    const fs::path scratch = root_ / "scratch";
    DiskCache(scratch).store("cpu", kKey, kArtifact);
    std::string bytes = read_file(entry_path(scratch));
    fs::remove_all(scratch);
    EXPECT_FALSE(bytes.empty());
    return bytes;
  }

  // A directory at `path` holding a valid entry, then given `mode`.
  void make_dir_with_entry(const fs::path& path, mode_t mode) {
    const std::string entry = valid_entry();
    fs::create_directories(path);
    write_file(entry_path(path), entry);
    ASSERT_EQ(::chmod(entry_path(path).c_str(), 0644), 0);
    ASSERT_EQ(::chmod(path.c_str(), mode), 0);
  }

  fs::path root_;
  fs::path dir_;
};

// ---- Private by construction: the directory ----

TEST_F(CacheSafety, ADirectoryOwnedByAnotherUserIsRefused) {
  fs::path foreign;
  if (is_root()) {
    foreign = dir_;
    make_dir_with_entry(foreign, 0755);
    ASSERT_EQ(::chown(foreign.c_str(), kNobody, kNobody), 0);
    ASSERT_EQ(::chown(entry_path(foreign).c_str(), kNobody, kNobody), 0);
  } else {
    foreign = "/usr";  // root's, and no user can plant anything there
  }
  DiskCache cache(foreign);
  EXPECT_FALSE(cache.enabled());
  EXPECT_NE(cache.disabled_reason().find("is owned by"), std::string::npos)
      << cache.disabled_reason();
  EXPECT_NE(cache.disabled_reason().find("TACK_CACHE_DIR"), std::string::npos)
      << "says what to change: " << cache.disabled_reason();
  EXPECT_EQ(cache.load("cpu", kKey), std::nullopt);
  EXPECT_EQ(cache.stats().refused, 1u);
  EXPECT_EQ(cache.stats().hits, 0u);
  cache.store("cpu", kKey + "x", "y");
  EXPECT_FALSE(fs::exists(foreign / DiskCache::file_name("cpu", kKey + "x")));
}

TEST_F(CacheSafety, ADirectoryWritableByGroupOrOthersIsRefused) {
  for (mode_t mode : {0777, 01777, 0775, 0770, 0703, 0757}) {
    SCOPED_TRACE(testing::Message() << "mode " << std::oct << mode);
    fs::remove_all(dir_);
    make_dir_with_entry(dir_, mode);
    DiskCache cache(dir_);
    EXPECT_FALSE(cache.enabled());
    EXPECT_NE(cache.disabled_reason().find("is writable by"), std::string::npos)
        << cache.disabled_reason();
    EXPECT_NE(cache.disabled_reason().find("chmod 700"), std::string::npos)
        << cache.disabled_reason();
    EXPECT_EQ(cache.load("cpu", kKey), std::nullopt) << "the valid entry there is never read";
    EXPECT_EQ(cache.stats().hits, 0u);
  }
  // The same through TACK_CACHE_DIR, as the process's cache would be configured.
  ::setenv("TACK_CACHE_DIR", dir_.c_str(), 1);
  auto from_env = DiskCache::from_environment();
  ::unsetenv("TACK_CACHE_DIR");
  EXPECT_FALSE(from_env->enabled());
  EXPECT_EQ(from_env->load("cpu", kKey), std::nullopt);
  // Made private again, the directory is used, and its (own, valid) entry loads.
  ASSERT_EQ(::chmod(dir_.c_str(), 0700), 0);
  DiskCache cache(dir_);
  EXPECT_TRUE(cache.enabled()) << cache.disabled_reason();
  EXPECT_EQ(cache.load("cpu", kKey), kArtifact);
}

TEST_F(CacheSafety, AParentWritableByOthersIsRefusedUnlessSticky) {
  const fs::path shared = root_ / "shared";
  fs::create_directories(shared);
  ASSERT_EQ(::chmod(shared.c_str(), 0777), 0);
  const fs::path inside = shared / "mine" / "cache";
  {
    DiskCache cache(inside);
    EXPECT_FALSE(cache.enabled());
    EXPECT_NE(cache.disabled_reason().find("a parent of the cache directory"), std::string::npos)
        << cache.disabled_reason();
  }
  // Sticky, like /tmp: no one can rename or remove another user's directory in it.
  ASSERT_EQ(::chmod(shared.c_str(), 01777), 0);
  DiskCache cache(inside);
  EXPECT_TRUE(cache.enabled()) << cache.disabled_reason();
}

TEST_F(CacheSafety, TheUsersCacheRootMustBeTheirOwn) {
  // The default directory is <cache root>/tack: the cache root (~/.cache) is checked as strictly
  // as the cache directory, even when sticky.
  const fs::path cache_root = root_ / "dot-cache";
  fs::create_directories(cache_root);
  ASSERT_EQ(::chmod(cache_root.c_str(), 01777), 0);
  DiskCacheOptions options;
  options.private_root = cache_root;
  DiskCache cache(cache_root / "tack", options);
  EXPECT_FALSE(cache.enabled());
  EXPECT_NE(cache.disabled_reason().find(cache_root.string()), std::string::npos)
      << cache.disabled_reason();
  // A parent above the cache root owned by another user (not root) is refused too.
  if (is_root()) {
    const fs::path theirs = root_ / "theirs";
    fs::create_directories(theirs / "mine");
    ASSERT_EQ(::chown(theirs.c_str(), kNobody, kNobody), 0);
    ASSERT_EQ(::chmod(theirs.c_str(), 0755), 0);
    DiskCache under(theirs / "mine" / "cache");
    EXPECT_FALSE(under.enabled());
    EXPECT_NE(under.disabled_reason().find("not by you"), std::string::npos)
        << under.disabled_reason();
  }
}

// The checks apply where the path leads: a cache directory named through a link, with ".." or
// with a '/' at the end is checked, used and reported by its canonical path.
TEST_F(CacheSafety, ThePathIsCheckedWhereItLeads) {
  const fs::path real = root_ / "real" / "cache";
  fs::create_directories(real);
  fs::create_directory_symlink(root_ / "real", root_ / "link");
  for (const fs::path& spelled :
       {root_ / "link" / "cache", root_ / "real" / ".." / "real" / "cache",
        fs::path(real.string() + "/")}) {
    SCOPED_TRACE(spelled);
    const std::string key = kKey + spelled.string();
    DiskCache cache(spelled);
    EXPECT_TRUE(cache.enabled()) << cache.disabled_reason();
    cache.store("cpu", key, kArtifact);
    EXPECT_TRUE(fs::exists(real / DiskCache::file_name("cpu", key)));
    EXPECT_EQ(DiskCache(real).load("cpu", key), kArtifact);
  }

  // A private-looking path through a link into a directory others can write is refused.
  const fs::path shared = root_ / "shared";
  fs::create_directories(shared / "cache");
  ASSERT_EQ(::chmod(shared.c_str(), 0777), 0);
  fs::create_directory_symlink(shared, root_ / "mine");
  DiskCache through_link(root_ / "mine" / "cache");
  EXPECT_FALSE(through_link.enabled());
  EXPECT_NE(through_link.disabled_reason().find(shared.string() + ", a parent of the cache"),
            std::string::npos)
      << through_link.disabled_reason();

  // So is a cache root reached through a link, by what it links to.
  const fs::path dot_cache = root_ / "dot-cache";
  fs::create_directories(dot_cache / "tack");
  ASSERT_EQ(::chmod(dot_cache.c_str(), 01777), 0);
  fs::create_directory_symlink(dot_cache, root_ / "cache-root");
  DiskCacheOptions options;
  options.private_root = root_ / "cache-root";
  DiskCache under_root(root_ / "cache-root" / "tack", options);
  EXPECT_FALSE(under_root.enabled());
  EXPECT_NE(under_root.disabled_reason().find(dot_cache.string() + " (mode 1777)"),
            std::string::npos)
      << under_root.disabled_reason();
}

TEST_F(CacheSafety, AnUnusableDirectoryIsReportedOff) {
  fs::create_directories(dir_);
  ASSERT_EQ(::chmod(dir_.c_str(), 0), 0);
  DiskCache cache(dir_);
  if (is_root()) {
    // Root is not bound by permission bits: the directory is usable, and used.
    EXPECT_TRUE(cache.enabled()) << cache.disabled_reason();
    return;
  }
  EXPECT_FALSE(cache.enabled());
  EXPECT_NE(cache.disabled_reason().find("Permission denied"), std::string::npos)
      << cache.disabled_reason();
  EXPECT_EQ(cache.load("cpu", kKey), std::nullopt);
  cache.store("cpu", kKey, kArtifact);
  EXPECT_EQ(cache.stats().writes, 0u);
  // A read-only directory would fail every store: off as well.
  ASSERT_EQ(::chmod(dir_.c_str(), 0500), 0);
  DiskCache read_only(dir_);
  EXPECT_FALSE(read_only.enabled());
}

// ---- Private by construction: each entry ----

TEST_F(CacheSafety, AnEntryOwnedByAnotherUserIsRefusedAndRemoved) {
  // Root can give a file away; an unprivileged run gets one that root made (CacheSafetyAsUser).
  fs::path dir = dir_;
  if (const char* prepared = std::getenv("TACK_TEST_FOREIGN_ENTRY_DIR")) {
    dir = prepared;
  } else if (is_root()) {
    make_dir_with_entry(dir_, 0700);
    ASSERT_EQ(::chown(entry_path().c_str(), kNobody, kNobody), 0);
  } else {
    GTEST_SKIP() << "needs root, or a file that root prepared, to have a file of another user";
  }
  DiskCache cache(dir);
  ASSERT_TRUE(cache.enabled()) << cache.disabled_reason();
  EXPECT_EQ(cache.load("cpu", kKey), std::nullopt);
  EXPECT_EQ(cache.stats().refused, 1u);
  EXPECT_NE(cache.last_error().find("is owned by"), std::string::npos) << cache.last_error();
  EXPECT_FALSE(fs::exists(entry_path(dir))) << "removed, so it is not refused again and again";
  cache.store("cpu", kKey, "own code");
  EXPECT_EQ(cache.load("cpu", kKey), "own code");
}

TEST_F(CacheSafety, AnEntryWritableByOthersIsRefused) {
  for (mode_t mode : {0666, 0646, 0620}) {
    SCOPED_TRACE(testing::Message() << "mode " << std::oct << mode);
    fs::remove_all(dir_);
    make_dir_with_entry(dir_, 0700);
    ASSERT_EQ(::chmod(entry_path().c_str(), mode), 0);
    DiskCache cache(dir_);
    EXPECT_EQ(cache.load("cpu", kKey), std::nullopt);
    EXPECT_EQ(cache.stats().refused, 1u);
    EXPECT_FALSE(fs::exists(entry_path()));
    // The refusal says why and how to fix the permissions.
    EXPECT_NE(cache.last_error().find("is writable by"), std::string::npos) << cache.last_error();
    EXPECT_NE(cache.last_error().find("chmod 700"), std::string::npos) << cache.last_error();
  }
}

TEST_F(CacheSafety, ALinkAtAnEntryNameIsNotFollowed) {
  make_dir_with_entry(dir_, 0700);
  const fs::path elsewhere = root_ / "elsewhere.tck";
  fs::rename(entry_path(), elsewhere);
  fs::create_symlink(elsewhere, entry_path());
  DiskCache cache(dir_);
  EXPECT_EQ(cache.load("cpu", kKey), std::nullopt);
  EXPECT_EQ(cache.stats().refused, 1u);
  EXPECT_FALSE(fs::is_symlink(entry_path()));
  EXPECT_TRUE(fs::exists(elsewhere)) << "the link is removed, not what it points to";
}

TEST_F(CacheSafety, AFifoAtAnEntryNameNeitherHangsNorIsRetried) {
  fs::create_directories(dir_);
  ::chmod(dir_.c_str(), 0700);
  ASSERT_EQ(::mkfifo(entry_path().c_str(), 0600), 0);
  EXPECT_EQ(in_child([&] {
              DiskCache cache(dir_);
              bool ok = cache.load("cpu", kKey) == std::nullopt && cache.stats().corrupt == 1 &&
                        !fs::exists(entry_path());
              ok = ok && cache.load("cpu", kKey) == std::nullopt && cache.stats().corrupt == 1;
              cache.store("cpu", kKey, kArtifact);
              return ok && cache.load("cpu", kKey) == kArtifact;
            }),
            0)
      << "100 + 14 is SIGALRM: the load hung";
  // Nor do the tools hang on one.
  ASSERT_EQ(::mkfifo((dir_ / "cpu-0123.tck").c_str(), 0600), 0);
  EXPECT_EQ(in_child([&] {
              DiskCache cache(dir_);
              return cache.list().size() == 1 && cache.unusable_entries() == 1 &&
                     cache.clear().leftovers == 1;
            }),
            0);
}

TEST_F(CacheSafety, AHugeSparseFileIsNeitherReadNorRetried) {
  fs::create_directories(dir_);
  ::chmod(dir_.c_str(), 0700);
  {
    const int fd = ::open(entry_path().c_str(), O_WRONLY | O_CREAT, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, off_t{64} << 30), 0);  // 64 GiB of holes
    ::close(fd);
  }
  EXPECT_EQ(in_child([&] {
              DiskCache cache(dir_);
              if (cache.list().size() != 0 || cache.unusable_entries() != 1) return false;
              bool ok = cache.load("cpu", kKey) == std::nullopt && cache.stats().corrupt == 1;
              ok = ok && cache.last_error().find("over the limit") != std::string::npos;
              ok = ok && !fs::exists(entry_path());
              return ok && cache.load("cpu", kKey) == std::nullopt && cache.stats().corrupt == 1;
            }),
            0);
}

TEST_F(CacheSafety, ADirectoryAtAnEntryNameIsRemoved) {
  fs::create_directories(entry_path() / "inside");
  write_file(entry_path() / "inside" / "file", "x");
  ::chmod(dir_.c_str(), 0700);
  DiskCache cache(dir_);
  EXPECT_EQ(cache.load("cpu", kKey), std::nullopt);
  EXPECT_EQ(cache.stats().corrupt, 1u);
  EXPECT_FALSE(fs::exists(entry_path()));
  // And a store over one replaces it, so the next process loads instead of compiling again.
  fs::create_directories(entry_path() / "inside");
  cache.store("cpu", kKey, kArtifact);
  EXPECT_EQ(cache.stats().write_failures, 0u) << cache.last_error();
  EXPECT_EQ(DiskCache(dir_).load("cpu", kKey), kArtifact);
}

TEST_F(CacheSafety, AnUnreadableEntryIsRemoved) {
  make_dir_with_entry(dir_, 0700);
  ASSERT_EQ(::chmod(entry_path().c_str(), 0), 0);
  DiskCache cache(dir_);
  if (is_root()) {
    EXPECT_EQ(cache.load("cpu", kKey), kArtifact) << "root reads it, and it is root's own";
    return;
  }
  EXPECT_EQ(cache.load("cpu", kKey), std::nullopt);
  EXPECT_EQ(cache.stats().corrupt, 1u);
  EXPECT_FALSE(fs::exists(entry_path()));
}

TEST_F(CacheSafety, NewFilesArePrivate) {
  DiskCache cache(dir_);
  cache.store("cpu", kKey, kArtifact);
  EXPECT_EQ(fs::status(dir_).permissions(), fs::perms::owner_all);
  EXPECT_EQ(fs::status(entry_path()).permissions(), fs::perms::owner_read | fs::perms::owner_write);
}

TEST_F(CacheSafety, EveryBackendsArtifactsRoundTrip) {
  // The shapes of each backend's artifacts (backends.md): an object file, a program binary with
  // its source, PTX text, a code object, a native binary with its SPIR-V, MSL source; bytes of
  // every value, up to several MiB.
  DiskCache cache(dir_);
  uint32_t seed = 1;
  for (const char* backend : {"cpu", "opencl", "cuda", "hip", "level_zero", "metal"}) {
    for (size_t size : {size_t{0}, size_t{1}, size_t{4096}, size_t{3} << 20}) {
      SCOPED_TRACE(testing::Message() << backend << " " << size);
      std::string artifact(size, '\0');
      for (char& c : artifact) c = static_cast<char>((seed = seed * 1664525u + 1013904223u) >> 24);
      const std::string key = kKey + backend + std::to_string(size);
      cache.store(backend, key, artifact);
      EXPECT_EQ(cache.load(backend, key), artifact);
      EXPECT_EQ(fs::status(dir_ / DiskCache::file_name(backend, key)).permissions(),
                fs::perms::owner_read | fs::perms::owner_write);
    }
  }
  EXPECT_EQ(cache.stats().write_failures, 0u);
  EXPECT_EQ(cache.stats().corrupt + cache.stats().refused, 0u);
}

// ---- Bounded ----

TEST_F(CacheSafety, TheLeastRecentlyUsedEntriesAreEvicted) {
  const std::string artifact(1000, 'a');
  DiskCacheOptions options;
  options.limits.max_bytes = 3 * (artifact.size() + 200);
  options.limits.max_entry_bytes = options.limits.max_bytes;
  DiskCache cache(dir_, options);
  const std::vector<std::string> keys = {"key A", "key B", "key C", "key D"};
  const auto path = [&](const std::string& key) { return dir_ / DiskCache::file_name("cpu", key); };
  for (int i = 0; i < 3; ++i) {
    cache.store("cpu", keys[i], artifact);
    // Ages in seconds, so that the order does not depend on the file system's clock resolution.
    fs::last_write_time(path(keys[i]),
                        fs::file_time_type::clock::now() - std::chrono::hours(10 - i));
  }
  EXPECT_EQ(cache.stats().evictions, 0u);
  EXPECT_EQ(cache.load("cpu", keys[0]), artifact);  // A is now the most recently used
  cache.store("cpu", keys[3], artifact);
  EXPECT_EQ(cache.stats().evictions, 1u);
  EXPECT_TRUE(fs::exists(path(keys[0])));
  EXPECT_FALSE(fs::exists(path(keys[1]))) << "B was the least recently used";
  EXPECT_TRUE(fs::exists(path(keys[2])));
  EXPECT_TRUE(fs::exists(path(keys[3])));
  EXPECT_LE(cache.total_bytes(), options.limits.max_bytes);
}

TEST_F(CacheSafety, AnEntryOverTheLimitIsNeitherStoredNorRead) {
  DiskCacheOptions options;
  options.limits.max_entry_bytes = 4096;
  DiskCache cache(dir_, options);
  cache.store("cpu", kKey, std::string(5000, 'x'));
  EXPECT_EQ(cache.stats().write_failures, 1u);
  EXPECT_NE(cache.last_error().find("over the limit"), std::string::npos) << cache.last_error();
  EXPECT_FALSE(fs::exists(entry_path()));
  // Written by a process with a larger limit: removed, not read.
  DiskCache(dir_).store("cpu", kKey, std::string(5000, 'x'));
  EXPECT_EQ(cache.load("cpu", kKey), std::nullopt);
  EXPECT_EQ(cache.stats().corrupt, 1u);
  EXPECT_FALSE(fs::exists(entry_path()));
}

TEST_F(CacheSafety, LimitsFromTheEnvironment) {
  ::setenv("TACK_CACHE_DIR", dir_.c_str(), 1);
  const auto limits_with = [](const char* max) {
    ::setenv("TACK_CACHE_MAX_BYTES", max, 1);
    DiskCacheLimits limits = DiskCache::from_environment()->limits();
    ::unsetenv("TACK_CACHE_MAX_BYTES");
    return limits;
  };
  EXPECT_EQ(DiskCache::from_environment()->limits().max_bytes, uint64_t{1} << 30);
  EXPECT_EQ(DiskCache::from_environment()->limits().max_entry_bytes, uint64_t{64} << 20);
  EXPECT_EQ(limits_with("12345").max_bytes, 12345u);
  EXPECT_EQ(limits_with("12345").max_entry_bytes, 12345u) << "one entry never exceeds the whole";
  EXPECT_EQ(limits_with("2M").max_bytes, uint64_t{2} << 20);
  EXPECT_EQ(limits_with("1.5GiB").max_bytes, uint64_t{3} << 29);
  EXPECT_EQ(limits_with("lots").max_bytes, uint64_t{1} << 30) << "ignored, with a warning";
  EXPECT_EQ(limits_with("0").max_bytes, uint64_t{1} << 30);
  ::setenv("TACK_CACHE_LOCK_TIMEOUT", "2.5", 1);
  EXPECT_EQ(DiskCache::from_environment()->limits().lock_timeout_seconds, 2.5);
  ::unsetenv("TACK_CACHE_LOCK_TIMEOUT");
  ::unsetenv("TACK_CACHE_DIR");
}

// ---- One compile across processes: the entry lock ----

// Forks a process that takes the lock on (cpu, kKey), says so through a pipe, then runs
// `then(cache)` and exits, or is killed. Returns its pid once it holds the lock.
template <typename F>
pid_t holder(const fs::path& dir, F then) {
  int ready[2];
  if (::pipe(ready) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    ::close(ready[0]);
    {
      DiskCache cache(dir);
      DiskCache::EntryLock lock = cache.lock("cpu", kKey);
      const char held = lock.held() ? 'y' : 'n';
      if (::write(ready[1], &held, 1) != 1) _exit(2);
      then(cache);
    }  // released here, as a compile that ends releases it
    _exit(0);
  }
  ::close(ready[1]);
  char held = 0;
  const bool ok = ::read(ready[0], &held, 1) == 1 && held == 'y';
  ::close(ready[0]);
  return ok ? pid : -1;
}

TEST_F(CacheSafety, AWaiterLoadsWhatTheHolderStored) {
  DiskCache(dir_).enabled();  // creates the directory
  const pid_t pid = holder(dir_, [](DiskCache& cache) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // compiling
    cache.store("cpu", kKey, kArtifact);
  });
  ASSERT_GT(pid, 0);
  DiskCache cache(dir_);
  {
    DiskCache::EntryLock lock = cache.lock("cpu", kKey);
    EXPECT_TRUE(lock.waited());
    EXPECT_TRUE(lock.held());
    EXPECT_EQ(cache.load("cpu", kKey), kArtifact);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_EQ(cache.stats().lock_waits, 1u);
  EXPECT_EQ(cache.stats().lock_timeouts, 0u);
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().extension(), ".tck") << "left behind: " << e.path();
}

TEST_F(CacheSafety, AWaiterStopsWaitingAfterTheTimeout) {
  DiskCache(dir_).enabled();
  const pid_t pid = holder(dir_, [](DiskCache&) { ::pause(); });  // a compile that never ends
  ASSERT_GT(pid, 0);
  DiskCacheOptions options;
  options.limits.lock_timeout_seconds = 0.2;
  DiskCache cache(dir_, options);
  DiskCache::EntryLock lock = cache.lock("cpu", kKey);
  EXPECT_FALSE(lock.held());
  EXPECT_TRUE(lock.waited());
  EXPECT_EQ(cache.stats().lock_timeouts, 1u);
  EXPECT_NE(cache.last_error().find("TACK_CACHE_LOCK_TIMEOUT"), std::string::npos);
  ::kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

TEST_F(CacheSafety, AHolderKilledMidCompileLeavesNoEntryAndNoHeldLock) {
  DiskCache(dir_).enabled();
  // The holder writes half an entry's temporary file, then dies as `kill -9` would end it.
  const pid_t pid = holder(dir_, [&](DiskCache&) {
    write_file(dir_ / (".cpu-x.tck." + std::to_string(::getpid()) + ".1.0.tmp"), "half");
    ::raise(SIGKILL);
  });
  ASSERT_GT(pid, 0);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  DiskCacheOptions options;
  options.limits.lock_timeout_seconds = 30;
  DiskCache cache(dir_, options);
  DiskCache::EntryLock lock = cache.lock("cpu", kKey);
  EXPECT_TRUE(lock.held()) << "the kernel released the dead holder's lock";
  EXPECT_EQ(cache.stats().lock_timeouts, 0u);
  EXPECT_EQ(cache.load("cpu", kKey), std::nullopt);
  EXPECT_TRUE(cache.list().empty());
}

// ---- The same, as an unprivileged user ----

// This suite, the process tests (test_cache_process.cpp) and the in-process one, as `nobody`.
TEST(CacheSafetyAsUser, TheCacheSuitesHoldForAnUnprivilegedUser) {
  if (!is_root()) GTEST_SKIP() << "runs as root, to run the suites again as an unprivileged user";
  if (std::getenv("TACK_TEST_FOREIGN_ENTRY_DIR")) GTEST_SKIP() << "already the unprivileged run";
  const char* setpriv = "/usr/bin/setpriv";
  if (::access(setpriv, X_OK) != 0) GTEST_SKIP() << "no " << setpriv << " to switch users";
  const fs::path exe = fs::read_symlink("/proc/self/exe");
  // The unprivileged user must be able to run this binary where it is.
  for (fs::path p = exe.parent_path(); !p.empty(); p = p.parent_path()) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0 || !(st.st_mode & S_IXOTH))
      GTEST_SKIP() << p << " is not searchable by other users, so nobody cannot run " << exe;
    if (p == p.root_path()) break;
  }

  // A directory of nobody's holding an entry file of root's, for the foreign-entry test.
  std::string templ = (fs::temp_directory_path() / "tack_cache_as_user_XXXXXX").string();
  ASSERT_NE(mkdtemp(templ.data()), nullptr);
  const fs::path top = templ;
  ASSERT_EQ(::chmod(top.c_str(), 0755), 0);
  const fs::path theirs = top / "cache";
  {
    DiskCache scratch(top / "scratch");
    scratch.store("cpu", kKey, kArtifact);
  }
  fs::create_directories(theirs);
  fs::copy_file(top / "scratch" / DiskCache::file_name("cpu", kKey),
                theirs / DiskCache::file_name("cpu", kKey));
  ASSERT_EQ(::chmod((theirs / DiskCache::file_name("cpu", kKey)).c_str(), 0644), 0);
  ASSERT_EQ(::chown(theirs.c_str(), kNobody, kNobody), 0);
  ASSERT_EQ(::chmod(theirs.c_str(), 0700), 0);
  const fs::path log = top / "log.txt";
  // A home of nobody's own, for the process tests' kernel cache (and PoCL's, on OpenCL runs).
  const fs::path home = top / "home";
  fs::create_directories(home);
  ASSERT_EQ(::chown(home.c_str(), kNobody, kNobody), 0);
  ASSERT_EQ(::chmod(home.c_str(), 0700), 0);

  std::vector<std::string> env_storage;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    if (kv.rfind("TACK_CACHE", 0) == 0 || kv.rfind("HOME=", 0) == 0 ||
        kv.rfind("XDG_CACHE_HOME=", 0) == 0 ||
        kv.rfind("TMPDIR=", 0) == 0)  // the tests' temporary directories go to /tmp
      continue;
    env_storage.push_back(kv);
  }
  env_storage.push_back("HOME=" + home.string());
  env_storage.push_back("TACK_CACHE_DIR=" + (home / "tack-cache").string());
  env_storage.push_back("TACK_TEST_FOREIGN_ENTRY_DIR=" + theirs.string());
  std::vector<char*> envp;
  for (auto& s : env_storage) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = {setpriv,
                                   "--reuid=65534",
                                   "--regid=65534",
                                   "--clear-groups",
                                   "--",
                                   exe,
                                   "--gtest_filter=CacheSafety.*:CacheProcess.*:CacheOneCompile.*"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid;
  ASSERT_EQ(posix_spawn(&pid, setpriv, &actions, nullptr, argv.data(), envp.data()), 0);
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  waitpid(pid, &status, 0);
  const std::string output = read_file(log);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 77)  // TACK_TEST_DEVICE unavailable to nobody
    GTEST_SKIP() << output;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << output;
  EXPECT_NE(output.find("[  PASSED  ]"), std::string::npos) << output;
  // Nothing of this suite is skipped as nobody (a process test may be, off the CPU).
  EXPECT_EQ(output.find("[  SKIPPED ] CacheSafety."), std::string::npos) << output;
  std::error_code ec;
  fs::remove_all(top, ec);
}

}  // namespace
}  // namespace tack
