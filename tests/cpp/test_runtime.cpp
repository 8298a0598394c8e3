// The runtime through the public C++ API: the example programs against plain C++, arrays,
// devices, argument handling, debug mode.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "backends/registry.hpp"
#include "reference.hpp"
#include "test_support.hpp"

namespace tack {
namespace {

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

Array upload(const std::vector<float>& v, Shape shape) {
  Array a = empty(shape);
  copyto(a, v);
  return a;
}

// Sizes chosen to cross the thread pool's threshold and to leave remainders after vector width.
TEST(Programs, VectorAddAndSaxpyMatchCxxBitForBit) {
  for (int64_t n : {1, 7, 1000, 100003}) {
    auto hx = random_floats(n, -10, 10, 1), hy = random_floats(n, -10, 10, 2);
    Array x = upload(hx, {n}), y = upload(hy, {n}), out = empty({n});
    std::vector<float> want(n);
    examples().kernel("vector_add")(x, y, out);
    reference::vector_add(hx.data(), hy.data(), want.data(), n);
    EXPECT_EQ(out.to_vector<float>(), want) << n;
    examples().kernel("saxpy")(1.75f, x, y, out);
    reference::saxpy(1.75f, hx.data(), hy.data(), want.data(), n);
    EXPECT_EQ(out.to_vector<float>(), want) << n;
  }
}

TEST(Programs, AliasedArgumentsKeepProgramOrder) {
  // out is x: the no-alias variant must not be used.
  const int64_t n = 50000;
  auto hx = random_floats(n, -1, 1, 3), hy = random_floats(n, -1, 1, 4);
  Array x = upload(hx, {n}), y = upload(hy, {n});
  examples().kernel("saxpy")(3.0f, x, y, x);
  std::vector<float> want(n);
  reference::saxpy(3.0f, hx.data(), hy.data(), want.data(), n);
  EXPECT_EQ(x.to_vector<float>(), want);
}

TEST(Programs, Stencil5MatchesCxx) {
  const int64_t h = 300, w = 257;
  auto hu = random_floats(h * w, 0, 1, 5);
  Array u = upload(hu, {h, w}), out = zeros({h, w});
  examples().kernel("stencil5")(u, out);
  std::vector<float> want(h * w, 0.0f);
  reference::stencil5(hu.data(), want.data(), h, w);
  EXPECT_EQ(out.to_vector<float>(), want);
}

TEST(Programs, MandelbrotMatchesCxx) {
  const int64_t h = 120, w = 160;
  Array out = empty({h, w}, i32);
  examples().kernel("mandelbrot")(out, -2.0f, -1.2f, 3.0f / w, 2.4f / h, 200);
  std::vector<int32_t> want(h * w);
  reference::mandelbrot(want.data(), h, w, -2.0f, -1.2f, 3.0f / w, 2.4f / h, 200);
  EXPECT_EQ(out.to_vector<int32_t>(), want);
}

TEST(Programs, NbodyStepMatchesCxx) {
  const int64_t n = 300;
  auto hp = random_floats(n * 3, -1, 1, 6), hv = random_floats(n * 3, -0.1f, 0.1f, 7);
  auto hm = random_floats(n, 0.5f, 1.5f, 8);
  Array pos = upload(hp, {n, 3}), vel = upload(hv, {n, 3}), mass = upload(hm, {n});
  Array np = empty({n, 3}), nv = empty({n, 3});
  examples().kernel("nbody_step")(pos, vel, mass, np, nv, 0.01f);
  std::vector<float> wp(n * 3), wv(n * 3);
  reference::nbody_step(hp.data(), hv.data(), hm.data(), wp.data(), wv.data(), 0.01f, n);
  EXPECT_EQ(np.to_vector<float>(), wp);
  EXPECT_EQ(nv.to_vector<float>(), wv);
}

TEST(Programs, F64ArraysMakeFloatScalarsF64) {
  Module m = Module::from_source(
      "import tack\n@tack.kernel\ndef k(a, x):\n    for i in range(x.shape[0]):\n        x[i] = "
      "a\n");
  Array x = zeros({2}, f64);
  m.kernel("k")(0.1, x);
  EXPECT_EQ(x.to_vector<double>()[0], 0.1);  // not 0.1f widened
  Array y = zeros({2}, f32);
  m.kernel("k")(0.1, y);
  EXPECT_EQ(y.to_vector<float>()[0], 0.1f);
}

TEST(Programs, LargeIntegersSelectI64AndU64Variants) {
  Module m = Module::from_source(
      "import tack\n@tack.kernel\ndef k(a, x):\n    for i in range(x.shape[0]):\n        x[i] = "
      "a\n");
  Array x = zeros({1}, i64), u = zeros({1}, u64);
  m.kernel("k")(int64_t{5000000000}, x);
  EXPECT_EQ(x.to_vector<int64_t>()[0], 5000000000);
  m.kernel("k")(uint64_t{18000000000000000000u}, u);
  EXPECT_EQ(u.to_vector<uint64_t>()[0], 18000000000000000000u);
}

TEST(Arrays, CreationViewsCopiesAndReductions) {
  Array a = arange(12, i32);
  EXPECT_EQ(a.shape(), (Shape{12}));
  Array m = a.reshape({3, -1});
  EXPECT_EQ(m.shape(), (Shape{3, 4}));
  EXPECT_EQ(m.at<int32_t>({2, 1}), 9);
  Array rows = m.rows(1, 3);
  EXPECT_EQ(rows.shape(), (Shape{2, 4}));
  EXPECT_EQ(rows.at<int32_t>({0, 0}), 4);
  rows.fill(-1);  // a view writes through
  EXPECT_EQ(a.to_vector<int32_t>()[4], -1);
  EXPECT_EQ(a.to_vector<int32_t>()[0], 0);
  Array c = a.copy();
  c.fill(5);
  EXPECT_EQ(a.at<int32_t>({0}), 0);
  EXPECT_EQ(c.sum(), 60);
  EXPECT_EQ(a.astype(f64).dtype(), f64);
  EXPECT_EQ(full({4}, 2.5, f64).mean(), 2.5);
  EXPECT_EQ(ones({3, 3}).sum(), 9);
  EXPECT_EQ(arange(5, f32).max(), 4);
  EXPECT_EQ(arange(5, f32).min(), 0);
  EXPECT_EQ(zeros_like(c).sum(), 0);
  EXPECT_EQ(empty_like(c).shape(), c.shape());
  EXPECT_THROW(a.reshape({5, 5}), ValueError);
  EXPECT_THROW(a.at<float>({0}), TypeError);
  EXPECT_THROW(a.at<int32_t>({12}), IndexError);
  std::vector<int32_t> host(12);
  copyto(std::span<int32_t>(host), a);
  EXPECT_EQ(host[3], 3);
  EXPECT_EQ(host[11], -1);
  Array f = empty({12}, f32);
  EXPECT_THROW(copyto(f, host), TypeError);
}

// fill writes every element, of every size, whatever the count (the CPU copies what it wrote in
// doubling blocks), and nothing past the view it fills.
TEST(Arrays, FillWritesEveryElementAndNothingElse) {
  for (int64_t n : {0, 1, 2, 3, 7, 1000, 16384, 70001}) {
    Array b = full({n + 2}, -3, i8);
    b.rows(1, n + 1).fill(7);
    std::vector<int8_t> bytes = b.to_vector<int8_t>();
    EXPECT_EQ(bytes.front(), -3) << n;
    EXPECT_EQ(bytes.back(), -3) << n;
    EXPECT_EQ(std::count(bytes.begin() + 1, bytes.end() - 1, 7), n) << n;
    std::vector<double> d = full({n}, 0.1, f64).to_vector<double>();
    EXPECT_EQ(std::count(d.begin(), d.end(), 0.1), n) << n;
    std::vector<float> f = full({n, 3}, 2.5, f32).to_vector<float>();
    EXPECT_EQ(std::count(f.begin(), f.end(), 2.5f), 3 * n) << n;
  }
}

TEST(Devices, RegistryDefaultsAndMissingBackends) {
  EXPECT_EQ(get_default_device().name(), "cpu:0");
  EXPECT_EQ(get_backend().name, "cpu");
  EXPECT_TRUE(get_backend().supports_f64());
  EXPECT_FALSE(get_backend().supports_workgroups);
  EXPECT_EQ(device("cpu:0"), device("cpu"));
  EXPECT_THROW(device("cpu:1"), DeviceError);
  EXPECT_THROW(device("tpu"), ValueError);
  // Metal is never built on Linux (cuda and opencl are available where their drivers are).
  try {
    device("metal");
    FAIL();
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("Metal"), std::string::npos);
  }
  EXPECT_EQ(memory_space(arange(4).data()), "cpu");
}

// The registry finds a backend by the table's name without asking the backend to declare itself.
TEST(Devices, TheBackendTableNamesEachBackendAsItDeclaresItself) {
  for (const backends::BackendEntry& e : backends::backend_table())
    EXPECT_EQ(e.declared_info().name, e.name);
  std::vector<std::string> declared;
  for (const BackendStatus& s : backend_status()) declared.push_back(s.name);
  EXPECT_EQ(declared,
            (std::vector<std::string>{"cpu", "cuda", "hip", "level_zero", "metal", "opencl"}));
}

TEST(Devices, LocalDeviceFollowsTheNodeLocalRank) {
  const char* names[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID",
                         "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"};
  std::vector<std::pair<std::string, std::optional<std::string>>> saved;
  for (const char* n : names) {
    const char* v = std::getenv(n);
    saved.emplace_back(n, v ? std::optional<std::string>(v) : std::nullopt);
    unsetenv(n);
  }
  EXPECT_EQ(local_rank(), std::nullopt);  // no launcher: device index 0
  EXPECT_EQ(local_device("cpu"), device("cpu:0"));
  setenv("SLURM_LOCALID", "5", 1);
  setenv("MPI_LOCALRANKID", "2", 1);
  EXPECT_EQ(local_rank(), 2);  // MPICH's before Slurm's (mpiexec inside an allocation)
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "7", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "8", 1);
  EXPECT_EQ(local_rank(), 7);
  EXPECT_EQ(local_size(), 8);
  // Round robin over the backend's devices: the CPU backend has one.
  EXPECT_EQ(device("cpu:local"), device("cpu:0"));
  int opencl_devices = 0;
  for (const Device& e : devices()) opencl_devices += e.type() == "opencl";
  if (opencl_devices > 0) {
    EXPECT_EQ(local_device("opencl").index(), 7 % opencl_devices);
  }
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "-1", 1);  // malformed: the next launcher's variable
  EXPECT_EQ(local_rank(), 2);
  EXPECT_THROW(device("cpu:locale"), ValueError);
  EXPECT_THROW(device("tpu:local"), ValueError);
  for (const auto& [n, v] : saved) {
    if (v)
      setenv(n.c_str(), v->c_str(), 1);
    else
      unsetenv(n.c_str());
  }
}

