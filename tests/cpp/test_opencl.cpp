// The OpenCL backend on a real OpenCL implementation (PoCL here): availability, buffers, the
// example kernels bit for bit against the CPU backend, asynchronous launches and errors raised at
// synchronization, and program binaries in the disk cache across processes. Every test skips,
// saying why, where OpenCL has no device.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "reference.hpp"
#include "runtime/cache_file.hpp"
#include "runtime/disk_cache.hpp"
#include "runtime/front_end_record.hpp"
#include "runtime/internals.hpp"
#include "test_support.hpp"

extern char** environ;

namespace tack {
namespace {

namespace fs = std::filesystem;

// Why OpenCL cannot run here, or "".
std::string opencl_missing() {
  for (const BackendStatus& s : backend_status())
    if (s.name == "opencl") return s.available ? "" : s.reason;
  return "opencl is not a known backend";
}

#define REQUIRE_OPENCL()                                                       \
  do {                                                                         \
    if (std::string why = opencl_missing(); !why.empty()) GTEST_SKIP() << why; \
  } while (0)

Module examples() {
  return Module::from_file(std::string(TACK_TEST_KERNELS_DIR) + "/../../examples/kernels.py");
}

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

// Runs this test binary again with `filter` and extra environment variables; true when the
// child passed.
bool run_child(const std::string& filter, const std::vector<std::string>& extra_env) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    bool replaced = false;
    for (const std::string& x : extra_env)
      replaced |= kv.compare(0, x.find('=') + 1, x, 0, x.find('=') + 1) == 0;
    // The children choose their devices themselves.
    replaced |= kv.rfind("TACK_TEST_DEVICE=", 0) == 0;
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

// TACK_TEST_DEVICE=opencl runs this binary's other suites with OpenCL as the default device
// (the CTest entry tack_tests_on_opencl; see tests/CMakeLists.txt).
// Where that device is unavailable the binary exits with 77, which CTest reports as skipped.
const bool kDefaultDeviceSet = [] {
  const char* d = std::getenv("TACK_TEST_DEVICE");
  if (!d || !*d) return false;
  try {
    set_default_device(d);
  } catch (const Error& e) {
    std::fprintf(stderr, "skipped: TACK_TEST_DEVICE=%s is unavailable: %s\n", d, e.what());
    std::exit(77);
  }
  return true;
}();

// ---- availability ----

TEST(OpenClChild, MissingLoaderMakesTheBackendUnavailable) {
  if (!std::getenv("TACK_TEST_OPENCL_CHILD")) GTEST_SKIP() << "runs as a child process only";
  std::string reason = opencl_missing();
  EXPECT_NE(reason.find("/nonexistent/libOpenCL.so.1"), std::string::npos) << reason;
  EXPECT_NE(reason.find("ocl-icd-libopencl1"), std::string::npos) << reason;
  try {
    device("opencl");
    ADD_FAILURE() << "device('opencl') worked without a loader";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot be loaded"), std::string::npos) << e.what();
  }
  for (const Device& d : devices()) EXPECT_NE(d.type(), "opencl");
  // The CPU is unaffected.
  Array x = arange(4);
  examples().kernel("vector_add")(x, x, x);
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{0, 2, 4, 6}));
}

TEST(OpenCl, MissingLoaderIsReportedNotFatal) {
  EXPECT_TRUE(
      run_child("OpenClChild.MissingLoaderMakesTheBackendUnavailable",
                {"TACK_OPENCL_LIBRARY=/nonexistent/libOpenCL.so.1", "TACK_TEST_OPENCL_CHILD=1"}));
}

TEST(OpenCl, DeclaresItsCapabilities) {
  REQUIRE_OPENCL();
  Device d = device("opencl");
  EXPECT_EQ(d.name(), "opencl:0");
  EXPECT_EQ(device("opencl:0"), d);
  int count = 0;
  for (const Device& x : devices()) count += x.type() == "opencl";
  EXPECT_GE(count, 1);
  EXPECT_THROW(device("opencl:" + std::to_string(count)), DeviceError);
  const BackendInfo& b = d.backend();
  EXPECT_EQ(b.name, "opencl");
  EXPECT_TRUE(b.asynchronous);
  EXPECT_TRUE(b.supports_workgroups);
  EXPECT_GE(b.max_workgroup_size, 1);
  EXPECT_TRUE(b.supported_dtypes.count(f32));
  EXPECT_TRUE(b.supported_atomic_dtypes.count(i32));
  EXPECT_EQ(b.device_memory_spaces, std::vector<std::string>{"opencl"});
}

