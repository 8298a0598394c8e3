// The HIP, Level Zero and Metal backends on a machine without their hardware: each loader fails
// cleanly (the backend is unavailable with the reason, and nothing else breaks); the Level Zero
// f64 rule; and each backend's cache artifact (a gfx90a code object from hipRTC, a pvc native
// binary and its SPIR-V from libocloc, MSL source) made by the backend's own compile path,
// stored in the disk cache, found again by a second process and recompiled when corrupt.
// A test whose compiler is missing is skipped with the reason.
#include <level_zero/ze_api.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "backends/hip/hip_api.hpp"
#include "backends/hip/hip_backend.hpp"
#include "backends/level_zero/level_zero_backend.hpp"
#include "backends/level_zero/ze_api.hpp"
#include "backends/metal/metal_source.hpp"
#include "ir/printer.hpp"
#include "runtime/disk_cache.hpp"
#include "test_support.hpp"

extern char** environ;

namespace tack {
namespace {

namespace fs = std::filesystem;

// Runs this binary's test `filter` in a child process with `extra_env` ("NAME=value") replacing
// those variables; true when it passed.
bool run_child(const std::string& filter, const std::vector<std::string>& extra_env) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    bool replaced = kv.rfind("TACK_TEST_DEVICE=", 0) == 0;
    for (const std::string& x : extra_env)
      replaced |= kv.compare(0, x.find('=') + 1, x, 0, x.find('=') + 1) == 0;
    if (!replaced) env.push_back(kv);
  }
  env.insert(env.end(), extra_env.begin(), extra_env.end());
  std::vector<char*> envp;
  for (auto& s : env) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string exe = fs::read_symlink("/proc/self/exe").string();
  std::string arg = "--gtest_filter=" + filter;
  char* argv[] = {exe.data(), arg.data(), nullptr};
  pid_t pid;
  if (posix_spawn(&pid, exe.c_str(), nullptr, nullptr, argv, envp.data()) != 0) return false;
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::string reason_of(const std::string& backend) {
  for (const BackendStatus& s : backend_status())
    if (s.name == backend) return s.available ? "" : s.reason;
  return "not listed";
}

// Asking for an unavailable backend raises its reason; no device of it is listed; the CPU runs.
void expect_unavailable_and_cpu_fine(const std::string& backend, const std::string& reason) {
  try {
    device(backend);
    ADD_FAILURE() << "device('" << backend << "') worked";
  } catch (const DeviceError& e) {
    EXPECT_EQ(std::string(e.what()), reason);
  }
  for (const Device& d : devices()) EXPECT_NE(d.type(), backend);
  Module m = Module::from_source(
      "import tack\n@tack.kernel\ndef add(x, y, out):\n    for i in range(x.shape[0]):\n"
      "        out[i] = x[i] + y[i]\n",
      "add.py");
  Array x = arange(4), r = empty({4});
  m.kernel("add")(x, x, r);
  EXPECT_EQ(r.to_vector<float>(), (std::vector<float>{0, 2, 4, 6}));
}

// ---- the loaders fail cleanly ----

TEST(HipLevelZeroChild, MissingHipLibrary) {
  if (!std::getenv("TACK_TEST_GPU_CHILD")) GTEST_SKIP() << "runs as a child process only";
  std::string reason = reason_of("hip");
  EXPECT_NE(reason.find("/nonexistent/libamdhip64.so"), std::string::npos) << reason;
  EXPECT_NE(reason.find("cannot be loaded"), std::string::npos) << reason;
  EXPECT_NE(reason.find("libamdhip64-dev"), std::string::npos) << reason;
  expect_unavailable_and_cpu_fine("hip", reason);
}

TEST(HipLevelZeroChild, MissingLevelZeroLoader) {
  if (!std::getenv("TACK_TEST_GPU_CHILD")) GTEST_SKIP() << "runs as a child process only";
  std::string reason = reason_of("level_zero");
  EXPECT_NE(reason.find("/nonexistent/libze_loader.so.1"), std::string::npos) << reason;
  EXPECT_NE(reason.find("libze1"), std::string::npos) << reason;
  expect_unavailable_and_cpu_fine("level_zero", reason);
}

TEST(HipLevelZero, MissingLibrariesMakeTheBackendsUnavailable) {
  EXPECT_TRUE(run_child("HipLevelZeroChild.MissingHipLibrary",
                        {"TACK_TEST_GPU_CHILD=1", "TACK_HIP_LIBRARY=/nonexistent/libamdhip64.so"}));
  EXPECT_TRUE(run_child(
      "HipLevelZeroChild.MissingLevelZeroLoader",
      {"TACK_TEST_GPU_CHILD=1", "TACK_LEVEL_ZERO_LIBRARY=/nonexistent/libze_loader.so.1"}));
}

// On this machine as it is: with no AMD or Intel GPU, each backend is unavailable and says why:
// its library is missing, or it loaded and found no device (hipInit / zeInit failed).
TEST(HipLevelZero, UnavailableWithoutTheirGpuAndNothingElseBreaks) {
  for (const char* backend : {"hip", "level_zero"}) {
    SCOPED_TRACE(backend);
    std::string reason = reason_of(backend);
    if (reason.empty()) {
      std::printf("[ note ] %s is available here: %s\n", backend,
                  device(backend).backend().label.c_str());
      continue;
    }
    bool explained = reason.find("cannot be loaded") != std::string::npos ||
                     reason.find("hipInit failed") != std::string::npos ||
                     reason.find("zeInit failed") != std::string::npos ||
                     reason.find("no device") != std::string::npos ||
                     reason.find("no GPU device") != std::string::npos;
    EXPECT_TRUE(explained) << reason;
    std::printf("[ note ] %s: %s\n", backend, reason.c_str());
    expect_unavailable_and_cpu_fine(backend, reason);
  }
}

TEST(HipLevelZero, HipFindsTheArchitectureInAnyPropertiesLayout) {
  std::vector<char> props(2048, '\0');
  std::strcpy(props.data(), "AMD Instinct gfx90a MI210");  // the name field is skipped
  std::strcpy(props.data() + 300, "abc");
  std::strcpy(props.data() + 1160, "gfx90a:sramecc+:xnack-");
  EXPECT_EQ(hip::find_arch_name(props.data(), props.size()), "gfx90a:sramecc+:xnack-");
  std::vector<char> none(2048, '\0');
  std::strcpy(none.data() + 400, "gfxbad");  // not a gfx number
  EXPECT_EQ(hip::find_arch_name(none.data(), none.size()), "");
}

// ---- the Level Zero f64 rule ----

TEST(HipLevelZero, LevelZeroDecidesF64FromModuleProperties) {
  auto all_but_f64 = [](const BackendInfo& i) {
    for (DType t : kAllDTypes)
      if (t != DType::F64 && !i.supported_dtypes.count(t)) return false;
    return true;
  };
  BackendInfo fp64 = level_zero::make_info({ZE_DEVICE_MODULE_FLAG_FP64}, 1024);
  EXPECT_TRUE(fp64.supports_f64());
  EXPECT_TRUE(fp64.supported_dtypes.count(DType::F64));
  EXPECT_TRUE(all_but_f64(fp64));
  EXPECT_EQ(fp64.name, "level_zero");
  EXPECT_TRUE(fp64.asynchronous);
  EXPECT_TRUE(fp64.supports_workgroups);
  EXPECT_EQ(fp64.max_workgroup_size, 1024);
  EXPECT_EQ(fp64.device_memory_spaces, std::vector<std::string>{"level_zero"});
  // Textures in hardware only where every device has images and samplers.
  EXPECT_FALSE(fp64.supports_hardware_textures);
  EXPECT_TRUE(level_zero::make_info({0}, 1024, true).supports_hardware_textures);

  BackendInfo with_other_flags = level_zero::make_info(
      {ZE_DEVICE_MODULE_FLAG_FP16 | ZE_DEVICE_MODULE_FLAG_FP64 | ZE_DEVICE_MODULE_FLAG_DP4A}, 512);
  EXPECT_TRUE(with_other_flags.supports_f64());

  for (const std::vector<uint32_t>& flags :
       {std::vector<uint32_t>{0}, std::vector<uint32_t>{ZE_DEVICE_MODULE_FLAG_FP16},
        std::vector<uint32_t>{ZE_DEVICE_MODULE_FLAG_FP64, ZE_DEVICE_MODULE_FLAG_DP4A},
        std::vector<uint32_t>{}}) {
    BackendInfo i = level_zero::make_info(flags, 256);
    EXPECT_FALSE(i.supports_f64());
    EXPECT_FALSE(i.supported_dtypes.count(DType::F64));
    EXPECT_TRUE(all_but_f64(i));
  }
}

// ---- cache artifacts ----

const char* const kSaxpy =
    "import tack\n@tack.kernel\ndef saxpy(a, x, y):\n    for i in range(x.shape[0]):\n"
    "        y[i] = a * x[i] + y[i]\n";

struct ArtifactCase {
  std::string backend;  // the disk cache's name for it
  std::string target;   // what the backend compiles for
};

// The backend's compile path for `c`; empty (and `why` set) when its compiler is missing.
std::string compile_for(const ArtifactCase& c, const ir::Kernel& k,
                        const detail::CompileOptions& o) {
  if (c.backend == "hip") return hip::compile_artifact(k, o, c.target);
  if (c.backend == "level_zero") return level_zero::compile_artifact(k, o, c.target);
  return metal::compile_artifact(k, o);
}

std::string missing_compiler(const std::string& backend) {
  if (backend == "hip") return hip::hip_api().rtc_missing;
  if (backend == "level_zero") return level_zero::ocloc().missing;
  return "";
}

// Checks what an artifact must hold; "" when it is right.
std::string check_artifact(const std::string& backend, const std::string& a) {
  if (backend == "hip") {
    if (!hip::is_code_object(a)) return "not an ELF code object";
    // ELF64 e_machine (offset 18) is EM_AMDGPU (224); e_flags (offset 48) hold the processor,
    // EF_AMDGPU_MACH_AMDGCN_GFX90A (0x3f) in the low byte.
    uint16_t machine = 0;
    uint32_t flags = 0;
    std::memcpy(&machine, a.data() + 18, 2);
    std::memcpy(&flags, a.data() + 48, 4);
    if (machine != 224) return fmt::format("e_machine {} is not EM_AMDGPU", machine);
    return (flags & 0xff) == 0x3f ? "" : fmt::format("e_flags 0x{:x} do not name gfx90a", flags);
  }
  if (backend == "level_zero") {
    std::string native, spirv;
    if (!level_zero::unpack_artifact(a, native, spirv)) return "not a Level Zero artifact";
    if (native.size() < 4 || native.compare(0, 4,
                                            "\x7f"
                                            "ELF") != 0)
      return "the native binary is not an ELF file";
    uint32_t magic = 0;
    if (spirv.size() >= 4) std::memcpy(&magic, spirv.data(), 4);
    if (magic != 0x07230203u) return "no SPIR-V magic";
    // spirv-val (spirv-tools), where installed, checks the SPIR-V fallback is valid.
    if (access("/usr/bin/spirv-val", X_OK) == 0) {
      fs::path file = fs::temp_directory_path() / fmt::format("tack-l0-{}.spv", getpid());
      std::ofstream(file, std::ios::binary) << spirv;
      int rc = std::system(fmt::format("/usr/bin/spirv-val '{}'", file.string()).c_str());
      fs::remove(file);
      if (rc != 0) return "spirv-val rejected the SPIR-V";
    }
    return "";
  }
  return metal::is_msl_source(a) ? "" : "not MSL source";
}

// In a child process: the artifact for TACK_TEST_ARTIFACT ("backend target") from the disk cache
// in TACK_CACHE_DIR, or compiled by the backend and stored, as the runtime does. Writes "hit" or
// "compiled" and the cache's corrupt count to TACK_TEST_CHILD_OUT.
TEST(GpuArtifactChild, LoadOrCompile) {
  const char* spec = std::getenv("TACK_TEST_ARTIFACT");
  const char* out = std::getenv("TACK_TEST_CHILD_OUT");
  if (!spec || !out) GTEST_SKIP() << "runs as a child process only";
  std::istringstream in(spec);
  ArtifactCase c;
  in >> c.backend >> c.target;
  ir::Kernel k = test::specialize(kSaxpy, "f32,f32[],f32[]", "saxpy");
  detail::CompileOptions o;
  o.symbol_prefix = "tack_saxpy_test";
  std::string key = fmt::format("{}; {}; {}", c.backend, c.target, ir::print(k));
  DiskCache& disk = DiskCache::global();
  std::string outcome;
  if (auto cached = disk.load(c.backend, key)) {
    ASSERT_EQ(check_artifact(c.backend, *cached), "");
    outcome = "hit";
  } else {
    std::string a = compile_for(c, k, o);
    ASSERT_EQ(check_artifact(c.backend, a), "");
    disk.store(c.backend, key, a);
    outcome = "compiled";
  }
  std::ofstream(out) << outcome << " " << disk.stats().corrupt << "\n";
}

class GpuArtifact : public testing::TestWithParam<ArtifactCase> {
 protected:
  void SetUp() override {
    if (std::string why = missing_compiler(GetParam().backend); !why.empty()) GTEST_SKIP() << why;
    dir_ = fs::temp_directory_path() /
           fmt::format("tack-gpu-artifact-{}-{}", GetParam().backend, getpid());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs the child; its outcome and corrupt count.
  std::pair<std::string, int> child() {
    std::string out =
        (fs::temp_directory_path() / fmt::format("tack-gpu-artifact-out-{}", getpid())).string();
    fs::remove(out);
    EXPECT_TRUE(run_child(
        "GpuArtifactChild.LoadOrCompile",
        {"TACK_CACHE_DIR=" + dir_.string(), "TACK_CACHE=1", "TACK_TEST_CHILD_OUT=" + out,
         fmt::format("TACK_TEST_ARTIFACT={} {}", GetParam().backend, GetParam().target)}));
    std::pair<std::string, int> r{"", -1};
    std::ifstream(out) >> r.first >> r.second;
    fs::remove(out);
    return r;
  }

  fs::path entry() {
    std::vector<fs::path> files;
    for (const auto& f : fs::directory_iterator(dir_))
      if (f.path().extension() == ".tck") files.push_back(f.path());
    EXPECT_EQ(files.size(), 1u);
    return files.empty() ? fs::path() : files[0];
  }

  fs::path dir_;
};

TEST_P(GpuArtifact, StoredFoundByASecondProcessAndRecompiledWhenCorrupt) {
  EXPECT_EQ(child(), (std::pair<std::string, int>{"compiled", 0}));
  fs::path file = entry();
  ASSERT_FALSE(file.empty());
  EXPECT_EQ(file.filename().string().rfind(GetParam().backend + "-", 0), 0u) << file;
  EXPECT_EQ(child(), (std::pair<std::string, int>{"hit", 0}));

  // A flipped byte in the middle of the artifact fails the checksum: recompiled and replaced.
  auto size = fs::file_size(file);
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(size / 2));
    char b = 0;
    f.read(&b, 1);
    b = static_cast<char>(b ^ 0x5a);
    f.seekp(static_cast<std::streamoff>(size / 2));
    f.write(&b, 1);
  }
  EXPECT_EQ(child(), (std::pair<std::string, int>{"compiled", 1}));
  EXPECT_EQ(child(), (std::pair<std::string, int>{"hit", 0}));

