#include "runtime/disk_cache.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "runtime/private_dir.hpp"
#include "tack/error.hpp"

namespace tack {
namespace {

namespace fs = std::filesystem;

// A fresh directory under /tmp, removed with everything in it at the end of each test.
class DiskCacheTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string templ = (fs::temp_directory_path() / "tack_cache_test_XXXXXX").string();
    ASSERT_NE(mkdtemp(templ.data()), nullptr);
    root_ = templ;
    dir_ = root_ / "cache";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  fs::path entry_path(std::string_view backend, std::string_view key) const {
    return dir_ / DiskCache::file_name(backend, key);
  }

  fs::path root_;
  fs::path dir_;
};

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_file(const fs::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Bytes that are not text, so that a length or NUL mishandling shows.
std::string make_artifact(size_t size, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(size, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

// Runs `child` in a forked process and returns its exit status (0 = success).
template <typename F>
int in_child(F child) {
  const pid_t pid = fork();
  if (pid == 0) _exit(child() ? 0 : 1);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

// Sets or unsets an environment variable for the life of a scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }

 private:
  std::string name_;
  std::optional<std::string> old_;
};

const std::string kKey =
    "tack 0.1.0 cpu x86_64-znver3 llvm 19.1\ndebug=0\nkernel add(a: f32[n], b: f32[n]) { ... }\n";

TEST_F(DiskCacheTest, RoundTrip) {
  DiskCache cache(dir_);
  EXPECT_FALSE(fs::exists(dir_)) << "the directory is created on first use, not before";
  EXPECT_TRUE(cache.enabled());
  EXPECT_EQ(cache.disabled_reason(), "");
  EXPECT_EQ(cache.load("cpu", kKey), std::nullopt);
  EXPECT_EQ(fs::status(dir_).permissions(), fs::perms::owner_all) << "created 0700";

  const std::string artifact = make_artifact(10000, 1);
  cache.store("cpu", kKey, artifact);
  EXPECT_EQ(cache.load("cpu", kKey), artifact);
  EXPECT_EQ(cache.load("cuda", kKey), std::nullopt) << "the backend is part of the key";
  EXPECT_EQ(cache.load("cpu", kKey + " "), std::nullopt);

  const std::string big_key(64 * 1024, 'k');
  cache.store("cpu", big_key, "");
  EXPECT_EQ(cache.load("cpu", big_key), std::string());

  // A store replaces the entry.
  cache.store("cpu", kKey, "second");
  EXPECT_EQ(cache.load("cpu", kKey), "second");

  const DiskCacheStats s = cache.stats();
  EXPECT_EQ(s.hits, 3u);
  EXPECT_EQ(s.misses, 3u);
  EXPECT_EQ(s.writes, 3u);
  EXPECT_EQ(s.corrupt, 0u);
  EXPECT_EQ(s.write_failures, 0u);
}

// Whether the directory at `path` is on a local file system (on_local_file_system).
bool local_directory(const char* path) {
  const int fd = ::open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  EXPECT_GE(fd, 0) << path;
  const bool local = on_local_file_system(fd);
  ::close(fd);
  return local;
}

// On a local file system a hit says where the entry lies: a file that begins with the artifact
// (what the CPU backend dlopens). Elsewhere (a network file system) it says nothing.
TEST_F(DiskCacheTest, AHitSaysWhereTheArtifactLies) {
  DiskCache cache(dir_);
  const std::string artifact = make_artifact(3000, 5);
  cache.store("cpu", kKey, artifact);
  std::string stored_at;
  ASSERT_EQ(cache.load("cpu", kKey, true, &stored_at), artifact);
  if (!local_directory(dir_.c_str())) {
    EXPECT_EQ(stored_at, "");
    GTEST_SKIP() << dir_ << " is not on a local file system: the rest does not apply";
  }
  EXPECT_EQ(stored_at, (fs::canonical(dir_) / DiskCache::file_name("cpu", kKey)).string());
  std::ifstream in(stored_at, std::ios::binary);
  std::string start(artifact.size(), '\0');
  in.read(start.data(), static_cast<std::streamsize>(start.size()));
  EXPECT_EQ(start, artifact);
}

TEST(PrivateDir, LocalFileSystemsAreTheMachinesOwnDisksAndMemory) {
  EXPECT_TRUE(local_directory("/dev/shm"));  // tmpfs
  EXPECT_FALSE(local_directory("/proc"));
  EXPECT_FALSE(on_local_file_system(-1));
}

TEST_F(DiskCacheTest, FileNameIsBackendAndHash) {
  const std::string name = DiskCache::file_name("level_zero", kKey);
  EXPECT_TRUE(std::regex_match(name, std::regex("level_zero-[0-9a-f]{32}\\.tck"))) << name;
  EXPECT_EQ(name, DiskCache::file_name("level_zero", kKey));
  EXPECT_NE(name, DiskCache::file_name("level_zero", kKey + "x"));

  DiskCache cache(dir_);
  cache.store("level_zero", kKey, "abc");
  EXPECT_TRUE(fs::is_regular_file(dir_ / name));
  // Nothing else is left behind: no temporary files.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(DiskCacheTest, InvalidBackendNameThrows) {
  DiskCache cache(dir_);
  EXPECT_THROW(cache.load("../etc", kKey), ValueError);
  EXPECT_THROW(cache.store("a-b", kKey, "x"), ValueError);
  EXPECT_THROW(cache.load("", kKey), ValueError);
}

TEST_F(DiskCacheTest, AnotherProcessReadsTheEntry) {
  const std::string artifact = make_artifact(5000, 2);
  {
    DiskCache cache(dir_);
    cache.store("cpu", kKey, artifact);
  }
  EXPECT_EQ(in_child([&] {
              DiskCache cache(dir_);
              return cache.load("cpu", kKey) == artifact && cache.stats().hits == 1;
            }),
            0);
  // And the other way round.
  EXPECT_EQ(in_child([&] {
              DiskCache cache(dir_);
              cache.store("cuda", "ptx key", "ptx text");
              return true;
            }),
            0);
  DiskCache cache(dir_);
  EXPECT_EQ(cache.load("cuda", "ptx key"), "ptx text");
}

TEST_F(DiskCacheTest, TruncationAtEveryLengthIsACountedMiss) {
  DiskCache cache(dir_);
  const std::string artifact = "object code \x01\x02\x00\xff bytes";
  cache.store("cpu", kKey, artifact);
  const fs::path path = entry_path("cpu", kKey);
  const std::string whole = read_file(path);
  ASSERT_GT(whole.size(), artifact.size() + kKey.size());

  for (size_t len = 0; len < whole.size(); ++len) {
    SCOPED_TRACE(len);
    write_file(path, std::string_view(whole).substr(0, len));
    const uint64_t corrupt_before = cache.stats().corrupt;
    EXPECT_EQ(cache.load("cpu", kKey), std::nullopt);
    EXPECT_EQ(cache.stats().corrupt, corrupt_before + 1);
    EXPECT_FALSE(fs::exists(path)) << "a damaged entry is removed";
    cache.store("cpu", kKey, artifact);
    ASSERT_EQ(cache.load("cpu", kKey), artifact);
  }
  EXPECT_NE(cache.last_error().find("removed damaged cache entry"), std::string::npos);
  // Trailing bytes are damage too.
  write_file(path, whole + "x");
  EXPECT_EQ(cache.load("cpu", kKey), std::nullopt);
}

TEST_F(DiskCacheTest, FlippedByteAnywhereIsDetected) {
  DiskCache cache(dir_);
  const std::string artifact = make_artifact(300, 3);
  cache.store("cpu", kKey, artifact);
  const fs::path path = entry_path("cpu", kKey);
  const std::string whole = read_file(path);
  for (size_t pos = 0; pos < whole.size(); ++pos) {
    for (unsigned char mask : {0x01, 0x80, 0xff}) {
      SCOPED_TRACE(testing::Message() << "pos " << pos << " mask " << int{mask});
      std::string bad = whole;
      bad[pos] = static_cast<char>(bad[pos] ^ mask);
      write_file(path, bad);
      const uint64_t corrupt_before = cache.stats().corrupt;
      ASSERT_EQ(cache.load("cpu", kKey), std::nullopt);
      EXPECT_EQ(cache.stats().corrupt, corrupt_before + 1);
      EXPECT_FALSE(fs::exists(path));
    }
  }
  cache.store("cpu", kKey, artifact);
  EXPECT_EQ(cache.load("cpu", kKey), artifact);
}

TEST_F(DiskCacheTest, DifferentKeyInTheFileIsAMiss) {
  // What a hash collision looks like: a valid entry for another key under this key's name.
  DiskCache cache(dir_);
  cache.store("cpu", "key A", "artifact A");
  fs::copy_file(entry_path("cpu", "key A"), entry_path("cpu", "key B"));
  EXPECT_EQ(cache.load("cpu", "key B"), std::nullopt);
  EXPECT_EQ(cache.stats().corrupt, 1u);
  EXPECT_FALSE(fs::exists(entry_path("cpu", "key B")));
  EXPECT_EQ(cache.load("cpu", "key A"), "artifact A");
}

TEST_F(DiskCacheTest, GarbageNeverCrashes) {
  DiskCache cache(dir_);
  cache.store("cpu", kKey, "seed");  // creates the directory
  const fs::path path = entry_path("cpu", kKey);
  std::mt19937_64 rng(12345);
  const uint64_t interesting_lengths[] = {0,
                                          1,
                                          kKey.size(),
                                          kKey.size() + 1,
                                          kKey.size() - 1,
                                          1u << 31,
                                          std::numeric_limits<uint64_t>::max(),
                                          std::numeric_limits<uint64_t>::max() - 19,
                                          std::numeric_limits<int64_t>::max()};
  for (int round = 0; round < 3000; ++round) {
    std::string bytes = make_artifact(rng() % 400, static_cast<uint32_t>(rng()));
    if (round % 2 == 0) {
      // A plausible footer (cache_file.hpp), so that the lengths and the checksum and not the
      // magic are what is wrong.
      const auto length = [&] {
        return round % 4 == 0 ? rng() % 512
                              : interesting_lengths[rng() % std::size(interesting_lengths)];
      };
      uint64_t artifact_len = length(), key_len = length();
      if (round % 8 == 0) {  // the right key and lengths, then a garbage checksum
        artifact_len = bytes.size();
        key_len = kKey.size();
        bytes += kKey;
      }
      std::string footer;
      for (uint64_t v : {artifact_len, key_len, static_cast<uint64_t>(rng())})
        for (int i = 0; i < 8; ++i) footer.push_back(static_cast<char>(v >> (8 * i)));
      footer += std::string("\x02\x00\x00\x00", 4);
      bytes += footer + "TACKCCH2";
    }
    write_file(path, bytes);
    ASSERT_EQ(cache.load("cpu", kKey), std::nullopt) << "round " << round;
  }
  EXPECT_EQ(cache.stats().corrupt, 3000u);
}

TEST_F(DiskCacheTest, ConcurrentProcessesLeaveAValidEntry) {
  constexpr int kWriters = 8;
  constexpr int kReaders = 4;
  constexpr int kRounds = 50;
  const std::string shared_key = kKey + "shared";
  const std::string shared_artifact = make_artifact(256 * 1024, 7);

  std::vector<pid_t> children;
  for (int p = 0; p < kWriters + kReaders; ++p) {
    const pid_t pid = fork();
    if (pid == 0) {
      bool ok = true;
      DiskCache cache(dir_);
      if (p < kWriters) {
        const std::string own_key = kKey + "own " + std::to_string(p);
        const std::string own_artifact = make_artifact(4096 + p, 100 + p);
        for (int r = 0; r < kRounds; ++r) {
          auto before = cache.load("cpu", shared_key);
          ok = ok && (!before || *before == shared_artifact);
          cache.store("cpu", shared_key, shared_artifact);
          cache.store("cpu", own_key, own_artifact);
          // Someone may have replaced the entry since, but only with the same bytes.
          ok = ok && cache.load("cpu", shared_key) == shared_artifact;
          ok = ok && cache.load("cpu", own_key) == own_artifact;
        }
      } else {
        for (int r = 0; r < 5 * kRounds; ++r) {
          auto seen = cache.load("cpu", shared_key);
          ok = ok && (!seen || *seen == shared_artifact);
        }
      }
      // A reader never sees a half-written file, so nothing may have been counted damaged.
      const DiskCacheStats s = cache.stats();
      ok = ok && s.corrupt == 0 && s.write_failures == 0;
      _exit(ok ? 0 : 1);
    }
    ASSERT_GT(pid, 0);
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child " << pid;
  }

  DiskCache cache(dir_);
  EXPECT_EQ(cache.load("cpu", shared_key), shared_artifact);
  EXPECT_EQ(cache.list().size(), static_cast<size_t>(1 + kWriters));
  for (const auto& item : fs::directory_iterator(dir_)) {
    EXPECT_EQ(item.path().extension(), ".tck") << "left behind: " << item.path();
  }
}

TEST_F(DiskCacheTest, ConcurrentThreadsInOneProcess) {
  DiskCache cache(dir_);
  const std::string artifact = make_artifact(50000, 9);
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int r = 0; r < 100; ++r) {
        cache.store("cpu", kKey, artifact);
        if (cache.load("cpu", kKey) != artifact) bad.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(cache.stats().writes, 400u);
  EXPECT_EQ(cache.stats().corrupt, 0u);
}

TEST_F(DiskCacheTest, TackCacheZeroDisables) {
  ScopedEnv off("TACK_CACHE", "0");
  ScopedEnv where("TACK_CACHE_DIR", dir_.c_str());
  auto cache = DiskCache::from_environment();
  EXPECT_FALSE(cache->enabled());
  EXPECT_EQ(cache->disabled_reason(), "TACK_CACHE=0");
  EXPECT_EQ(cache->dir(), dir_);
  cache->store("cpu", kKey, "x");
  EXPECT_FALSE(fs::exists(dir_));
  EXPECT_EQ(cache->load("cpu", kKey), std::nullopt);
  const DiskCacheStats s = cache->stats();
  EXPECT_EQ(s.hits + s.misses + s.writes + s.corrupt + s.write_failures, 0u);

  // An entry written by an enabled cache is not used either.
  DiskCache enabled(dir_);
  enabled.store("cpu", kKey, "x");
  EXPECT_EQ(cache->load("cpu", kKey), std::nullopt);
}

TEST_F(DiskCacheTest, DirectoryFromTheEnvironment) {
  ScopedEnv on("TACK_CACHE", nullptr);
  {
    ScopedEnv where("TACK_CACHE_DIR", dir_.c_str());
    auto cache = DiskCache::from_environment();
    EXPECT_TRUE(cache->enabled());
    EXPECT_EQ(cache->dir(), dir_);
  }
  ScopedEnv no_dir("TACK_CACHE_DIR", nullptr);
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "/x/cache");
    EXPECT_EQ(DiskCache::from_environment()->dir(), fs::path("/x/cache/tack"));
  }
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "relative/cache");  // invalid by the XDG spec
    ScopedEnv home("HOME", "/home/someone");
    EXPECT_EQ(DiskCache::from_environment()->dir(), fs::path("/home/someone/.cache/tack"));
  }
  {
    ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
    ScopedEnv home("HOME", nullptr);
    auto cache = DiskCache::from_environment();
    EXPECT_FALSE(cache->enabled());
    EXPECT_NE(cache->disabled_reason(), "");
    EXPECT_EQ(cache->load("cpu", kKey), std::nullopt);
    cache->store("cpu", kKey, "x");  // does nothing, throws nothing
  }
}