TEST(DebugMode, OutOfBoundsIsReportedAndNotPerformed) {
  Module m = Module::from_source(
      "import tack\n@tack.kernel\ndef shift(x, out):\n    for i in range(x.shape[0]):\n"
      "        out[i + 1] = x[i] * 2\n",
      "shift.py");
  set_debug(true);
  Array x = arange(8), out = zeros({8});
  try {
    m.kernel("shift")(x, out);
    sync();  // where an asynchronous backend raises it
    set_debug(false);
    FAIL();
  } catch (const IndexError& e) {
    set_debug(false);
    std::string w = e.what();
    EXPECT_NE(w.find("shift.py:5:9: in kernel 'shift'"), std::string::npos) << w;
    EXPECT_NE(w.find("index [8] is out of bounds for array 'out' of shape (8,)"), std::string::npos)
        << w;
    EXPECT_NE(w.find("store was not performed"), std::string::npos) << w;
  }
  // Every in-bounds store happened; the out-of-bounds one did not touch memory past the end.
  auto r = out.to_vector<float>();
  for (int i = 1; i < 8; ++i) EXPECT_EQ(r[i], 2.0f * (i - 1));
  // Without debug mode the same kernel compiles without checks (a separate variant).
  Array big = zeros({9});
  m.kernel("shift")(x, big);
  EXPECT_EQ(big.to_vector<float>()[8], 14.0f);
}

