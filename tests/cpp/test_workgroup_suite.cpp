// The workgroup suite (tests/kernels/workgroups.py) run end to end through the public API
// (tack::Module) on every available backend with workgroups (OpenCL on PoCL here), against
// references computed in plain C++ below, block collectives following the documented order
// (docs/language.md, "Order of the collectives"). Also end to end: the launch check for complete
// groups, partial groups for kernels without collectives, and the CPU's rejection of every kernel
// of the suite. A backend that is unavailable is skipped with the reason.
#include <fmt/format.h>

#include <cmath>
#include <random>

#include "test_support.hpp"

namespace tack {
namespace {

constexpr int64_t kLanes = 256;

Module suite() {
  return Module::from_file(test::kernels_dir() + "/workgroups.py");
}

// The devices of backends with workgroups that can run here (OpenCL when it has a device).
class WorkgroupSuite : public testing::Test {
 protected:
  void SetUp() override {
    for (const BackendStatus& s : backend_status()) {
      if (!s.available) {
        why_ += fmt::format("{}: {}; ", s.name, s.reason);
        continue;
      }
      Device d = device(s.name);
      if (d.backend().supports_workgroups) devices_.push_back(d);
    }
    if (devices_.empty()) GTEST_SKIP() << "no available backend has workgroups: " << why_;
  }
  std::vector<Device> devices_;
  std::string why_;
};

template <typename T>
Array upload(const std::vector<T>& v, const Shape& shape, const Device& d) {
  Array a = empty(shape, dtype_of<T>(), &d);
  copyto(a, v);
  return a;
}

std::vector<float> random_floats(size_t n, float lo, float hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

std::vector<int32_t> random_ints(size_t n, int32_t lo, int32_t hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> dist(lo, hi);
  std::vector<int32_t> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// The tree of block_sum/min/max: for h = 128, 64, ..., 1, lane l < h sets v[l] = v[l] op v[l + h].
template <typename T, typename Op>
T tree(std::vector<T> v, Op op) {
  for (size_t h = v.size() / 2; h >= 1; h /= 2)
    for (size_t l = 0; l < h; ++l) v[l] = op(v[l], v[l + h]);
  return v[0];
}

// Hillis-Steele: for d = 1, 2, ..., 128, lane l >= d sets v[l] = v[l - d] + v[l] (all at once).
template <typename T>
std::vector<T> hillis_steele(std::vector<T> v) {
  for (size_t d = 1; d < v.size(); d *= 2) {
    std::vector<T> next = v;
    for (size_t l = d; l < v.size(); ++l) next[l] = v[l - d] + v[l];
    v = next;
  }
  return v;
}

template <typename T>
std::vector<T> group_of(const std::vector<T>& x, int64_t g) {
  return std::vector<T>(x.begin() + g * kLanes, x.begin() + (g + 1) * kLanes);
}

// NaN-propagating min and max, as the language's min/max (NumPy's minimum/maximum).
float fmin_nan(float a, float b) {
  return std::isnan(a) || std::isnan(b) ? NAN : (b < a ? b : a);
}
float fmax_nan(float a, float b) {
  return std::isnan(a) || std::isnan(b) ? NAN : (b > a ? b : a);
}

// Python's floor modulo for integers.
int32_t floor_mod(int32_t a, int32_t b) {
  int32_t r = a % b;
  return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}

bool same_bits(float a, float b) {
  return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b));
}

TEST_F(WorkgroupSuite, ReverseTilesReversesEachGroup) {
  const int64_t n = 4 * kLanes;
  auto x = random_floats(n, -10, 10, 1);
  for (const Device& d : devices_) {
    Array ax = upload(x, {n}, d), out = zeros({n}, f32, &d);
    suite().kernel("reverse_tiles")(ax, out);
    auto r = out.to_vector<float>();
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(r[i], x[(i / kLanes) * kLanes + (kLanes - 1 - i % kLanes)]) << d.name() << " " << i;
  }
}

TEST_F(WorkgroupSuite, BlockReductionsOfFloatsFollowTheTree) {
  const int64_t n = 8 * kLanes;
  auto x = random_floats(n, -100, 100, 2);
  x[300] = NAN;  // group 1's min and max are NaN, its sum too
  for (const Device& d : devices_) {
    Array ax = upload(x, {n}, d);
    Array sums = zeros({n}, f32, &d), mins = zeros({n}, f32, &d), maxs = zeros({n}, f32, &d);
    suite().kernel("block_reductions")(ax, sums, mins, maxs);
    auto s = sums.to_vector<float>(), lo = mins.to_vector<float>(), hi = maxs.to_vector<float>();
    for (int64_t g = 0; g < n / kLanes; ++g) {
      auto v = group_of(x, g);
      float want_sum = tree(v, [](float a, float b) { return a + b; });
      float want_min = tree(v, fmin_nan), want_max = tree(v, fmax_nan);
      for (int64_t l = 0; l < kLanes; ++l) {
        int64_t i = g * kLanes + l;
        ASSERT_TRUE(same_bits(s[i], want_sum)) << d.name() << " " << i << ": " << s[i];
        ASSERT_TRUE(same_bits(lo[i], want_min)) << d.name() << " " << i;
        ASSERT_TRUE(same_bits(hi[i], want_max)) << d.name() << " " << i;
      }
    }
    EXPECT_TRUE(std::isnan(s[256]) && std::isnan(lo[511]) && std::isnan(hi[300]));
  }
}

TEST_F(WorkgroupSuite, BlockReductionsOfIntegersWrap) {
  const int64_t n = 2 * kLanes;
  auto x = random_ints(n, -1000, 1000, 3);
  x[7] = 2147483647;  // the sum of group 0 wraps
  x[8] = 2147483647;
  for (const Device& d : devices_) {
    Array ax = upload(x, {n}, d);
    Array sums = zeros({n}, i32, &d), mins = zeros({n}, i32, &d), maxs = zeros({n}, i32, &d);
    suite().kernel("block_reductions")(ax, sums, mins, maxs);
    auto s = sums.to_vector<int32_t>(), lo = mins.to_vector<int32_t>(),
         hi = maxs.to_vector<int32_t>();
    for (int64_t g = 0; g < n / kLanes; ++g) {
      uint32_t sum = 0;
      int32_t mn = INT32_MAX, mx = INT32_MIN;
      for (int32_t v : group_of(x, g)) {
        sum += static_cast<uint32_t>(v);
        mn = std::min(mn, v);
        mx = std::max(mx, v);
      }
      for (int64_t l = 0; l < kLanes; ++l) {
        int64_t i = g * kLanes + l;
        ASSERT_EQ(s[i], static_cast<int32_t>(sum)) << d.name() << " " << i;
        ASSERT_EQ(lo[i], mn) << d.name() << " " << i;
        ASSERT_EQ(hi[i], mx) << d.name() << " " << i;
      }
    }
  }
}

TEST_F(WorkgroupSuite, BlockScanIsHillisSteele) {
  const int64_t n = 4 * kLanes;
  auto x = random_floats(n, -1, 1, 4);
  auto xi = random_ints(n, -50, 50, 5);
  for (const Device& d : devices_) {
    Array ax = upload(x, {n}, d), out = zeros({n}, f32, &d);
    suite().kernel("block_prefix")(ax, out);
    Array axi = upload(xi, {n}, d), outi = zeros({n}, i32, &d);
    suite().kernel("block_prefix")(axi, outi);
    auto r = out.to_vector<float>();
    auto ri = outi.to_vector<int32_t>();
    for (int64_t g = 0; g < n / kLanes; ++g) {
      auto want = hillis_steele(group_of(x, g));
      int32_t running = 0;
      for (int64_t l = 0; l < kLanes; ++l) {
        int64_t i = g * kLanes + l;
        ASSERT_TRUE(same_bits(r[i], want[l])) << d.name() << " " << i;
        running += xi[i];
        ASSERT_EQ(ri[i], running) << d.name() << " " << i;
      }
    }
  }
}

TEST_F(WorkgroupSuite, TiledMatmulMatchesTheSequentialProduct) {
  const int64_t m = 48, k = 64, n = 32;
  auto a = random_floats(m * k, -1, 1, 6), b = random_floats(k * n, -1, 1, 7);
  // The kernel accumulates a[row, k] * b[k, col] over k in order (16 at a time from shared
  // tiles), with no contraction into FMAs: the same bits as this loop.
  std::vector<float> want(m * n);
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < n; ++c) {
      float acc = 0.0f;
      for (int64_t kk = 0; kk < k; ++kk) acc += a[r * k + kk] * b[kk * n + c];
      want[r * n + c] = acc;
    }
  for (const Device& d : devices_) {
    Array aa = upload(a, {m, k}, d), ab = upload(b, {k, n}, d), c = zeros({m, n}, f32, &d);
    suite().kernel("matmul_tiled")(aa, ab, c);
    auto r = c.to_vector<float>();
    for (int64_t i = 0; i < m * n; ++i) ASSERT_EQ(r[i], want[i]) << d.name() << " " << i;
  }
}

TEST_F(WorkgroupSuite, CollectivesInsideASequentialLoop) {
  const int64_t n = 3 * kLanes;
  const int32_t rounds = 5;
  auto x = random_ints(n, 0, 9, 8);
  std::vector<int32_t> want(n);
  for (int64_t g = 0; g < n / kLanes; ++g) {
    auto v = group_of(x, g);
    for (int32_t r = 0; r < rounds; ++r) {
      int32_t total = 0;
      for (int32_t e : v) total += e;
      for (auto& e : v) e = total > 1000 ? floor_mod(e, 7) : e + floor_mod(total, 5);
    }
    std::copy(v.begin(), v.end(), want.begin() + g * kLanes);
  }
  for (const Device& d : devices_) {
    Array ax = upload(x, {n}, d), out = zeros({n}, i32, &d);
    suite().kernel("iterated_sums")(ax, out, rounds);
    EXPECT_EQ(out.to_vector<int32_t>(), want) << d.name();
  }
}

TEST_F(WorkgroupSuite, SharedHistogramCountsWithAtomicsBetweenBarriers) {
  const int64_t n = 4 * kLanes;
  auto values = random_ints(n, 0, 1000, 9);
  std::vector<int32_t> want(16, 0);
  for (int32_t v : values) ++want[v % 16];
  for (const Device& d : devices_) {
    Array av = upload(values, {n}, d), counts = zeros({16}, i32, &d);
    suite().kernel("shared_histogram")(av, counts);
    EXPECT_EQ(counts.to_vector<int32_t>(), want) << d.name();
  }
}

// Kernels without collectives (shared memory and the ids only) run any count: the last group is
// partial.
TEST_F(WorkgroupSuite, PartialGroupsWithoutCollectives) {
  const int64_t n = 300;
  auto x = random_floats(n, -5, 5, 10);
  for (const Device& d : devices_) {
    Array lanes = zeros({n}, i32, &d), groups = zeros({n}, i64, &d), sizes = zeros({n}, i32, &d);
    suite().kernel("lane_ids")(lanes, groups, sizes);
    auto l = lanes.to_vector<int32_t>();
    auto g = groups.to_vector<int64_t>();
    auto s = sizes.to_vector<int32_t>();
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(l[i], i % kLanes) << d.name() << " " << i;
      ASSERT_EQ(g[i], i / kLanes) << d.name() << " " << i;
      ASSERT_EQ(s[i], kLanes) << d.name() << " " << i;
    }
    Array ax = upload(x, {n}, d), out = zeros({n}, f32, &d);
    suite().kernel("shared_scratch")(ax, out);
    auto r = out.to_vector<float>();
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(r[i], x[i] * 2.0f + 1.0f) << d.name() << " " << i;
  }
}

