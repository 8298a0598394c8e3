// The disk cache across processes: a second process loads instead of compiling, a corrupt or
// truncated entry is recompiled, concurrent first calls leave one valid entry.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <numeric>

#include "test_support.hpp"

extern char** environ;

namespace tack {
namespace {

namespace fs = std::filesystem;

const char* const kKernels =
    "import tack\n@tack.kernel\ndef triple_add(x, y, out):\n    for i in range(x.shape[0]):\n"
    "        out[i] = 3 * x[i] + y[i]\n";

// Run in a child process (see run_child): calls the kernel, checks the answer, and writes this
// process's cache counters to the file named by TACK_TEST_CHILD_OUT.
TEST(CacheChild, RunKernel) {
  const char* out = std::getenv("TACK_TEST_CHILD_OUT");
  if (!out) GTEST_SKIP() << "runs only as a child of the CacheProcess tests";
  Module m = Module::from_source(kKernels, "child.py");
  Array x = arange(1000), y = full({1000}, 0.5f), r = empty({1000});
  m.kernel("triple_add")(x, y, r);
  auto v = r.to_vector<float>();
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(v[i], 3.0f * i + 0.5f);
  CacheStats s = cache_stats();
  std::ofstream(out) << s.compiles << " " << s.disk_hits << " " << s.disk_corrupt << "\n";
}

struct ChildStats {
  int compiles = -1, disk_hits = -1, disk_corrupt = -1;
};

class CacheProcess : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tack-cache-test-" + std::to_string(getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  pid_t spawn_child(const std::string& out_file) {
    std::vector<std::string> env_storage;
    for (char** e = environ; *e; ++e) {
      std::string kv = *e;
      if (kv.rfind("TACK_CACHE_DIR=", 0) == 0 || kv.rfind("TACK_TEST_CHILD_OUT=", 0) == 0 ||
          kv.rfind("TACK_CACHE=", 0) == 0)
        continue;
      env_storage.push_back(kv);
    }
    env_storage.push_back("TACK_CACHE_DIR=" + dir_.string());
    env_storage.push_back("TACK_TEST_CHILD_OUT=" + out_file);
    std::vector<char*> envp;
    for (auto& s : env_storage) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::string exe = fs::read_symlink("/proc/self/exe").string();
    std::string filter = "--gtest_filter=CacheChild.RunKernel";
    char* argv[] = {exe.data(), filter.data(), nullptr};
    pid_t pid;
    EXPECT_EQ(posix_spawn(&pid, exe.c_str(), nullptr, nullptr, argv, envp.data()), 0);
    return pid;
  }

  ChildStats wait_child(pid_t pid, const std::string& out_file) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child failed";
    ChildStats s;
    std::ifstream(out_file) >> s.compiles >> s.disk_hits >> s.disk_corrupt;
    return s;
  }

  ChildStats run_child() {
    std::string out =
        (dir_.parent_path() / ("child-" + std::to_string(getpid()) + ".txt")).string();
    ChildStats s = wait_child(spawn_child(out), out);
    fs::remove(out);
    return s;
  }

  std::vector<fs::path> entries() {
    std::vector<fs::path> out;
    if (fs::exists(dir_))
      for (const auto& e : fs::directory_iterator(dir_))
        if (e.path().extension() == ".tck") out.push_back(e.path());
    return out;
  }

  fs::path dir_;
};

TEST_F(CacheProcess, SecondProcessLoadsInsteadOfCompiling) {
  ChildStats first = run_child();
  EXPECT_EQ(first.compiles, 1);
  EXPECT_EQ(first.disk_hits, 0);
  ASSERT_EQ(entries().size(), 1u);
  ChildStats second = run_child();
  EXPECT_EQ(second.compiles, 0);
  EXPECT_EQ(second.disk_hits, 1);
}

TEST_F(CacheProcess, TruncatedEntryIsRecompiledAndReplaced) {
  run_child();
  auto e = entries();
  ASSERT_EQ(e.size(), 1u);
  fs::resize_file(e[0], fs::file_size(e[0]) / 2);
  ChildStats s = run_child();
  EXPECT_EQ(s.compiles, 1);
  EXPECT_EQ(s.disk_hits, 0);
  EXPECT_GE(s.disk_corrupt, 1);
  ChildStats again = run_child();  // the replacement is good
  EXPECT_EQ(again.compiles, 0);
  EXPECT_EQ(again.disk_hits, 1);
}

TEST_F(CacheProcess, CorruptObjectIsRecompiled) {
  run_child();
  auto e = entries();
  ASSERT_EQ(e.size(), 1u);
  {
    // Flip bytes in the middle of the artifact: the checksum catches it.
    std::fstream f(e[0], std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(e[0]) - 64));
    f.write("\xde\xad\xbe\xef", 4);
  }
  ChildStats s = run_child();
  EXPECT_EQ(s.compiles, 1);
  EXPECT_GE(s.disk_corrupt, 1);
}

TEST_F(CacheProcess, ConcurrentFirstCallsLeaveOneValidEntry) {
  std::vector<std::pair<pid_t, std::string>> kids;
  for (int i = 0; i < 4; ++i) {
    std::string out = (dir_.parent_path() /
                       ("child-" + std::to_string(getpid()) + "-" + std::to_string(i) + ".txt"))
                          .string();
    kids.emplace_back(spawn_child(out), out);
  }
  for (auto& [pid, out] : kids) {
    ChildStats s = wait_child(pid, out);
    EXPECT_EQ(s.compiles + s.disk_hits, 1);
    fs::remove(out);
  }
  EXPECT_EQ(entries().size(), 1u);
  ChildStats after = run_child();
  EXPECT_EQ(after.compiles, 0);
  EXPECT_EQ(after.disk_hits, 1);
}

}  // namespace
}  // namespace tack