  // Truncated: the same.
  fs::resize_file(entry(), size / 3);
  EXPECT_EQ(child(), (std::pair<std::string, int>{"compiled", 1}));
  EXPECT_EQ(child(), (std::pair<std::string, int>{"hit", 0}));
}

INSTANTIATE_TEST_SUITE_P(Backends, GpuArtifact,
                         testing::Values(ArtifactCase{"hip", "gfx90a"},
                                         ArtifactCase{"level_zero", "pvc"},
                                         ArtifactCase{"metal", "msl"}),
                         [](const auto& info) { return info.param.backend; });

// A kernel with a `return` value: each artifact holds both entries the backend's
// load() looks up, `<entry>` and `<entry>_result` (their names are in the code objects' symbol
// tables and in the MSL text).
TEST(HipLevelZero, ArtifactsHoldTheMainAndResultEntries) {
  const char* src =
      "import tack\n@tack.kernel\ndef ends(x, y) -> tack.f32:\n    for i in range(x.shape[0]):\n"
      "        y[i] = x[i] * 2.0\n    return x[0] + x[x.shape[0] - 1]\n";
  auto m = test::resolve(src);
  ir::Kernel k = sema::specialize(*m, "ends", sema::parse_arg_types("f32[],f32[]"));
  ASSERT_TRUE(k.result);
  detail::CompileOptions o;
  o.symbol_prefix = "tack_ends_entry";
  for (const ArtifactCase& c : {ArtifactCase{"hip", "gfx90a"}, ArtifactCase{"level_zero", "pvc"},
                                ArtifactCase{"metal", "msl"}}) {
    SCOPED_TRACE(c.backend);
    if (std::string why = missing_compiler(c.backend); !why.empty()) {
      std::printf("[ skip ] %s: %s\n", c.backend.c_str(), why.c_str());
      continue;
    }
    std::string a = compile_for(c, k, o);
    EXPECT_EQ(check_artifact(c.backend, a), "");
    // The main entry's name ends there: a NUL in a symbol table, a parenthesis in MSL.
    char end = c.backend == "metal" ? '(' : '\0';
    EXPECT_NE(a.find(std::string("tack_ends_entry") + end), std::string::npos);
    EXPECT_NE(a.find("tack_ends_entry_result"), std::string::npos);
  }
}

