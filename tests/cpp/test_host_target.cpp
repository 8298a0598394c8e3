// The CPU's description in the cache key (backends/cpu/host_target.hpp) is LLVM's own answer,
// known in a later process without loading LLVM. This test links LLVM (libLLVM.so) to ask it.
#include <gtest/gtest.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/SubtargetFeature.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "backends/cpu/cpu_compiler.hpp"
#include "backends/cpu/host_target.hpp"
#include "runtime/disk_cache.hpp"
#include "tack/tack.hpp"

extern char** environ;

namespace tack {
namespace {

namespace fs = std::filesystem;

cpu::HostTarget llvm_answer() {
  cpu::HostTarget t;
  t.triple = llvm::sys::getProcessTriple();
  t.cpu = llvm::sys::getHostCPUName().str();
  llvm::SubtargetFeatures features;
  for (const auto& [name, on] : llvm::sys::getHostCPUFeatures()) features.AddFeature(name, on);
  t.features = features.getString();
  return t;
}

bool maps_compiler() {
  std::ifstream in("/proc/self/maps");
  const std::string maps((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return maps.find(cpu::kCompilerLibrary) != std::string::npos;
}

// Run as a child of the tests below: writes the host target this new process finds, and whether it
// loaded the compiler library to find it.
TEST(HostTargetChild, Report) {
  const char* out = std::getenv("TACK_TEST_CHILD_OUT");
  if (!out) GTEST_SKIP() << "runs only as a child of the HostTarget tests";
  const cpu::HostTarget& t = cpu::host_target();
  std::ofstream(out) << t.triple << "\n" << t.cpu << "\n" << t.features << "\n" << maps_compiler();
}

class HostTarget : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tack-host-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The child's host target, and whether it loaded the compiler library.
  std::pair<cpu::HostTarget, bool> run_child() {
    const std::string out = (dir_.parent_path() / ("host-" + std::to_string(::getpid()))).string();
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e)
      if (std::string(*e).rfind("TACK_CACHE", 0) != 0) env.emplace_back(*e);
    env.push_back("TACK_CACHE_DIR=" + dir_.string());
    env.push_back("TACK_TEST_CHILD_OUT=" + out);
    std::vector<char*> envp;
    for (auto& s : env) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::string exe = fs::read_symlink("/proc/self/exe").string();
    std::string filter = "--gtest_filter=HostTargetChild.Report";
    char* argv[] = {exe.data(), filter.data(), nullptr};
    pid_t pid;
    EXPECT_EQ(::posix_spawn(&pid, exe.c_str(), nullptr, nullptr, argv, envp.data()), 0);
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    std::ifstream in(out);
    cpu::HostTarget t;
    int mapped = -1;
    std::getline(in, t.triple);
    std::getline(in, t.cpu);
    std::getline(in, t.features);
    in >> mapped;
    fs::remove(out);
    return {t, mapped == 1};
  }

  fs::path dir_;
};

void expect_equal(const cpu::HostTarget& got, const cpu::HostTarget& want) {
  EXPECT_EQ(got.triple, want.triple);
  EXPECT_EQ(got.cpu, want.cpu);
  EXPECT_EQ(got.features, want.features);
}

TEST_F(HostTarget, TheFirstProcessAsksLlvmAndALaterOneReadsItsAnswerWithoutLoadingIt) {
  auto [first, first_loaded] = run_child();
  expect_equal(first, llvm_answer());
  EXPECT_TRUE(first_loaded) << "the first process had no record to read";
  auto [second, second_loaded] = run_child();
  expect_equal(second, llvm_answer());
  EXPECT_FALSE(second_loaded) << "the record of LLVM's answer was not used";
}

TEST_F(HostTarget, ADamagedRecordIsAskedAgainAndReplaced) {
  const std::string key = cpu::host_record_key(cpu::cpu_signature());
  if (cpu::cpu_signature().empty()) GTEST_SKIP() << "no CPU signature on this machine";
  for (const char* damaged : {"", "x86_64-pc-linux-gnu", "a\n\nb"}) {
    SCOPED_TRACE(damaged);
    DiskCache(dir_).store(cpu::kHostRecordBackend, key, damaged);
    auto [t, loaded] = run_child();
    expect_equal(t, llvm_answer());
    EXPECT_TRUE(loaded);
    auto [again, loaded_again] = run_child();
    expect_equal(again, llvm_answer());
    EXPECT_FALSE(loaded_again) << "the damaged record was not replaced";
  }
}

// The signature from glibc's record of the cpuid leaves it read is what the cpuid instruction says.
TEST(CpuSignature, FromTheCLibraryEqualsTheInstructions) {
  const std::string from_glibc = cpu::cpu_signature(true);
#if defined(__x86_64__) && defined(__linux__)
  EXPECT_FALSE(from_glibc.empty());
#endif
  EXPECT_EQ(from_glibc, cpu::cpu_signature(false));
  EXPECT_EQ(from_glibc, cpu::cpu_signature(true)) << "not stable";
}

// The compiler library's LLVM is its own, hidden: it compiles in a process where another LLVM
// (this test's libLLVM.so, as PoCL's on OpenCL) is loaded first.
TEST(CompilerLibrary, CompilesBesideAnotherLlvm) {
  ASSERT_FALSE(llvm_answer().cpu.empty());
  ::setenv("TACK_CACHE", "0", 1);
  Module m = Module::from_source(
      "import tack\nimport math\n@tack.kernel\ndef scale(x, out):\n"
      "    for i in range(x.shape[0]):\n"
      "        out[i] = math.sqrt(x[i]) * math.exp(x[i] - x[i]) * 2.0\n",
      "beside.py");
  Array x = full({100}, 4.0), out = empty({100});
  m.kernel("scale")(x, out);
  for (float v : out.to_vector<float>()) ASSERT_EQ(v, 4.0f);
  EXPECT_TRUE(maps_compiler());
}

}  // namespace
}  // namespace tack