TEST_F(DiskCacheTest, UncreatableDirectoryDisablesWithoutThrowing) {
  // We may run as root, which ignores permission bits; a directory under a file cannot exist.
  write_file(root_ / "plain_file", "not a directory");
  DiskCache cache(root_ / "plain_file" / "sub");
  EXPECT_EQ(cache.load("cpu", kKey), std::nullopt);
  EXPECT_NO_THROW(cache.store("cpu", kKey, "artifact"));
  EXPECT_FALSE(cache.enabled());
  EXPECT_NE(cache.disabled_reason().find("cannot create the cache directory"), std::string::npos)
      << cache.disabled_reason();
  EXPECT_EQ(cache.load("cpu", kKey), std::nullopt);
  EXPECT_EQ(cache.stats().writes, 0u);
  EXPECT_TRUE(cache.list().empty());
  EXPECT_EQ(cache.total_bytes(), 0u);
  EXPECT_EQ(cache.clear().entries, 0u);
}

TEST_F(DiskCacheTest, WriteFailureIsRecordedAndTheCacheCarriesOn) {
  DiskCache cache(dir_);
  cache.store("cpu", kKey, "one");
  // The directory vanishes and a file takes its place: no temporary file can be created.
  fs::remove_all(dir_);
  write_file(dir_, "in the way");
  EXPECT_NO_THROW(cache.store("cpu", kKey, "two"));
  EXPECT_EQ(cache.stats().write_failures, 1u);
  EXPECT_NE(cache.last_error().find("cannot write cache entry"), std::string::npos);
  EXPECT_EQ(cache.load("cpu", kKey), std::nullopt);
  // Once the path is usable again, stores work again.
  fs::remove(dir_);
  cache.store("cpu", kKey, "three");
  EXPECT_EQ(cache.load("cpu", kKey), "three");
}