// ---- buffers ----

TEST(OpenCl, BuffersRoundTrip) {
  REQUIRE_OPENCL();
  Device d = device("opencl");
  std::vector<int32_t> host(1000);
  for (int i = 0; i < 1000; ++i) host[i] = i * 7 - 300;
  Array a = upload(host, {1000}, d);
  EXPECT_EQ(a.device(), d);
  EXPECT_EQ(memory_space(a.data()), "opencl");
  EXPECT_EQ(memory_space(host.data()), "cpu");
  EXPECT_EQ(a.to_vector<int32_t>(), host);
  EXPECT_EQ(a.at<int32_t>({999}), 999 * 7 - 300);
  // A copy on the device, then a fill of the original: the copy keeps the old values.
  Array c = a.copy();
  a.fill(3);
  EXPECT_EQ(c.to_vector<int32_t>(), host);
  EXPECT_EQ(a.sum(), 3000);
  // Views: rows and reshape address inside the same buffer.
  Array m = c.reshape({10, 100});
  EXPECT_EQ(m.at<int32_t>({2, 5}), 205 * 7 - 300);
  Array rows = m.rows(3, 5);
  rows.fill(-1);
  auto after = c.to_vector<int32_t>();
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(after[i], i >= 300 && i < 500 ? -1 : host[i]) << i;
  // Between devices.
  Device cpu = device("cpu");
  Array h = empty({10, 100}, i32, &cpu);
  copyto(h, m);
  EXPECT_EQ(h.to_vector<int32_t>(), after);
  Array back = empty({10, 100}, i32, &d);
  copyto(back, h);
  EXPECT_EQ(back.to_vector<int32_t>(), after);
  // Every dtype, one byte to eight.
  for (DType t : d.backend().supported_dtypes) {
    Array z = full({5}, 1, t, &d);
    EXPECT_EQ(z.sum(), 5) << dtype_name(t);
    EXPECT_EQ(z.astype(f32).sum(), 5) << dtype_name(t);
  }
  Array empty_array = zeros({0}, f32, &d);
  EXPECT_EQ(empty_array.to_vector<float>().size(), 0u);
}

// ---- the example kernels, bit for bit against the CPU backend and plain C++ ----

class OpenClExamples : public testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = opencl_missing(); !why.empty()) GTEST_SKIP() << why;
    gpu_ = device("opencl");
    cpu_ = device("cpu");
  }
  Device gpu_, cpu_;
};

TEST_F(OpenClExamples, VectorAddAndSaxpy) {
  for (int64_t n : {1, 63, 64, 65, 100003}) {
    auto hx = random_floats(n, -10, 10, 1), hy = random_floats(n, -10, 10, 2);
    std::vector<float> want(n);
    Array x = upload(hx, {n}, gpu_), y = upload(hy, {n}, gpu_), out = empty({n}, f32, &gpu_);
    examples().kernel("vector_add")(x, y, out);
    reference::vector_add(hx.data(), hy.data(), want.data(), n);
    EXPECT_EQ(out.to_vector<float>(), want) << n;
    examples().kernel("saxpy")(1.75f, x, y, out);
    reference::saxpy(1.75f, hx.data(), hy.data(), want.data(), n);
    EXPECT_EQ(out.to_vector<float>(), want) << n;
    Array cx = upload(hx, {n}, cpu_), cy = upload(hy, {n}, cpu_), cout = empty({n}, f32, &cpu_);
    examples().kernel("saxpy")(1.75f, cx, cy, cout);
    EXPECT_EQ(out.to_vector<float>(), cout.to_vector<float>()) << n;
  }
}

TEST_F(OpenClExamples, SaxpyInF64AndAliasedArguments) {
  if (!gpu_.backend().supports_f64()) GTEST_SKIP() << "this OpenCL device has no cl_khr_fp64";
  const int64_t n = 5000;
  std::vector<double> hx(n), hy(n);
  for (int64_t i = 0; i < n; ++i) hx[i] = 0.1 * i, hy[i] = 1.0 / (i + 1);
  Array x = upload(hx, {n}, gpu_), y = upload(hy, {n}, gpu_);
  examples().kernel("saxpy")(0.3, x, y, x);  // out is x: the aliasing variant
  auto got = x.to_vector<double>();
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], 0.3 * hx[i] + hy[i]) << i;
}

