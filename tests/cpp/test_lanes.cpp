// Kernels that target the masks of the CPU's SIMD lanes (tests/kernels/lanes.py), against plain
// C++ references. The suite runs on the widened path and, as the ctest entry tack_tests_scalar,
// with TACK_CPU_SIMD=0 on the scalar one, so both give these bits.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <random>

#include "test_support.hpp"

namespace tack {
namespace {

Module lanes() {
  return Module::from_file(test::kernels_dir() + "/lanes.py");
}

// Every length up to two gangs of the widest gang (16 lanes, AVX-512 with 32-bit values) and one.
constexpr int64_t kMaxTail = 2 * 16 + 1;

template <typename T>
Array from(const std::vector<T>& v) {
  Array a = empty({static_cast<int64_t>(v.size())}, dtype_of<T>());
  copyto(a, v);
  return a;
}

bool simd_off() {
  const char* v = std::getenv("TACK_CPU_SIMD");
  return v && std::string(v) == "0";
}

TEST(Lanes, DivergentWhileExits) {
  for (int64_t n = 0; n <= kMaxTail; ++n) {
    std::vector<int64_t> x(n);
    for (int64_t i = 0; i < n; ++i) x[i] = 1 + (i * 37) % 101;
    Array out = zeros({n}, i64);
    lanes().kernel("collatz")(from(x), out);
    auto r = out.to_vector<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      int64_t v = x[i], steps = 0;
      while (v != 1 && steps < 500) {
        v = v % 2 == 0 ? v / 2 : 3 * v + 1;
        ++steps;
      }
      ASSERT_EQ(r[i], steps) << "n " << n << " i " << i;
    }
  }
}

TEST(Lanes, BreakAndContinueInNestedLoops) {
  const int64_t n = 203;
  std::vector<int64_t> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = (i * 13) % 23;
  Array out = zeros({n}, i64);
  lanes().kernel("nested_exits")(from(x), out);
  auto r = out.to_vector<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    int64_t s = 0;
    for (int64_t j = 0; j < x[i] % 9; ++j) {
      if (j == 3) continue;
      if ((i + j) % 5 == 4) break;
      for (int64_t k = 1; k <= j; ++k)
        if (k % 2 != 0) s += k * (j + 1);
    }
    EXPECT_EQ(r[i], s) << i;
  }
}

TEST(Lanes, StoresUnderDivergentIfs) {
  for (int64_t n : {int64_t{1}, int64_t{7}, int64_t{8}, int64_t{9}, int64_t{17}, int64_t{100}}) {
    std::vector<float> x(n);
    for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>((i * 29) % 11) - 5.5f;
    Array out = full({n}, -9.0), only = full({n}, -3.0);
    lanes().kernel("divergent_stores")(from(x), out, only);
    auto r = out.to_vector<float>(), o = only.to_vector<float>();
    for (int64_t i = 0; i < n; ++i) {
      float v = x[i];
      EXPECT_EQ(r[i], v > 0 ? v * 2.0f : v < -1.0f ? -v : 7.0f) << i;
      EXPECT_EQ(o[i], v > 0 ? v : -3.0f) << i;  // untouched where the store's lane was off
    }
  }
}

TEST(Lanes, GathersAndScattersFromComputedIndices) {
  const int64_t n = 77;
  std::vector<double> x(n);
  std::vector<int64_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  std::shuffle(idx.begin(), idx.end(), std::mt19937(7));
  for (int64_t i = 0; i < n; ++i) x[i] = std::sqrt(static_cast<double>(i) + 0.5);
  Array out = zeros({n}, f64), scattered = zeros({n}, f64);
  lanes().kernel("gathers")(from(x), from(idx), out, scattered);
  auto r = out.to_vector<double>(), s = scattered.to_vector<double>();
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(r[i], x[idx[i]] + x[(i * 7) % n] + x[0]) << i;
    EXPECT_EQ(s[idx[i]], x[i]) << i;
  }
}

TEST(Lanes, ConditionalExpressionReadsOnlyWhatItsLaneTakes) {
  for (int64_t n = 1; n <= kMaxTail; ++n) {
    std::vector<float> x(n);
    for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(i * i) * 0.25f;
    Array out = zeros({n}, f32);
    lanes().kernel("guarded_select")(from(x), out);
    auto r = out.to_vector<float>();
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(r[i], i + 1 < n ? x[i + 1] - x[i] : x[n - 1]) << n << " " << i;
  }
}