TEST(DebugMode, LoadsOutOfBoundsReadZeroAndAreReported) {
  Module m = Module::from_source(
      "import tack\n@tack.kernel\ndef k(x, out):\n    for i, j in tack.ndrange(out.shape[0], "
      "out.shape[1]):\n"
      "        out[i, j] = x[j, i]\n");
  set_debug(true);
  Array x = ones({2, 3}), out = zeros({3, 3});
  EXPECT_THROW(
      {
        m.kernel("k")(x, out);
        sync();  // where an asynchronous backend raises it
      },
      IndexError);
  set_debug(false);
  EXPECT_EQ(out.sum(), 6.0);  // the three reads past x's rows gave 0
}

// Many iterations (on many threads, or work items) violate two different accesses at once: one
// whole violation is recorded, the first to claim the record, never a mix of two, and raised once.
TEST(DebugMode, ManyViolationsRecordOneWholeViolation) {
  Module m = Module::from_source(
      "import tack\n@tack.kernel\ndef k(x, out, small):\n    for i in range(x.shape[0]):\n"
      "        out[i + 1] = x[i]\n        small[i] = x[i]\n",
      "many.py");
  const int64_t n = 1 << 16;
  Array x = ones({n}), out = zeros({n}), small = zeros({4});
  set_debug(true);
  std::string w;
  try {
    m.kernel("k")(x, out, small);
    sync();
  } catch (const IndexError& e) {
    w = e.what();
  }
  set_debug(false);
  ASSERT_FALSE(w.empty()) << "no violation was raised";
  EXPECT_NO_THROW(sync());
  if (w.find("many.py:5:9: in kernel 'k'") != std::string::npos) {
    EXPECT_NE(
        w.find(fmt::format("index [{}] is out of bounds for array 'out' of shape ({},)", n, n)),
        std::string::npos)
        << w;
  } else {
    EXPECT_NE(w.find("many.py:6:9: in kernel 'k'"), std::string::npos) << w;
    EXPECT_NE(w.find("for array 'small' of shape (4,)"), std::string::npos) << w;
    size_t at = w.find("index [");
    ASSERT_NE(at, std::string::npos) << w;
    int64_t index = std::stoll(w.substr(at + 7));
    EXPECT_GE(index, 4) << w;
    EXPECT_LT(index, n) << w;
  }
  // The in-bounds stores all happened.
  EXPECT_EQ(out.sum(), static_cast<double>(n - 1));
  EXPECT_EQ(small.sum(), 4.0);
}

TEST(Concurrency, HostThreadsCallingOneKernelAtOnce) {
  Module m = Module::from_source(
      "import tack\n@tack.kernel\ndef k(a, out):\n    for i in range(out.shape[0]):\n"
      "        out[i] = i * a\n");
  Kernel k = m.kernel("k");
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 20; ++rep) {
        int64_t n = (t + 1) * 40000 + rep;
        Array out = empty({n}, t % 2 ? i64 : f64);
        k(t + 2, out);
        if (out.item({n - 1}) != static_cast<double>((n - 1) * (t + 2))) wrong++;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong, 0);
}

TEST(ThreadPoolUse, LargeLaunchesGiveTheSameAnswerAsSmallOnes) {
  Module m = Module::from_source(
      "import tack\n@tack.kernel\ndef k(out):\n    for i in range(out.shape[0]):\n"
      "        out[i] = i * i % 1000\n");
  for (int64_t n : {10, 1 << 20}) {
    Array out = empty({n}, i64);
    m.kernel("k")(out);
    auto r = out.to_vector<int64_t>();
    for (int64_t i = 0; i < n; i += 997) ASSERT_EQ(r[i], i * i % 1000);
  }
}

}  // namespace
}  // namespace tack