TEST_F(OpenClExamples, Stencil5) {
  const int64_t h = 130, w = 257;
  auto hu = random_floats(h * w, 0, 1, 5);
  Array u = upload(hu, {h, w}, gpu_), out = zeros({h, w}, f32, &gpu_);
  examples().kernel("stencil5")(u, out);
  std::vector<float> want(h * w, 0.0f);
  reference::stencil5(hu.data(), want.data(), h, w);
  EXPECT_EQ(out.to_vector<float>(), want);
}

TEST_F(OpenClExamples, Mandelbrot) {
  const int64_t h = 120, w = 160;
  Array out = empty({h, w}, i32, &gpu_), cpu_out = empty({h, w}, i32, &cpu_);
  examples().kernel("mandelbrot")(out, -2.0f, -1.2f, 3.0f / w, 2.4f / h, 200);
  examples().kernel("mandelbrot")(cpu_out, -2.0f, -1.2f, 3.0f / w, 2.4f / h, 200);
  std::vector<int32_t> want(h * w);
  reference::mandelbrot(want.data(), h, w, -2.0f, -1.2f, 3.0f / w, 2.4f / h, 200);
  EXPECT_EQ(out.to_vector<int32_t>(), want);
  EXPECT_EQ(cpu_out.to_vector<int32_t>(), want);
}

TEST_F(OpenClExamples, NbodyStep) {
  const int64_t n = 200;
  auto hp = random_floats(n * 3, -1, 1, 6), hv = random_floats(n * 3, -0.1f, 0.1f, 7);
  auto hm = random_floats(n, 0.5f, 1.5f, 8);
  Array pos = upload(hp, {n, 3}, gpu_), vel = upload(hv, {n, 3}, gpu_),
        mass = upload(hm, {n}, gpu_);
  Array np = empty({n, 3}, f32, &gpu_), nv = empty({n, 3}, f32, &gpu_);
  examples().kernel("nbody_step")(pos, vel, mass, np, nv, 0.01f);
  std::vector<float> wp(n * 3), wv(n * 3);
  reference::nbody_step(hp.data(), hv.data(), hm.data(), wp.data(), wv.data(), 0.01f, n);
  EXPECT_EQ(np.to_vector<float>(), wp);
  EXPECT_EQ(nv.to_vector<float>(), wv);
}