template <typename T>
void check_mixed() {
  const int64_t n = 45;
  std::vector<T> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<T>((i * 31) % 51);
  Array out = zeros({n}, dtype_of<T>());
  lanes().kernel("mixed")(from(x), out);
  auto r = out.to_vector<T>();
  for (int64_t i = 0; i < n; ++i) {
    T v = x[i], w = x[(i + 3) % n];
    T rr = v > w ? static_cast<T>(v - w) : static_cast<T>(w - v + 1);
    while (rr > 5) {
      if constexpr (std::is_floating_point_v<T>)
        rr = std::floor(rr / 2);
      else
        rr = static_cast<T>(rr / 2);
    }
    EXPECT_EQ(r[i], std::max(rr, std::min(v, w))) << dtype_name(dtype_of<T>()) << " " << i;
  }
}

TEST(Lanes, EveryDtype) {
  check_mixed<int8_t>();
  check_mixed<uint8_t>();
  check_mixed<int16_t>();
  check_mixed<uint16_t>();
  check_mixed<int32_t>();
  check_mixed<uint32_t>();
  check_mixed<int64_t>();
  check_mixed<uint64_t>();
  check_mixed<float>();
  check_mixed<double>();
}

TEST(Lanes, Bools) {
  const int64_t n = 29;
  auto a = std::make_unique<bool[]>(n), b = std::make_unique<bool[]>(n);
  auto got = std::make_unique<bool[]>(n);
  for (int64_t i = 0; i < n; ++i) {
    a[i] = (i * 5) % 3 == 1;
    b[i] = (i * 7) % 4 < 2;
  }
  Array aa = empty({n}, bool_), bb = empty({n}, bool_), out = empty({n}, bool_);
  copyto(aa, std::span<const bool>(a.get(), n));
  copyto(bb, std::span<const bool>(b.get(), n));
  lanes().kernel("bools")(aa, bb, out);
  copyto(std::span<bool>(got.get(), n), out);
  for (int64_t i = 0; i < n; ++i) EXPECT_EQ(got[i], (a[i] && !b[i]) || (i % 3 == 0 && b[i])) << i;
}

TEST(Lanes, LaunchesThatStartMidGangAndEveryTail) {
  for (int64_t n = 0; n <= kMaxTail; ++n) {
    for (int64_t s : {int64_t{0}, int64_t{1}, int64_t{3}, int64_t{5}, int64_t{9}}) {
      std::vector<int64_t> x(n);
      for (int64_t i = 0; i < n; ++i) x[i] = i * 11 - 40;
      Array out = full({n}, -1.0, i64), odd = full({n}, -1.0, i64);
      lanes().kernel("from_start")(s, from(x), out);
      lanes().kernel("every_other")(s, from(x), odd);
      auto r = out.to_vector<int64_t>(), o = odd.to_vector<int64_t>();
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(r[i], i >= s ? x[i] * 3 + i : -1) << n << " " << s << " " << i;
        ASSERT_EQ(o[i], i >= s && (i - s) % 2 == 0 ? x[i] + 1 : -1) << n << " " << s << " " << i;
      }
    }
  }
}

TEST(Lanes, RowsOfEveryWidth) {
  for (int64_t w : {int64_t{1}, int64_t{5}, int64_t{8}, int64_t{13}, int64_t{16}, int64_t{35}}) {
    const int64_t h = 3;
    std::vector<float> x(h * w);
    for (int64_t k = 0; k < h * w; ++k) x[k] = static_cast<float>((k * 17) % 40) * 0.75f;
    Array xa = empty({h, w}, f32), out = zeros({h, w}, i64);
    copyto(xa, x);
    lanes().kernel("rows")(xa, out);
    auto r = out.to_vector<int64_t>();
    for (int64_t i = 0; i < h; ++i)
      for (int64_t j = 0; j < w; ++j) {
        float v = x[i * w + j];
        int64_t steps = 0;
        while (v > 1.0f) {
          v *= 0.5f;
          ++steps;
        }
        EXPECT_EQ(r[i * w + j], steps + i * 100) << w << " " << i << " " << j;
      }
  }
}

// Few iterations run on one thread, in order: the old values count up with the index.
TEST(Lanes, AtomicsReturnOldValuesUnderAMask) {
  const int64_t n = 40;
  std::vector<int64_t> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = (i * 7) % 10;
  Array out = full({n}, -1.0, i64), counter = zeros({1}, i64);
  lanes().kernel("marked")(from(x), out, counter);
  auto r = out.to_vector<int64_t>();
  int64_t next = 0;
  for (int64_t i = 0; i < n; ++i) EXPECT_EQ(r[i], x[i] % 3 == 0 ? next++ : -1) << i;
  EXPECT_EQ(counter.to_vector<int64_t>()[0], next);
}

