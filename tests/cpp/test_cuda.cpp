// The CUDA backend. Here, without a GPU: the driver failing to load makes the backend unavailable
// with the reason and breaks nothing else, and the PTX that NVRTC makes for a kernel is stored in
// the disk cache, found by a second process and recompiled when corrupt. With a GPU (and the
// driver): the example kernels bit for bit against the CPU, errors at synchronization, return
// values, memory spaces, array_from_ptr and DLPack. Each test skips, saying why, where what it
// needs is missing; the other suites run on CUDA as `tack_tests_on_cuda`.
#include <dlpack/dlpack.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "backends/cuda/cuda_backend.hpp"
#include "reference.hpp"
#include "runtime/disk_cache.hpp"
#include "runtime/internals.hpp"
#include "tack/dlpack.hpp"
#include "test_support.hpp"

extern char** environ;

namespace tack {
namespace {

namespace fs = std::filesystem;

// Why CUDA cannot run here, or "".
std::string cuda_missing() {
  for (const BackendStatus& s : backend_status())
    if (s.name == "cuda") return s.available ? "" : s.reason;
  return "cuda is not a known backend";
}

#define REQUIRE_NVRTC()                                                             \
  do {                                                                              \
    if (std::string why = cuda::nvrtc_missing(); !why.empty()) GTEST_SKIP() << why; \
  } while (0)

// Runs this test binary again with `filter` and extra environment variables; true when the
// child passed.
bool run_child(const std::string& filter, const std::vector<std::string>& extra_env) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    bool replaced = kv.rfind("TACK_TEST_DEVICE=", 0) == 0;  // the children choose their devices
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

Module examples() {
  return Module::from_file(std::string(TACK_TEST_KERNELS_DIR) + "/../../examples/kernels.py");
}

// ---- availability ----

TEST(CudaChild, MissingDriverMakesTheBackendUnavailable) {
  if (!std::getenv("TACK_TEST_CUDA_CHILD")) GTEST_SKIP() << "runs as a child process only";
  std::string reason = cuda_missing();
  EXPECT_NE(reason.find("/nonexistent/libcuda.so.1"), std::string::npos) << reason;
  EXPECT_NE(reason.find("cannot be loaded"), std::string::npos) << reason;
  EXPECT_NE(reason.find("NVIDIA"), std::string::npos) << reason;
  try {
    device("cuda:1");
    ADD_FAILURE() << "device('cuda:1') worked without a driver";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("libcuda.so.1"), std::string::npos) << e.what();
  }
  for (const Device& d : devices()) EXPECT_NE(d.type(), "cuda");
  // The CPU is unaffected, and host memory is still host memory.
  Array x = arange(4);
  examples().kernel("vector_add")(x, x, x);
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{0, 2, 4, 6}));
  EXPECT_EQ(memory_space(x.data()), "cpu");
}

TEST(Cuda, MissingDriverIsReportedNotFatal) {
  EXPECT_TRUE(run_child("CudaChild.MissingDriverMakesTheBackendUnavailable",
                        {"TACK_CUDA_LIBRARY=/nonexistent/libcuda.so.1", "TACK_TEST_CUDA_CHILD=1"}));
}

// Without a GPU the status names the driver library; with one the backend declares what it can do.
TEST(Cuda, StatusSaysWhyOrDeclaresCapabilities) {
  if (std::string why = cuda_missing(); !why.empty()) {
    EXPECT_NE(why.find("libcuda.so.1"), std::string::npos) << why;
    EXPECT_THROW(device("cuda"), DeviceError);
    GTEST_SKIP() << "no CUDA here (checked the reason): " << why;
  }
  Device d = device("cuda");
  EXPECT_EQ(d.name(), "cuda:0");
  const BackendInfo& b = d.backend();
  EXPECT_EQ(b.name, "cuda");
  EXPECT_EQ(b.label, "CUDA");
  EXPECT_TRUE(b.asynchronous);
  EXPECT_TRUE(b.supports_workgroups);
  EXPECT_GE(b.max_workgroup_size, 256);
  EXPECT_TRUE(b.supports_f64());
  EXPECT_EQ(b.supported_dtypes.size(), std::size(kAllDTypes));
  EXPECT_EQ(b.supported_atomic_dtypes, (std::set<DType>{i32, u32, i64, u64, f32, f64}));
  EXPECT_EQ(b.device_memory_spaces,
            (std::vector<std::string>{"cuda", "cuda_pinned", "cuda_managed"}));
  int count = 0;
  for (const Device& x : devices()) count += x.type() == "cuda";
  EXPECT_THROW(device("cuda:" + std::to_string(count)), DeviceError);
}