TEST_F(OpenClExamples, ArraysOnAnotherDeviceAreRefused) {
  Array x = zeros({4}, f32, &gpu_), y = zeros({4}, f32, &cpu_);
  try {
    examples().kernel("vector_add")(x, y, x);
    FAIL();
  } catch (const TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("is on cpu:0 but the call runs on opencl:0"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(OpenClExamples, AViewOfRowsIsPassedAsASubBuffer) {
  // 64 floats per row: each row starts at a multiple of 256 bytes, which every OpenCL device
  // accepts for a sub-buffer.
  const int64_t n = 64;
  std::vector<float> h(4 * n);
  for (size_t i = 0; i < h.size(); ++i) h[i] = static_cast<float>(i);
  Array a = upload(h, {4, n}, gpu_);
  Array rows = a.rows(2, 4).reshape({2 * n});
  examples().kernel("vector_add")(rows, rows, rows);
  auto got = a.to_vector<float>();
  for (int64_t i = 0; i < 4 * n; ++i) EXPECT_EQ(got[i], i >= 2 * n ? 2.0f * i : i) << i;
  // A view that starts at an odd element cannot be a sub-buffer: a clear error.
  Array odd = upload(h, {4 * n}, gpu_).reshape({4 * n, 1}).rows(1, 2).reshape({1});
  EXPECT_THROW(examples().kernel("vector_add")(odd, odd, odd), ValueError);
}

// ---- asynchronous launches ----

const char* const kShift =
    "import tack\n@tack.kernel\ndef shift(x, out):\n    for i in range(x.shape[0]):\n"
    "        out[i + 1] = x[i] * 2\n";

struct DebugOn {
  DebugOn() { set_debug(true); }
  ~DebugOn() { set_debug(false); }
};

TEST_F(OpenClExamples, ADebugViolationSurfacesAtSyncNamingTheKernel) {
  Module m = Module::from_source(kShift, "shift.py");
  Array x = arange(8, f32, &gpu_), out = zeros({8}, f32, &gpu_);
  {
    DebugOn debug;
    // The call returns once queued: the violation is not known yet.
    EXPECT_NO_THROW(m.kernel("shift")(x, out));
    try {
      sync();
      FAIL() << "sync() did not raise the violation";
    } catch (const IndexError& e) {
      std::string w = e.what();
      EXPECT_NE(w.find("shift.py:5:9: in kernel 'shift'"), std::string::npos) << w;
      EXPECT_NE(w.find("index [8] is out of bounds for array 'out' of shape (8,)"),
                std::string::npos)
          << w;
      EXPECT_NE(w.find("store was not performed"), std::string::npos) << w;
    }
    EXPECT_NO_THROW(sync());  // raised once
    // The in-bounds stores happened.
    auto r = out.to_vector<float>();
    for (int i = 1; i < 8; ++i) EXPECT_EQ(r[i], 2.0f * (i - 1));
    // A host read is a synchronization too.
    m.kernel("shift")(x, out);
    EXPECT_THROW(out.to_vector<float>(), IndexError);
    EXPECT_NO_THROW(out.to_vector<float>());
  }
  // Without debug mode, the same kernel on a larger output: no error.
  Array big = zeros({9}, f32, &gpu_);
  m.kernel("shift")(x, big);
  EXPECT_EQ(big.to_vector<float>()[8], 14.0f);
}

TEST_F(OpenClExamples, ADebugViolationOnALoadIsReported) {
  Module m = Module::from_source(
      "import tack\n@tack.kernel\ndef k(x, out):\n    for i, j in tack.ndrange(out.shape[0], "
      "out.shape[1]):\n        out[i, j] = x[j, i]\n",
      "transpose.py");
  DebugOn debug;
  Array x = ones({2, 3}, f32, &gpu_), out = zeros({3, 3}, f32, &gpu_);
  m.kernel("k")(x, out);
  try {
    sync();
    FAIL();
  } catch (const IndexError& e) {
    std::string w = e.what();
    EXPECT_NE(w.find("in kernel 'k'"), std::string::npos) << w;
    EXPECT_NE(w.find("for array 'x' of shape (2, 3)"), std::string::npos) << w;
    EXPECT_NE(w.find("load was not performed"), std::string::npos) << w;
  }
}

TEST_F(OpenClExamples, QueuedLaunchesRunInOrder) {
  // Many dependent launches queued back to back; one read at the end waits for all of them.
  const int64_t n = 4096;
  Array x = zeros({n}, f32, &gpu_), one = full({n}, 1, f32, &gpu_);
  Kernel add = examples().kernel("vector_add");
  for (int i = 0; i < 100; ++i) add(x, one, x);
  auto v = x.to_vector<float>();
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(v[i], 100.0f) << i;
}

TEST_F(OpenClExamples, SharedHostMemoryIsCompleteWhenTheCallReturns) {
  // array_from_ptr on OpenCL wraps host memory (CL_MEM_USE_HOST_PTR): memory another library
  // owns, so the launch completes before the call returns, with no sync or read through Tack.
  const int64_t n = 1000;
  std::vector<float> hx(n), hout(n, 0.0f);
  for (int64_t i = 0; i < n; ++i) hx[i] = static_cast<float>(i);
  Array x = array_from_ptr(hx.data(), {n}, f32, &gpu_, false);
  Array out = array_from_ptr(hout.data(), {n}, f32, &gpu_, true);
  examples().kernel("vector_add")(x, x, out);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hout[i], 2.0f * i) << i;
  // The host's own writes reach the next launch.
  for (int64_t i = 0; i < n; ++i) hx[i] = -1.0f * i;
  examples().kernel("vector_add")(x, out, out);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hout[i], 1.0f * i) << i;
}

TEST_F(OpenClExamples, FreeingAnArrayWaitsAndKeepsTheError) {
  Module m = Module::from_source(kShift, "shift.py");
  Array x = arange(8, f32, &gpu_);
  {
    DebugOn debug;
    Array out = zeros({8}, f32, &gpu_);
    m.kernel("shift")(x, out);
  }  // `out` is freed here: the wait cannot throw, so the error waits for the next sync
  EXPECT_THROW(sync(), IndexError);
  EXPECT_NO_THROW(sync());
}

TEST_F(OpenClExamples, ReturnValuesAndAtomicsRunOnTheDevice) {
  // A kernel's result comes from its second entry, run as one work item after the loop.
  Module m = Module::from_source(
      "import tack\n@tack.kernel\ndef total(x) -> tack.f64:\n    for _ in range(1):\n"
      "        pass\n    return x[0] + x[x.shape[0] - 1]\n",
      "ret.py");
  Array x = arange(4, f32, &gpu_);
  EXPECT_EQ(m.kernel("total")(x).as<double>(), 3.0);
  Module atomics = Module::from_file(test::kernels_dir() + "/atomics.py");
  Array values = full({8}, 0.5, f32, &gpu_), counts = zeros({4}, i32, &gpu_);
  atomics.kernel("histogram")(values, 4, counts);
  EXPECT_EQ(counts.to_vector<int32_t>(), (std::vector<int32_t>{0, 0, 8, 0}));
}

// ---- the backend contract directly ----

// The OpenCL backend through the backend contract (src/backends/backend.hpp), below dispatch.
struct DirectLaunch {
  detail::Backend* backend = device("opencl").impl();
  detail::CompileOptions options;
  DirectLaunch() { options.symbol_prefix = "tack_direct_test"; }
};

TEST_F(OpenClExamples, WorkgroupKernelsLaunchInGroupsOfTheirSize) {
  // ir::Kernel::workgroup_size asks for groups of 256; 1000 iterations round up to 1024 work
  // items, and those past the count return at once.
  ir::Kernel k = test::specialize(
      "import tack\n@tack.kernel\ndef k(x, out):\n    for i in range(x.shape[0]):\n"
      "        out[i] = x[i] + 1\n",
      "f32[],f32[]");
  k.workgroup_size = 256;
  DirectLaunch d;
  auto code = d.backend->load(d.backend->compile(k, d.options, 0), k, d.options, 0, "");
  const int64_t n = 1000;
  Array x = arange(n, f32, &gpu_), out = zeros({n}, f32, &gpu_);
  detail::LaunchArgs a;
  a.params.resize(2);
  a.params[0].data = x.data();
  a.params[0].shape = x.shape().data();
  a.params[1].data = out.data();
  a.params[1].shape = out.shape().data();
  a.start = {0};
  a.step = {1};
  a.count = {n};
  d.backend->launch(*code, k, a, 0);
  d.backend->synchronize(0);
  auto v = out.to_vector<float>();
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(v[i], i + 1.0f) << i;
}

TEST_F(OpenClExamples, AProgramThatFailsToBuildGivesTheLogAndTheKernel) {
  ir::Kernel k = test::specialize(
      "import tack\n@tack.kernel\ndef broken(x):\n    for i in range(x.shape[0]):\n"
      "        x[i] = 0\n",
      "f32[]", "broken");
  DirectLaunch d;
  // A cached artifact with no binary and a source that does not compile.
  std::string source = "__kernel void tack_direct_test(__global float* x) { this is not C; }\n";
  std::string artifact = "tack-opencl 1\n";
  uint64_t sizes[2] = {0, source.size()};
  artifact.append(reinterpret_cast<const char*>(sizes), sizeof sizes);
  artifact += source;
  try {
    d.backend->load(artifact, k, d.options, 0, "");
    FAIL() << "the program built";
  } catch (const DeviceError& e) {
    std::string w = e.what();
    EXPECT_NE(w.find("kernel 'broken': OpenCL could not build"), std::string::npos) << w;
    EXPECT_NE(w.find("Build log:"), std::string::npos) << w;
    EXPECT_NE(w.find("error"), std::string::npos) << w;  // the compiler's own words
  }
  // A malformed artifact is a DeviceError too (the runtime then recompiles).
  EXPECT_THROW(d.backend->load("not an artifact", k, d.options, 0, ""), DeviceError);
}

// ---- the disk cache: program binaries across processes ----

const char* const kCacheKernels =
    "import tack\n@tack.kernel\ndef triple_add(x, y, out):\n    for i in range(x.shape[0]):\n"
    "        out[i] = 3 * x[i] + y[i]\n";

TEST(OpenClChild, RunCachedKernel) {
  const char* out = std::getenv("TACK_TEST_CHILD_OUT");
  if (!out) GTEST_SKIP() << "runs as a child process only";
  Device d = device("opencl");
  Module m = Module::from_source(kCacheKernels, "child.py");
  Array x = arange(1000, f32, &d), y = full({1000}, 0.5, f32, &d), r = empty({1000}, f32, &d);
  m.kernel("triple_add")(x, y, r);
  auto v = r.to_vector<float>();
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(v[i], 3.0f * i + 0.5f);
  CacheStats s = cache_stats();
  std::ofstream(out) << s.compiles << " " << s.disk_hits << " " << s.disk_corrupt << "\n";
}

class OpenClCache : public testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = opencl_missing(); !why.empty()) GTEST_SKIP() << why;
    dir_ = fs::temp_directory_path() / ("tack-opencl-cache-" + std::to_string(getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  struct Stats {
    int compiles = -1, disk_hits = -1, disk_corrupt = -1;
  };
  Stats child() {
    std::string out = dir_.string() + "-out.txt";
    EXPECT_TRUE(run_child(
        "OpenClChild.RunCachedKernel",
        {"TACK_CACHE_DIR=" + dir_.string(), "TACK_TEST_CHILD_OUT=" + out, "TACK_CACHE=1"}));
    Stats s;
    std::ifstream(out) >> s.compiles >> s.disk_hits >> s.disk_corrupt;
    fs::remove(out);
    return s;
  }
  std::vector<fs::path> entries() {
    std::vector<fs::path> out;
    if (fs::exists(dir_))
      for (const auto& e : fs::directory_iterator(dir_))
        if (e.path().extension() == ".tck" &&
            !e.path().filename().string().starts_with(detail::kFrontEndRecordKind))
          out.push_back(e.path());
    return out;
  }
  // The key and artifact of an entry file.
  static std::pair<std::string, std::string> read_entry(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    cache_file::ParsedEntry entry;
    EXPECT_EQ(cache_file::parse_entry(bytes, &entry), nullptr) << p;
    return {std::string(entry.key), std::string(entry.artifact)};
  }

  fs::path dir_;
};

TEST_F(OpenClCache, TheProgramBinaryIsStoredAndLoadedByASecondProcess) {
  Stats first = child();
  EXPECT_EQ(first.compiles, 1);
  EXPECT_EQ(first.disk_hits, 0);
  auto e = entries();
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].filename().string().rfind("opencl-", 0), 0u) << e[0];
  auto [key, artifact] = read_entry(e[0]);
  EXPECT_NE(key.find("backend opencl"), std::string::npos) << key;
  EXPECT_NE(key.find("driver"), std::string::npos) << key;
  // The artifact holds a program binary, then the OpenCL C source.
  ASSERT_EQ(artifact.rfind("tack-opencl 1\n", 0), 0u);
  uint64_t sizes[2];
  std::memcpy(sizes, artifact.data() + 14, 16);
  EXPECT_GT(sizes[0], 0u);
  EXPECT_NE(artifact.find("__kernel void"), std::string::npos);
  Stats second = child();
  EXPECT_EQ(second.compiles, 0);
  EXPECT_EQ(second.disk_hits, 1);
}