TEST(Lanes, TranscendentalsHaveTheScalarBits) {
  const int64_t n = 37;
  std::vector<float> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(i) * 0.07f;
  Array out = zeros({n}, f32);
  lanes().kernel("transcendental")(from(x), out);
  auto r = out.to_vector<float>();
  for (int64_t i = 0; i < n; ++i) {
    float v = x[i];
    float want = v > 0.5f ? std::sin(v) + std::exp(v * 0.1f) : std::cos(v) * std::log(v + 2.0f);
    EXPECT_EQ(r[i], want) << i;
  }
}

TEST(Lanes, EarlyReturnFromAFunctionInALoop) {
  std::vector<int64_t> table = {1, 4, 4, 9, 16, 25, 36, 49};
  const int64_t n = 23;
  std::vector<int64_t> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = i * 3 - 5;
  Array out = zeros({n}, i64);
  lanes().kernel("search")(from(table), from(x), out);
  auto r = out.to_vector<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    int64_t want = -1;
    for (size_t k = 0; k < table.size(); ++k)
      if (table[k] >= x[i]) {
        want = static_cast<int64_t>(k);
        break;
      }
    EXPECT_EQ(r[i], want) << i;
  }
}

TEST(Lanes, PrintWritesLinesInIterationOrder) {
  const int64_t n = 37;
  std::vector<int64_t> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = (i * 5) % 7;
  testing::internal::CaptureStdout();
  lanes().kernel("printed")(from(x));
  std::fflush(stdout);
  std::string out = testing::internal::GetCapturedStdout();
  std::string want;
  for (int64_t i = 0; i < n; ++i)
    if (x[i] % 2 == 0) want += "lane " + std::to_string(i) + " " + std::to_string(x[i]) + "\n";
  EXPECT_EQ(out, want);
}

// Lanes leave the while loop at different times; each active lane takes its ticket in lane order,
// one round of the loop after another (the widened order; the scalar path finishes each iteration
// first). Both hand out every ticket exactly once, so the sum of all is fixed.
TEST(Lanes, AtomicsInADivergentLoopHandOutEveryTicketOnce) {
  const int64_t n = 45;
  std::vector<int64_t> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = (i * 3) % 5;
  Array out = zeros({n}, i64), counter = zeros({1}, i64);
  lanes().kernel("tickets")(from(x), out, counter);
  auto r = out.to_vector<int64_t>();
  int64_t tickets = 0, sum = 0;
  for (int64_t i = 0; i < n; ++i) tickets += x[i];
  for (int64_t v : r) sum += v;
  EXPECT_EQ(counter.to_vector<int64_t>()[0], tickets);
  EXPECT_EQ(sum, tickets * (tickets - 1) / 2);
}

// Whether every launch with elements streams its stores (TACK_CPU_STREAM_BYTES=0, as ctest's
// tack_tests_streamed_stores runs); otherwise arrays as small as these tests' never do.
bool every_launch_streams() {
  const char* v = std::getenv("TACK_CPU_STREAM_BYTES");
  return v && std::string(v) == "0";
}

const char* kStreamedStores =
    "import tack\n@tack.kernel\ndef k(a, x, y, out):\n    for i in range(x.shape[0]):\n"
    "        out[i] = a * x[i] + y[i]\n"
    "@tack.kernel\ndef masked(x, out):\n    for i in range(x.shape[0]):\n"
    "        if x[i] > 0.0:\n            out[i] = x[i]\n";

// A whole gang's contiguous store once per iteration has a streamed form (a non-temporal store of
// the aligned vector, then a store fence before the chunk returns), in a build of its own that
// launches whose arrays are larger than the caches run; the other build stores plainly, with no
// test of a flag, and both say that the kernel has such stores (abi.hpp). A store under a varying
// `if` has no streamed form. inspect shows the build a launch with its arguments would run.
TEST(CpuCodegen, WholeGangStoresHaveAStreamedForm) {
  if (simd_off()) GTEST_SKIP() << "streamed stores are the widened path's";
  Module m = Module::from_source(kStreamedStores);
  const bool streams = every_launch_streams();
  Array x = empty({16}, f32);
  std::string ir = inspect(m.kernel("k"), InspectMode::Source, 2.0f, x, x, x);
  EXPECT_EQ(ir.find("!nontemporal") != std::string::npos, streams) << ir;
  EXPECT_EQ(ir.find("@llvm.x86.sse.sfence") != std::string::npos, streams) << ir;
  EXPECT_NE(ir.find("_streams = "), std::string::npos) << ir;
  // Nothing to stream in a launch without elements: the plain build.
  Array none = empty({0}, f32);
  std::string plain = inspect(m.kernel("k"), InspectMode::Source, 2.0f, none, none, none);
  EXPECT_EQ(plain.find("!nontemporal"), std::string::npos) << plain;
  EXPECT_NE(plain.find("_streams = "), std::string::npos) << plain;
  std::string masked = inspect(m.kernel("masked"), InspectMode::Source, x, x);
  EXPECT_EQ(masked.find("!nontemporal"), std::string::npos) << masked;
  EXPECT_EQ(masked.find("_streams = "), std::string::npos) << masked;
}