// HIP lives in a link namespace of its own, with a C library of its own whose `environ` was the
// process's array when the namespace was made. A setenv() afterwards frees that array; hipRTC's
// first compile loads comgr's LLVM, whose initializer calls getenv() there (a crash in
// tack_tests_on_opencl, after the MPI tests' setenv calls). Each compile shares the current one.
TEST(HipLevelZero, HipSeesTheEnvironmentAsItIsAtEachCompile) {
  const hip::HipApi& api = hip::hip_api();
  if (!api.rtc_missing.empty()) GTEST_SKIP() << api.rtc_missing;
  ASSERT_NE(api.environment, nullptr);
  ASSERT_NE(api.environment, &environ);  // HIP's own C library, not the process's
  for (int n = 0; n < 64; ++n)           // enough new variables to move the process's array
    setenv(fmt::format("TACK_TEST_HIP_ENV_{}", n).c_str(), "1", 1);
  ir::Kernel k = test::specialize(kSaxpy, "f32,f32[],f32[]", "saxpy");
  detail::CompileOptions o;
  o.symbol_prefix = "tack_hip_environment";
  EXPECT_TRUE(hip::is_code_object(hip::compile_artifact(k, o, "gfx90a")));
  EXPECT_EQ(*api.environment, environ);
  for (int n = 0; n < 64; ++n) unsetenv(fmt::format("TACK_TEST_HIP_ENV_{}", n).c_str());
}