// ---- PTX and the disk cache, without a GPU ----

const char* const kRet =
    "import tack\n@tack.kernel\ndef total(x) -> tack.f64:\n    for _ in range(1):\n"
    "        pass\n    return x[0] + x[x.shape[0] - 1]\n";

ir::Kernel saxpy_kernel() {
  auto m = test::resolve(
      "import tack\n@tack.kernel\ndef saxpy(a, x, y, out):\n    for i in range(x.shape[0]):\n"
      "        out[i] = a * x[i] + y[i]\n");
  return sema::specialize(*m, "saxpy", sema::parse_arg_types("f32,f32[],f32[],f32[]"),
                          {"CUDA", true});
}

TEST(CudaPtx, NvrtcCompilesForTheArchitectureWithoutContraction) {
  REQUIRE_NVRTC();
  detail::CompileOptions o;
  o.symbol_prefix = "tack_ptx_test";
  std::string ptx = cuda::compile_ptx(saxpy_kernel(), o, 90);
  EXPECT_NE(ptx.find(".target sm_90"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find(".entry tack_ptx_test("), std::string::npos) << ptx;
  // --fmad=false: a * x + y is a multiply then an add, both rounded.
  EXPECT_NE(ptx.find("mul.rn.f32"), std::string::npos) << ptx;
  EXPECT_EQ(ptx.find("fma.rn.f32"), std::string::npos) << ptx;
  // A kernel with a return value has its second entry.
  ir::Kernel ret = sema::specialize(*test::resolve(kRet), "total", sema::parse_arg_types("f32[]"),
                                    {"CUDA", true});
  std::string ptx2 = cuda::compile_ptx(ret, o, 80);
  EXPECT_NE(ptx2.find(".target sm_80"), std::string::npos);
  EXPECT_NE(ptx2.find(".entry tack_ptx_test_result("), std::string::npos) << ptx2;
  // The target of the cache key names the architecture, NVRTC and the driver.
  std::string target = cuda::ptx_cache_target(90, 13000);
  EXPECT_NE(target.find("compute_90"), std::string::npos) << target;
  EXPECT_NE(target.find("nvrtc "), std::string::npos) << target;
  EXPECT_NE(target.find("driver 13000"), std::string::npos) << target;
  EXPECT_NE(target.find("--fmad=false"), std::string::npos) << target;
  EXPECT_NE(cuda::ptx_cache_target(80, 13000), target);
}

// The entry the runtime would use for saxpy on an sm_90 device (no driver here: version 0).
struct PtxEntry {
  ir::Kernel k = saxpy_kernel();
  detail::CompileOptions o;
  std::string key;
  PtxEntry() {
    key = detail::variant_cache_key(k, "cuda", cuda::ptx_cache_target(90, 0), 0);
    o.symbol_prefix = "tack_ptx_cache_test";
  }
};

// Run in a child process (see run_child): finds the entry its parent stored.
TEST(CudaPtxChild, FindsTheStoredPtx) {
  const char* dir = std::getenv("TACK_TEST_CUDA_PTX_DIR");
  if (!dir) GTEST_SKIP() << "runs only as a child of CudaPtx.TheDiskCacheHoldsThePtx";
  PtxEntry e;
  DiskCache cache(dir);
  auto found = cache.load("cuda", e.key);
  ASSERT_TRUE(found.has_value()) << cache.last_error();
  EXPECT_EQ(*found, cuda::compile_ptx(e.k, e.o, 90));
  EXPECT_EQ(cache.stats().hits, 1u);
}

TEST(CudaPtx, TheDiskCacheHoldsThePtxAcrossProcessesAndRecompilesACorruptEntry) {
  REQUIRE_NVRTC();
  fs::path dir = fs::temp_directory_path() / ("tack-cuda-ptx-" + std::to_string(getpid()));
  fs::remove_all(dir);
  PtxEntry e;
  {
    DiskCache cache(dir);
    EXPECT_FALSE(cache.load("cuda", e.key).has_value());
    std::string ptx = cuda::compile_ptx(e.k, e.o, 90);
    cache.store("cuda", e.key, ptx);
    EXPECT_EQ(cache.stats().writes, 1u);
  }
  // A second process finds it.
  EXPECT_TRUE(
      run_child("CudaPtxChild.FindsTheStoredPtx", {"TACK_TEST_CUDA_PTX_DIR=" + dir.string()}));
  // Damage the entry in the middle of the PTX: it is reported corrupt, not returned.
  std::vector<fs::path> files;
  for (const auto& f : fs::directory_iterator(dir))
    if (f.path().filename().string().rfind("cuda-", 0) == 0) files.push_back(f.path());
  ASSERT_EQ(files.size(), 1u);
  {
    std::fstream f(files[0], std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(files[0]) / 2));
    f.put('#');
  }
  DiskCache cache(dir);
  EXPECT_FALSE(cache.load("cuda", e.key).has_value());
  EXPECT_EQ(cache.stats().corrupt, 1u);
  // Recompiled and stored again, it is found again.
  std::string ptx = cuda::compile_ptx(e.k, e.o, 90);
  cache.store("cuda", e.key, ptx);
  auto again = cache.load("cuda", e.key);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(*again, ptx);
  fs::remove_all(dir);
}

