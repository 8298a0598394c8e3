// Array::sum/min/max/mean on every available device: tack::algorithms' reductions, computed on the
// device in the order of the language's scalar reductions (docs/language.md, "Reductions"),
// checked bit for bit against that order computed in plain C++ here and within a tolerance
// against a double sum. Also integer accumulators, NaN, empty arrays, views and the cache.
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <random>

#include "test_support.hpp"

namespace tack {
namespace {

using test::available_devices;
using test::upload;

// The documented order: lane j of block b adds elements b*4096 + j + 16m in turn from -0.0; each
// block's 16 lanes by the tree of steps 8, 4, 2, 1; the blocks pairwise, level by level; then
// -0.0 + that.
template <typename T>
T documented_sum(const std::vector<T>& x) {
  constexpr size_t kLanes = 16, kBlock = 4096;
  std::vector<T> p;
  for (size_t b = 0; b * kBlock < x.size(); ++b) {
    T v[kLanes];
    for (size_t j = 0; j < kLanes; ++j) {
      v[j] = T(-0.0);
      for (size_t g = b * kBlock + j; g < std::min(x.size(), (b + 1) * kBlock); g += kLanes)
        v[j] = v[j] + x[g];
    }
    for (size_t h = kLanes / 2; h >= 1; h /= 2)
      for (size_t l = 0; l < h; ++l) v[l] = v[l] + v[l + h];
    p.push_back(v[0]);
  }
  while (p.size() > 1) {
    std::vector<T> next;
    for (size_t i = 0; i + 1 < p.size(); i += 2) next.push_back(p[i] + p[i + 1]);
    if (p.size() % 2) next.push_back(p.back());
    p = next;
  }
  return p.empty() ? T(-0.0) : T(-0.0) + p[0];
}

std::vector<float> random_floats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

TEST(Reductions, EveryBackendReducesOnItsDevice) {
  for (const Device& d : available_devices())
    EXPECT_TRUE(d.backend().supports_device_reductions) << d.name();
}

TEST(Reductions, FloatSumsFollowTheDocumentedOrder) {
  for (const Device& d : available_devices()) {
    // One block, a partial one, several, and an odd number of them.
    for (size_t n : {1, 5, 255, 4096, 4097, 20000, 65537}) {
      SCOPED_TRACE(fmt::format("{} n={}", d.name(), n));
      auto x = random_floats(n, static_cast<unsigned>(n));
      double exact = 0;
      for (float v : x) exact += v;
      Array a = upload(x, d);
      double s = a.sum();
      EXPECT_NEAR(s, exact, 1e-5 * static_cast<double>(n));
      // f32 accumulation in the documented order: these exact bits.
      EXPECT_EQ(s, static_cast<double>(documented_sum(x)));
      // NumPy's f32 mean: the f32 sum divided in f32.
      EXPECT_EQ(a.mean(), static_cast<float>(s) / static_cast<float>(n));
      float lo = x[0], hi = x[0];
      for (float v : x) lo = std::min(lo, v), hi = std::max(hi, v);
      EXPECT_EQ(a.min(), lo);
      EXPECT_EQ(a.max(), hi);
    }
  }
}

TEST(Reductions, F64SumsInF64) {
  for (const Device& d : available_devices()) {
    if (!d.backend().supports_f64()) continue;
    std::vector<double> x(3000);
    for (size_t i = 0; i < x.size(); ++i) x[i] = 1.0 / static_cast<double>(i + 1);
    Array a = upload(x, d);
    double want = documented_sum(x);
    EXPECT_EQ(a.sum(), want) << d.name();
    EXPECT_EQ(a.max(), 1.0) << d.name();
    EXPECT_EQ(a.min(), 1.0 / 3000) << d.name();
  }
}

TEST(Reductions, IntegerSumsAccumulateIn64Bits) {
  for (const Device& d : available_devices()) {
    SCOPED_TRACE(d.name());
    // i32 values whose sum leaves i32: an i64 accumulator gets it exactly.
    std::vector<int32_t> big(1000, 2000000000);
    big[3] = -7;
    EXPECT_EQ(upload(big, d).sum(), 999.0 * 2000000000 - 7);
    // u8: the u64 accumulator, not a wrapping u8.
    std::vector<uint8_t> bytes(700, 255);
    EXPECT_EQ(upload(bytes, d).sum(), 700.0 * 255);
    EXPECT_EQ(upload(bytes, d).mean(), 255.0);
    // bool counts its true elements.
    Array flags = zeros({600}, DType::Bool, &d);
    flags.rows(100, 400).fill(1);
    EXPECT_EQ(flags.sum(), 300.0);
    EXPECT_EQ(flags.max(), 1.0);
    EXPECT_EQ(flags.min(), 0.0);
    // i64 and u64, with values beyond 32 bits.
    std::vector<int64_t> wide = {int64_t(1) << 40, -(int64_t(1) << 41), 5};
    EXPECT_EQ(upload(wide, d).sum(), -(1LL << 40) + 5.0);
    EXPECT_EQ(upload(wide, d).min(), -(1LL << 41) * 1.0);
    std::vector<int64_t> extremes = {INT64_MIN, 0, 1};
    EXPECT_EQ(upload(extremes, d).min(), -9223372036854775808.0);
    std::vector<uint64_t> uwide = {uint64_t(1) << 63, 3};
    EXPECT_EQ(upload(uwide, d).max(), 9223372036854775808.0);
    EXPECT_EQ(upload(uwide, d).min(), 3.0);
    std::vector<int16_t> shorts = {-300, 200, -32768, 32767};
    EXPECT_EQ(upload(shorts, d).min(), -32768.0);
    EXPECT_EQ(upload(shorts, d).max(), 32767.0);
    EXPECT_EQ(upload(shorts, d).sum(), -101.0);
  }
}

TEST(Reductions, NanPropagatesAndInfinitiesCount) {
  for (const Device& d : available_devices()) {
    SCOPED_TRACE(d.name());
    std::vector<float> x(1000, 1.0f);
    x[777] = NAN;
    Array a = upload(x, d);
    EXPECT_TRUE(std::isnan(a.sum()));
    EXPECT_TRUE(std::isnan(a.min()));
    EXPECT_TRUE(std::isnan(a.max()));
    EXPECT_TRUE(std::isnan(a.mean()));
    std::vector<float> inf = {1.0f, INFINITY, -2.0f};
    EXPECT_EQ(upload(inf, d).max(), INFINITY);
    EXPECT_EQ(upload(inf, d).min(), -2.0);
    EXPECT_EQ(upload(inf, d).sum(), INFINITY);
    std::vector<float> both = {INFINITY, -INFINITY};
    EXPECT_TRUE(std::isnan(upload(both, d).sum()));
    // -0.0 alone sums to -0.0, as in NumPy (the lanes start at -0.0, the identity of addition).
    std::vector<float> negzero = {-0.0f};
    EXPECT_TRUE(std::signbit(upload(negzero, d).sum())) << "on " << d.name();
  }
}

TEST(Reductions, EmptyArrays) {
  for (const Device& d : available_devices()) {
    Array e = zeros({0}, f32, &d);
    EXPECT_EQ(e.sum(), 0.0) << d.name();
    EXPECT_THROW(e.min(), ValueError);
    EXPECT_THROW(e.max(), ValueError);
    EXPECT_TRUE(std::isnan(e.mean()));  // NumPy's NaN
    EXPECT_EQ(zeros({0, 4}, i32, &d).sum(), 0.0);
  }
}

TEST(Reductions, ViewsAndShapesReduceTheirOwnElements) {
  for (const Device& d : available_devices()) {
    SCOPED_TRACE(d.name());
    std::vector<int32_t> x(3 * 301);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int32_t>(i);
    Array m = upload(x, d).reshape({3, 301});
    EXPECT_EQ(m.sum(), 903.0 * 902 / 2);
    // A row starting at a byte offset OpenCL cannot pass as a sub-buffer (301 * 4 bytes).
    Array row = m.rows(1, 2);
    double want = 0;
    for (int i = 301; i < 602; ++i) want += i;
    EXPECT_EQ(row.sum(), want);
    EXPECT_EQ(row.min(), 301.0);
    EXPECT_EQ(row.max(), 601.0);
    Array scalar = full({}, 4.5, f32, &d);
    EXPECT_EQ(scalar.sum(), 4.5);
  }
}

TEST(Reductions, DeviceReductionsCompileOncePerDtype) {
  for (const Device& d : available_devices()) {
    Array a = full({1000}, 2, f32, &d);
    EXPECT_EQ(a.sum(), 2000.0);  // compiles (or loads) the f32 pass
    uint64_t compiles = cache_stats().compiles;
    Array b = full({5000}, 3, f32, &d);
    EXPECT_EQ(b.sum(), 15000.0);
    EXPECT_EQ(cache_stats().compiles, compiles) << "a second sum of f32 compiled again";
  }
}

// A reduction reads its result, so it is a synchronization: an error of earlier queued work
// surfaces there naming its kernel.
TEST(Reductions, AnEarlierErrorSurfacesAtTheReduction) {
  for (const Device& d : available_devices()) {
    if (!d.backend().asynchronous) continue;
    Module m = Module::from_source(
        "import tack\n@tack.kernel\ndef shift(x, out):\n    for i in range(x.shape[0]):\n"
        "        out[i + 1] = x[i]\n",
        "shift.py");
    Array x = arange(8, f32, &d), out = zeros({8}, f32, &d);
    set_debug(true);
    m.kernel("shift")(x, out);
    set_debug(false);
    try {
      out.sum();
      ADD_FAILURE() << "sum() did not raise the queued violation";
    } catch (const IndexError& e) {
      EXPECT_NE(std::string(e.what()).find("in kernel 'shift'"), std::string::npos) << e.what();
    }
    EXPECT_EQ(out.sum(), 21.0);  // raised once; the in-bounds stores happened
  }
}

}  // namespace
}  // namespace tack