// A launch that streams runs the streaming build, compiled when a launch first needs it; a kernel
// without stores to stream has one build for both kinds of launch. The results are the same bits.
TEST(CpuCodegen, StreamingLaunchesHaveTheirOwnBuildWhereItDiffers) {
  if (simd_off()) GTEST_SKIP() << "streamed stores are the widened path's";
  if (!every_launch_streams())
    GTEST_SKIP() << "needs launches that stream: tack_tests_streamed_stores runs it with "
                    "TACK_CPU_STREAM_BYTES=0";
  Module m = Module::from_source(kStreamedStores);
  std::vector<float> xs(37), ys(37);
  for (int i = 0; i < 37; ++i) {
    xs[i] = 0.5f * static_cast<float>(i) - 4.0f;
    ys[i] = static_cast<float>(i * i) / 7.0f;
  }
  Kernel k = m.kernel("k");
  Array none = empty({0}, f32);
  k(2.0f, none, empty({0}, f32), empty({0}, f32));  // nothing to stream: the plain build
  Array out = zeros({37}, f32);
  k(2.0f, from(xs), from(ys), out);
  std::vector<float> got = out.to_vector<float>();
  for (int i = 0; i < 37; ++i) EXPECT_EQ(got[i], 2.0f * xs[i] + ys[i]) << i;
  ASSERT_EQ(k.variants().size(), 1u);
  const std::string both = k.variants()[0].origin;
  EXPECT_EQ(std::count(both.begin(), both.end(), ','), 1) << both;
  EXPECT_NE(both.find("(no-alias) (streamed stores)"), std::string::npos) << both;

  Kernel masked = m.kernel("masked");
  masked(none, empty({0}, f32));
  Array masked_out = zeros({37}, f32);
  masked(from(xs), masked_out);
  got = masked_out.to_vector<float>();
  for (int i = 0; i < 37; ++i) EXPECT_EQ(got[i], xs[i] > 0.0f ? xs[i] : 0.0f) << i;
  ASSERT_EQ(masked.variants().size(), 1u);
  const std::string one = masked.variants()[0].origin;
  EXPECT_EQ(one.find(','), std::string::npos) << one;
  EXPECT_EQ(one.find("streamed"), std::string::npos) << one;
}

// `tack emit --backend cpu --stage optimized` and inspect say which path a kernel took and why.
TEST(CpuCodegen, InspectSaysWhichPathTheChunkTook) {
  Module m = Module::from_file(std::string(TACK_TEST_KERNELS_DIR) + "/../../examples/kernels.py");
  Array out = empty({0, 0}, i32);
  std::string ir = inspect(m.kernel("mandelbrot"), InspectMode::Optimized, out, -2.0f, -1.0f, 0.01f,
                           0.01f, int32_t{10});
  std::string local_ir = inspect(
      Module::from_source("import tack\n@tack.kernel\ndef k(x):\n    for i in range(x.shape[0]):\n"
                          "        b = tack.local_array(tack.f32, 4)\n        b[1] = x[i]\n"
                          "        x[i] = b[1] + b[0]\n")
          .kernel("k"),
      InspectMode::Optimized, empty({0}, f32));
  if (simd_off()) {
    EXPECT_NE(ir.find("; tack cpu chunk: scalar: SIMD lanes are off"), std::string::npos)
        << ir.substr(0, 200);
    return;
  }
  EXPECT_NE(local_ir.find("; tack cpu chunk: scalar: 'b' is a local array"), std::string::npos)
      << local_ir.substr(0, 200);
  // Each lane would sum its own chunk through gathers: the scalar path walks chunks in order.
  std::string chunked_ir = inspect(
      Module::from_source("import tack\n@tack.kernel\ndef k(x, out):\n"
                          "    for c in range(out.shape[0]):\n        s = 0.0\n"
                          "        for i in range(c * 64, c * 64 + 64):\n            s += x[i]\n"
                          "        out[c] = s\n")
          .kernel("k"),
      InspectMode::Optimized, empty({0}, f32), empty({0}, f32));
  EXPECT_NE(chunked_ir.find("; tack cpu chunk: scalar: line 7: a gather in a loop"),
            std::string::npos)
      << chunked_ir.substr(0, 200);
  EXPECT_NE(ir.find("; tack cpu chunk: widened"), std::string::npos) << ir.substr(0, 200);
  // The while loop's arithmetic runs on a vector of lanes.
  EXPECT_NE(ir.find("fmul <"), std::string::npos) << ir;
  EXPECT_NE(ir.find("fadd <"), std::string::npos) << ir;
}

}  // namespace
}  // namespace tack