// ---- on a GPU ----

class CudaGpu : public testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = cuda_missing(); !why.empty()) GTEST_SKIP() << why;
    gpu_ = device("cuda");
    cpu_ = device("cpu");
  }
  Device gpu_, cpu_;
};

std::vector<float> random_floats(size_t n, float lo, float hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

template <typename T>
Array upload(const std::vector<T>& v, Shape shape, const Device& d) {
  Array a = empty(shape, dtype_of<T>(), &d);
  copyto(a, v);
  return a;
}

TEST_F(CudaGpu, ExampleKernelsMatchTheCpuBitForBit) {
  for (int64_t n : {1, 255, 256, 257, 1000003}) {
    auto hx = random_floats(n, -10, 10, 1), hy = random_floats(n, -10, 10, 2);
    std::vector<float> want(n);
    Array x = upload(hx, {n}, gpu_), y = upload(hy, {n}, gpu_), out = empty({n}, f32, &gpu_);
    examples().kernel("vector_add")(x, y, out);
    reference::vector_add(hx.data(), hy.data(), want.data(), n);
    EXPECT_EQ(out.to_vector<float>(), want) << n;
    examples().kernel("saxpy")(1.75f, x, y, out);
    reference::saxpy(1.75f, hx.data(), hy.data(), want.data(), n);
    EXPECT_EQ(out.to_vector<float>(), want) << n;
  }
}

TEST_F(CudaGpu, ADebugViolationSurfacesAtSync) {
  Module m = Module::from_source(
      "import tack\n@tack.kernel\ndef shift(x, out):\n    for i in range(x.shape[0]):\n"
      "        out[i + 1] = x[i] * 2\n",
      "shift.py");
  Array x = arange(8, f32, &gpu_), out = zeros({8}, f32, &gpu_);
  set_debug(true);
  EXPECT_NO_THROW(m.kernel("shift")(x, out));
  try {
    sync();
    ADD_FAILURE() << "sync() did not raise the violation";
  } catch (const IndexError& e) {
    EXPECT_NE(std::string(e.what()).find("index [8] is out of bounds for array 'out'"),
              std::string::npos)
        << e.what();
  }
  set_debug(false);
  auto r = out.to_vector<float>();
  for (int i = 1; i < 8; ++i) EXPECT_EQ(r[i], 2.0f * (i - 1));
}

TEST_F(CudaGpu, ReturnValuesRunOnTheDevice) {
  Module m = Module::from_source(kRet, "ret.py");
  Array x = arange(4, f32, &gpu_);
  EXPECT_EQ(m.kernel("total")(x).as<double>(), 3.0);
}

TEST_F(CudaGpu, MemorySpacesArrayFromPtrAndDlpack) {
  Array a = arange(16, f32, &gpu_);
  EXPECT_EQ(memory_space(a.data()), "cuda");
  std::vector<float> host(4);
  EXPECT_EQ(memory_space(host.data()), "cpu");
  // Plain host memory is not CUDA memory.
  EXPECT_THROW(array_from_ptr(host.data(), {4}, f32, &gpu_, true), ValueError);
  // Another array over the same device memory sees the same data.
  Array view = array_from_ptr(a.data(), {16}, f32, &gpu_, true);
  examples().kernel("vector_add")(view, view, view);
  auto doubled = a.to_vector<float>();
  for (int i = 0; i < 16; ++i) EXPECT_EQ(doubled[i], 2.0f * i);
  // DLPack: kDLCUDA both ways.
  DLManagedTensor* t = to_dlpack(a);
  EXPECT_EQ(t->dl_tensor.device.device_type, kDLCUDA);
  EXPECT_EQ(t->dl_tensor.device.device_id, 0);
  EXPECT_EQ(t->dl_tensor.data, a.data());
  Array back = from_dlpack(t);
  EXPECT_EQ(back.device(), gpu_);
  EXPECT_EQ(back.to_vector<float>(), doubled);
}

}  // namespace
}  // namespace tack