// A kernel with collectives launched on a count that is not whole groups is refused before it
// runs: a ValueError naming the kernel, and nothing written.
TEST_F(WorkgroupSuite, CollectivesOnAPartialGroupAreRefusedBeforeRunning) {
  const int64_t n = 300;
  for (const Device& d : devices_) {
    Array x = ones({n}, f32, &d);
    Array sums = full({n}, -7, f32, &d), mins = full({n}, -7, f32, &d),
          maxs = full({n}, -7, f32, &d);
    try {
      suite().kernel("block_reductions")(x, sums, mins, maxs);
      sync();
      FAIL() << d.name() << ": a partial group was launched";
    } catch (const ValueError& e) {
      std::string w = e.what();
      EXPECT_NE(w.find("kernel 'block_reductions'"), std::string::npos) << w;
      EXPECT_NE(w.find("multiple of 256"), std::string::npos) << w;
    }
    for (const Array* a : {&sums, &mins, &maxs})
      for (float v : a->to_vector<float>()) ASSERT_EQ(v, -7.0f) << d.name();
    // The same for barriers alone.
    Array out = full({n}, -7, f32, &d);
    EXPECT_THROW(suite().kernel("reverse_tiles")(x, out), ValueError);
    for (float v : out.to_vector<float>()) ASSERT_EQ(v, -7.0f) << d.name();
  }
}