TEST(HipLevelZero, MetalRefusesF64BeforeCompiling) {
  ir::Kernel k = test::specialize(kSaxpy, "f64,f64[],f64[]", "saxpy");
  detail::CompileOptions o;
  o.symbol_prefix = "tack_saxpy_f64";
  try {
    metal::compile_artifact(k, o);
    ADD_FAILURE() << "Metal compiled an f64 kernel";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("saxpy"), std::string::npos) << what;
    EXPECT_NE(what.find("Metal"), std::string::npos) << what;
    EXPECT_NE(what.find("f64"), std::string::npos) << what;
  }
}

TEST(HipLevelZero, CompileErrorsNameTheKernel) {
  // hipRTC refusing source reaches the user as DeviceError with the log.
  if (std::string why = missing_compiler("hip"); !why.empty()) GTEST_SKIP() << why;
  try {
    hip::compile_code_object(hip::hip_api(), "this is not HIP C", "gfx90a", "broken");
    ADD_FAILURE() << "hipRTC accepted nonsense";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("kernel 'broken'"), std::string::npos) << e.what();
  }
  if (std::string why = missing_compiler("level_zero"); !why.empty()) GTEST_SKIP() << why;
  try {
    level_zero::ocloc_compile("this is not OpenCL C", "pvc", level_zero::build_options(), "broken");
    ADD_FAILURE() << "ocloc accepted nonsense";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("kernel 'broken'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tack