TEST_F(DiskCacheTest, RemovedDirectoryIsRecreated) {
  DiskCache cache(dir_);
  cache.store("cpu", kKey, "one");
  fs::remove_all(dir_);
  EXPECT_EQ(cache.load("cpu", kKey), std::nullopt);
  cache.store("cpu", kKey, "two");
  EXPECT_EQ(cache.load("cpu", kKey), "two");
  EXPECT_EQ(cache.stats().write_failures, 0u);
}

TEST_F(DiskCacheTest, ListTotalBytesAndClear) {
  DiskCache cache(dir_);
  EXPECT_TRUE(cache.list().empty());
  EXPECT_EQ(cache.total_bytes(), 0u);
  EXPECT_EQ(cache.clear().entries, 0u);

  const time_t now = std::time(nullptr);
  cache.store("cpu", "first line cpu\nrest of the key", make_artifact(1000, 1));
  cache.store("cpu", "another cpu key", make_artifact(2000, 2));
  cache.store("cuda", "cuda key line\nmore\nmore", "ptx");
  write_file(dir_ / "cpu-junk.tck", "garbage, not an entry");
  write_file(dir_ / "README", "left alone");
  write_file(dir_ / ".cpu-x.tck.123.ab.0.tmp", "a store in progress in another process");

  const auto entries = cache.list();
  ASSERT_EQ(entries.size(), 3u) << "the junk .tck file is skipped";
  uint64_t listed_bytes = 0;
  std::set<std::string> summaries;
  for (const auto& e : entries) {
    EXPECT_EQ(e.bytes, fs::file_size(dir_ / e.file));
    EXPECT_EQ(e.file.rfind(e.backend + "-", 0), 0u) << e.file;
    EXPECT_NEAR(static_cast<double>(e.mtime), static_cast<double>(now), 60.0);
    listed_bytes += e.bytes;
    summaries.insert(e.backend + ":" + e.key_summary);
  }
  EXPECT_EQ(summaries, (std::set<std::string>{"cpu:first line cpu", "cpu:another cpu key",
                                              "cuda:cuda key line"}));
  const uint64_t junk_bytes = fs::file_size(dir_ / "cpu-junk.tck");
  EXPECT_EQ(cache.total_bytes(), listed_bytes + junk_bytes);
  EXPECT_EQ(cache.unusable_entries(), 1u);

  const CacheClearReport report = cache.clear();
  EXPECT_EQ(report.entries, 4u) << "three entries and the junk entry";
  EXPECT_EQ(report.bytes, listed_bytes + junk_bytes);
  EXPECT_EQ(report.leftovers, 0u);
  EXPECT_EQ(report.failures, 0u);
  EXPECT_TRUE(cache.list().empty());
  EXPECT_EQ(cache.total_bytes(), 0u);
  EXPECT_TRUE(fs::exists(dir_ / "README"));
  EXPECT_TRUE(fs::exists(dir_ / ".cpu-x.tck.123.ab.0.tmp")) << "a young temporary file is kept";
  EXPECT_EQ(cache.load("cpu", "another cpu key"), std::nullopt);

  // A temporary file left by a writer that died long ago is cleared.
  const fs::path stale = dir_ / ".cpu-x.tck.123.ab.0.tmp";
  fs::last_write_time(stale, fs::file_time_type::clock::now() - std::chrono::hours(2));
  const CacheClearReport again = cache.clear();
  EXPECT_EQ(again.entries, 0u);
  EXPECT_EQ(again.leftovers, 1u);
  EXPECT_FALSE(fs::exists(stale));
}

TEST(DiskCacheGlobalTest, GlobalIsOneInstance) {
  DiskCache& cache = DiskCache::global();
  EXPECT_EQ(&cache, &DiskCache::global());
}

}  // namespace
}  // namespace tack