// Debug mode in a workgroup kernel: an index past a shared array is skipped and recorded, and
// the violation surfaces at the next synchronization naming the kernel and the shared array.
TEST_F(WorkgroupSuite, ADebugViolationOnASharedArraySurfacesAtSync) {
  Module m = Module::from_source(
      "import tack\n@tack.kernel\ndef spill(x, out):\n    buf = tack.shared(tack.f32, 256)\n"
      "    for i in range(x.shape[0]):\n        t = tack.thread_id()\n"
      "        buf[t + 1] = x[i]\n        out[i] = x[i]\n",
      "spill.py");
  for (const Device& d : devices_) {
    Array x = ones({512}, f32, &d), out = zeros({512}, f32, &d);
    set_debug(true);
    m.kernel("spill")(x, out);
    set_debug(false);
    try {
      sync();
      ADD_FAILURE() << d.name() << ": sync() did not raise the violation";
    } catch (const IndexError& e) {
      std::string w = e.what();
      EXPECT_NE(w.find("spill.py:7:9: in kernel 'spill'"), std::string::npos) << w;
      EXPECT_NE(w.find("index [256] is out of bounds for array 'buf' of shape (256,)"),
                std::string::npos)
          << w;
    }
    for (float v : out.to_vector<float>()) ASSERT_EQ(v, 1.0f) << d.name();
  }
}