TEST_F(OpenClCache, ACorruptEntryIsRecompiled) {
  child();
  auto e = entries();
  ASSERT_EQ(e.size(), 1u);
  {
    std::fstream f(e[0], std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(e[0]) / 2));
    f.write("\xde\xad\xbe\xef", 4);
  }
  Stats s = child();
  EXPECT_EQ(s.compiles, 1);
  EXPECT_GE(s.disk_corrupt, 1);
  Stats again = child();
  EXPECT_EQ(again.compiles, 0);
  EXPECT_EQ(again.disk_hits, 1);
}

TEST_F(OpenClCache, ARefusedBinaryFallsBackToTheSource) {
  child();
  auto e = entries();
  ASSERT_EQ(e.size(), 1u);
  auto [key, artifact] = read_entry(e[0]);
  uint64_t sizes[2];
  std::memcpy(sizes, artifact.data() + 14, 16);
  // A well-formed entry (good checksum) whose binary is garbage.
  for (uint64_t i = 0; i < sizes[0]; ++i) artifact[30 + i] = static_cast<char>(i * 31 + 7);
  DiskCache(dir_).store("opencl", key, artifact);
  Stats s = child();
  EXPECT_EQ(s.compiles, 0);
  EXPECT_EQ(s.disk_hits, 1);  // loaded from the entry, built from its source
}

}  // namespace
}  // namespace tack