// The CPU has no workgroups: every kernel of the suite is refused before compilation, pointing
// at tack.local_array, and nothing is written.
TEST(WorkgroupSuiteOnCpu, EveryKernelIsRejected) {
  Device cpu = device("cpu");
  Module m = suite();
  Array x = ones({256}, f32, &cpu), out = full({256}, -7, f32, &cpu);
  Array m16 = ones({16, 16}, f32, &cpu);
  Array xi = ones({256}, i32, &cpu), counts = zeros({16}, i32, &cpu);
  Array lanes = zeros({256}, i32, &cpu), groups = zeros({256}, i64, &cpu);
  struct Call {
    const char* name;
    std::vector<Arg> args;
  };
  const Call calls[] = {
      {"reverse_tiles", {x, out}},    {"block_reductions", {x, out, out, out}},
      {"block_prefix", {x, out}},     {"matmul_tiled", {m16, m16, m16}},
      {"iterated_sums", {xi, xi, 3}}, {"lane_ids", {lanes, groups, lanes}},
      {"shared_scratch", {x, out}},   {"shared_histogram", {xi, counts}},
  };
  EXPECT_EQ(m.kernel_names().size(), std::size(calls));
  for (const Call& c : calls) {
    SCOPED_TRACE(c.name);
    try {
      m.kernel(c.name).call(c.args);
      ADD_FAILURE() << "ran on the CPU";
    } catch (const CompileError& e) {
      std::string w = e.what();
      EXPECT_EQ(e.kernel(), c.name) << w;
      EXPECT_NE(w.find("local_array"), std::string::npos) << w;
      EXPECT_NE(w.find("the CPU"), std::string::npos) << w;
    }
  }
  for (float v : out.to_vector<float>()) ASSERT_EQ(v, -7.0f);
}

}  // namespace
}  // namespace tack
