// tack::algorithms on every available device, against answers computed here in plain C++: the
// reductions over each dtype, scans in their documented block order (bit for bit), histograms,
// errors, and the same bits on the CPU and OpenCL.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "tack/algorithms.hpp"
#include "test_support.hpp"

namespace tack {
namespace {

namespace al = algorithms;

using test::available_devices;
using test::upload;

template <typename T>
std::vector<T> random_values(size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> v(n);
  for (auto& x : v) {
    if constexpr (std::is_floating_point_v<T>)
      x = static_cast<T>(std::uniform_real_distribution<double>(-100, 100)(rng));
    else
      x = static_cast<T>(rng());
  }
  return v;
}

const std::vector<size_t> kSizes = {1, 2, 17, 4095, 4096, 4097, 3 * 4096 + 5, 70001};

template <typename T>
void check_integer_reductions(const Device& d) {
  using Acc = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
  for (size_t n : kSizes) {
    SCOPED_TRACE(fmt::format("{} {} n={}", d.name(), dtype_name(dtype_of<T>()), n));
    auto x = random_values<T>(n, static_cast<unsigned>(n));
    Array a = upload(x, d);
    uint64_t sum = 0, dot = 0, absmax = 0;
    T lo = x[0], hi = x[0];
    int64_t nonzero = 0;
    for (T v : x) {
      sum += static_cast<uint64_t>(static_cast<Acc>(v));  // wrapping, as the accumulator does
      dot +=
          static_cast<uint64_t>(static_cast<Acc>(v)) * static_cast<uint64_t>(static_cast<Acc>(v));
      uint64_t mag = std::is_signed_v<T> && static_cast<Acc>(v) < 0
                         ? uint64_t{0} - static_cast<uint64_t>(static_cast<Acc>(v))
                         : static_cast<uint64_t>(static_cast<Acc>(v));
      absmax = std::max(absmax, mag);
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      nonzero += v != 0;
    }
    Scalar s = al::sum(a);
    EXPECT_EQ(s.dtype, std::is_signed_v<T> ? DType::I64 : DType::U64);
    EXPECT_EQ(static_cast<uint64_t>(s.int_value), sum);
    EXPECT_EQ(static_cast<uint64_t>(al::dot(a, a).int_value), dot);
    EXPECT_EQ(al::min(a).as<Acc>(), static_cast<Acc>(lo));
    EXPECT_EQ(al::max(a).as<Acc>(), static_cast<Acc>(hi));
    EXPECT_EQ(static_cast<uint64_t>(al::absmax(a).int_value), absmax);
    EXPECT_EQ(al::count_nonzero(a), nonzero);
    double fsum = 0, fabs_sum = 0;
    for (T v : x) fsum += static_cast<double>(v), fabs_sum += std::fabs(static_cast<double>(v));
    // Integers are averaged in f64, as NumPy does.
    EXPECT_NEAR(al::mean(a), fsum / static_cast<double>(n),
                1e-12 * fabs_sum / static_cast<double>(n));
  }
}

TEST(Algorithms, IntegerReductionsAreExact) {
  for (const Device& d : available_devices()) {
    check_integer_reductions<int8_t>(d);
    check_integer_reductions<uint8_t>(d);
    check_integer_reductions<int16_t>(d);
    check_integer_reductions<int32_t>(d);
    check_integer_reductions<uint32_t>(d);
    check_integer_reductions<int64_t>(d);
    check_integer_reductions<uint64_t>(d);
  }
}

TEST(Algorithms, ExtremeIntegers) {
  for (const Device& d : available_devices()) {
    SCOPED_TRACE(d.name());
    std::vector<int64_t> x = {std::numeric_limits<int64_t>::min(), 5, -7};
    Array a = upload(x, d);
    EXPECT_EQ(al::min(a).int_value, std::numeric_limits<int64_t>::min());
    EXPECT_EQ(static_cast<uint64_t>(al::absmax(a).int_value), uint64_t{1} << 63);
    std::vector<uint64_t> u = {~uint64_t{0}, 1};
    EXPECT_EQ(static_cast<uint64_t>(al::max(upload(u, d)).int_value), ~uint64_t{0});
    EXPECT_EQ(al::sum(upload(u, d)).int_value, 0);  // wraps
    Array flags = zeros({1000}, DType::Bool, &d);
    flags.rows(10, 30).fill(1);
    EXPECT_EQ(al::count_nonzero(flags), 20);
    EXPECT_EQ(al::sum(flags).int_value, 20);
  }
}

TEST(Algorithms, FloatReductions) {
  for (const Device& d : available_devices()) {
    for (size_t n : kSizes) {
      SCOPED_TRACE(fmt::format("{} n={}", d.name(), n));
      auto x = random_values<float>(n, static_cast<unsigned>(n));
      Array a = upload(x, d);
      double exact = 0, sq = 0, l1 = 0, inf = 0;
      for (float v : x)
        exact += v, sq += double(v) * v, l1 += std::fabs(v),
            inf = std::max<double>(inf, std::fabs(v));
      double tol = 1e-5 * l1 + 1e-6;
      EXPECT_EQ(al::sum(a).dtype, DType::F32);
      EXPECT_NEAR(al::sum(a).value, exact, tol);
      EXPECT_NEAR(al::dot(a, a).value, sq, 1e-5 * sq);
      EXPECT_NEAR(al::norm(a, 1), l1, 1e-5 * l1);
      EXPECT_NEAR(al::norm(a, 2), std::sqrt(sq), 1e-5 * std::sqrt(sq));
      EXPECT_EQ(al::norm(a, std::numeric_limits<double>::infinity()), inf);
      EXPECT_EQ(al::absmax(a).value, inf);
      double m = exact / static_cast<double>(n), ssd = 0;
      for (float v : x) ssd += (v - m) * (v - m);
      EXPECT_NEAR(al::var(a), ssd / static_cast<double>(n),
                  1e-4 * (ssd / static_cast<double>(n)) + 1e-3);
      if (n > 1)
        EXPECT_NEAR(al::var(a, 1) * static_cast<double>(n - 1), al::var(a) * static_cast<double>(n),
                    1e-3 * ssd + 1e-3);
      else
        EXPECT_TRUE(std::isnan(al::var(a, 1)));  // 0 / 0, as NumPy
    }
  }
}

TEST(Algorithms, SpecialValuesAndEmptyArrays) {
  for (const Device& d : available_devices()) {
    SCOPED_TRACE(d.name());
    std::vector<double> zeros_ = {0.0, -0.0};
    Array z = upload(zeros_, d);
    EXPECT_TRUE(std::signbit(al::min(z).value));
    EXPECT_FALSE(std::signbit(al::max(z).value));
    std::vector<double> with_nan = {1.0, NAN, -3.0};
    Array n = upload(with_nan, d);
    EXPECT_TRUE(std::isnan(al::sum(n).value));
    EXPECT_TRUE(std::isnan(al::min(n).value));
    EXPECT_TRUE(std::isnan(al::max(n).value));
    EXPECT_TRUE(std::isnan(al::absmax(n).value));
    EXPECT_EQ(al::count_nonzero(n), 3);
    Array e = empty({0}, f32, &d);
    EXPECT_EQ(al::sum(e).value, 0.0);
    EXPECT_FALSE(std::signbit(al::sum(e).value));
    EXPECT_THROW(al::min(e), ValueError);
    EXPECT_THROW(al::max(e), ValueError);
    EXPECT_THROW(al::absmax(e), ValueError);
    EXPECT_TRUE(std::isnan(al::mean(e)));
    EXPECT_TRUE(std::isnan(al::var(e)));
    EXPECT_EQ(al::norm(e), 0.0);
    EXPECT_EQ(al::count_nonzero(e), 0);
    EXPECT_THROW(al::norm(z, 3), ValueError);
    EXPECT_THROW(al::dot(z, upload(std::vector<float>{1, 2}, d)), TypeError);
    EXPECT_THROW(al::dot(z, upload(std::vector<double>{1}, d)), ValueError);
  }
}

// The scans' documented order: blocks of 4096, each summed in element order from -0.0; the block
// offsets the exclusive scan of those totals, in order from -0.0; each element its block's offset
// plus the block's elements up to it, in order.
template <typename T>
std::vector<T> documented_scan(const std::vector<T>& x, bool inclusive, T* total) {
  constexpr size_t kBlock = 4096;
  size_t blocks = (x.size() + kBlock - 1) / kBlock;
  std::vector<T> offsets(blocks), out(x.size());
  T run = T(-0.0);
  for (size_t b = 0; b < blocks; ++b) {
    T s = T(-0.0);
    for (size_t k = b * kBlock; k < std::min(x.size(), (b + 1) * kBlock); ++k) s = s + x[k];
    offsets[b] = run;
    run = run + s;
  }
  *total = T(0);
  for (size_t b = 0; b < blocks; ++b) {
    T r = offsets[b];
    for (size_t k = b * kBlock; k < std::min(x.size(), (b + 1) * kBlock); ++k) {
      if (!inclusive) out[k] = r;
      r = r + x[k];
      if (inclusive) out[k] = r;
    }
    *total = r;
  }
  return out;
}

TEST(Algorithms, ScansFollowTheDocumentedOrder) {
  for (const Device& d : available_devices()) {
    for (size_t n : kSizes) {
      for (bool inclusive : {true, false}) {
        SCOPED_TRACE(fmt::format("{} n={} inclusive={}", d.name(), n, inclusive));
        auto x = random_values<float>(n, static_cast<unsigned>(n) + 1);
        float total = 0;
        auto want = documented_scan(x, inclusive, &total);
        Array src = upload(x, d), dst = empty({static_cast<int64_t>(n)}, f32, &d);
        Scalar t = inclusive ? al::inclusive_scan(src, dst) : al::exclusive_scan(src, dst);
        EXPECT_EQ(t.value, total);
        auto got = dst.to_vector<float>();
        for (size_t i = 0; i < n; ++i)
          ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want[i])) << i;
        // In place, the same bits.
        Scalar t2 = inclusive ? al::inclusive_scan(src, src) : al::exclusive_scan(src, src);
        EXPECT_EQ(t2.value, total);
        EXPECT_EQ(src.to_vector<float>(), got);
      }
    }
  }
}

TEST(Algorithms, IntegerScansWidenAndWrap) {
  for (const Device& d : available_devices()) {
    SCOPED_TRACE(d.name());
    std::vector<int32_t> x(10000, 2000000000);
    x[5] = -3;
    Array src = upload(x, d), dst = empty({10000}, DType::I64, &d);
    EXPECT_EQ(al::scan_dtype(DType::I32), DType::I64);
    EXPECT_EQ(al::inclusive_scan(src, dst).int_value, 9999LL * 2000000000 - 3);
    auto got = dst.to_vector<int64_t>();
    int64_t run = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      run += x[i];
      ASSERT_EQ(got[i], run) << i;
    }
    EXPECT_EQ(al::exclusive_scan(src, dst).int_value, run);
    EXPECT_EQ(dst.to_vector<int64_t>()[0], 0);
    EXPECT_EQ(dst.to_vector<int64_t>()[9999], run - 2000000000);
    // A dst that cannot hold the sums' type, another size, an empty scan.
    Array small = empty({10000}, DType::I16, &d);
    EXPECT_THROW(al::inclusive_scan(src, small), TypeError);
    Array shorter = empty({5}, DType::I64, &d);
    EXPECT_THROW(al::inclusive_scan(src, shorter), ValueError);
    Array e = empty({0}, f32, &d), e2 = empty({0}, f32, &d);
    EXPECT_EQ(al::inclusive_scan(e, e2).value, 0.0);
  }
}

TEST(Algorithms, ScanIntoAViewInsideItsBuffer) {
  for (const Device& d : available_devices()) {
    SCOPED_TRACE(d.name());
    Array m = zeros({3, 301}, DType::I64, &d);
    Array row = m.rows(1, 2);
    Array ones_ = full({301}, 1, DType::I32, &d);
    EXPECT_EQ(al::inclusive_scan(ones_, row).int_value, 301);
    auto all = m.to_vector<int64_t>();
    EXPECT_EQ(all[300], 0);
    EXPECT_EQ(all[301], 1);
    EXPECT_EQ(all[601], 301);
    EXPECT_EQ(all[602], 0);
  }
}

TEST(Algorithms, HistogramCountsEveryValueOnce) {
  for (const Device& d : available_devices()) {
    for (size_t n : {size_t{1}, size_t{1000}, size_t{70001}}) {
      SCOPED_TRACE(fmt::format("{} n={}", d.name(), n));
      std::vector<int32_t> x(n);
      for (size_t i = 0; i < n; ++i) x[i] = static_cast<int32_t>((i * 7919) % 100);
      al::Histogram h = al::histogram(upload(x, d), 10, std::pair<double, double>(0, 100));
      auto counts = h.counts.to_vector<int64_t>();
      auto edges = h.edges.to_vector<double>();
      ASSERT_EQ(counts.size(), 10u);
      ASSERT_EQ(edges.size(), 11u);
      std::vector<int64_t> want(10);
      for (int32_t v : x) want[static_cast<size_t>(v / 10)]++;
      EXPECT_EQ(counts, want);
      EXPECT_EQ(edges[0], 0.0);
      EXPECT_EQ(edges[10], 100.0);
    }
    // The last bin is closed; outside values and NaN are not counted; the data's range by default.
    std::vector<float> f = {0.0f, 1.0f, 0.5f, NAN, 2.0f, -1.0f};
    al::Histogram h = al::histogram(upload(f, d), 2, std::pair<double, double>(0, 1));
    EXPECT_EQ(h.edges.dtype(), f32);
    EXPECT_EQ(h.counts.to_vector<int64_t>(), (std::vector<int64_t>{1, 2}));
    EXPECT_THROW(al::histogram(upload(f, d), 2), ValueError);  // NaN: no range
    std::vector<float> g = {3, 3, 3};
    al::Histogram one = al::histogram(upload(g, d), 1);
    EXPECT_EQ(one.edges.to_vector<float>(), (std::vector<float>{2.5f, 3.5f}));
    EXPECT_EQ(one.counts.to_vector<int64_t>(), (std::vector<int64_t>{3}));
    EXPECT_THROW(al::histogram(upload(g, d), 0), ValueError);
    EXPECT_THROW(al::histogram(upload(g, d), 3, std::pair<double, double>(2, 1)), ValueError);
  }
}

template <typename T>
void check_argsort(const Device& d, std::vector<T> x) {
  SCOPED_TRACE(fmt::format("{} {} n={}", d.name(), dtype_name(dtype_of<T>()), x.size()));
  std::vector<int64_t> want(x.size());
  for (size_t i = 0; i < x.size(); ++i) want[i] = static_cast<int64_t>(i);
  // NumPy's order: NaNs last, -0.0 == +0.0, stable.
  std::stable_sort(want.begin(), want.end(), [&](int64_t a, int64_t b) {
    T u = x[static_cast<size_t>(a)], v = x[static_cast<size_t>(b)];
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(u)) return false;
      if (std::isnan(v)) return true;
    }
    return u < v;
  });
  Array keys = upload(x, d);
  EXPECT_EQ(al::argsort(keys).to_vector<int64_t>(), want);
  std::vector<T> sorted = al::sort(keys).template to_vector<T>();
  for (size_t i = 0; i < x.size(); ++i)
    ASSERT_EQ(std::memcmp(&sorted[i], &x[static_cast<size_t>(want[i])], sizeof(T)), 0) << i;
}

TEST(Algorithms, ArgsortIsStableInNumpysOrder) {
  for (const Device& d : available_devices()) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{4097}, size_t{20000}}) {
      auto small = random_values<int32_t>(n, 3);
      for (auto& v : small) v %= 50;  // many equal keys: stability shows
      check_argsort(d, small);
      check_argsort(d, random_values<uint32_t>(n, 4));
      check_argsort(d, random_values<int64_t>(n, 5));
      check_argsort(d, random_values<uint64_t>(n, 6));
      auto f = random_values<float>(n, 7);
      for (size_t i = 0; i < n; i += 7) f[i] = std::round(f[i] / 10);  // equal keys, zeros
      for (size_t i = 3; i < n; i += 101) f[i] = i % 2 ? NAN : -NAN;
      for (size_t i = 5; i < n; i += 103) f[i] = i % 2 ? -0.0f : INFINITY;
      check_argsort(d, f);
      auto g = random_values<double>(n, 8);
      for (size_t i = 3; i < n; i += 97) g[i] = i % 2 ? -INFINITY : NAN;
      check_argsort(d, g);
      check_argsort(d, random_values<int8_t>(n, 9));
    }
  }
}

TEST(Algorithms, UniqueReduceByKeyAndSegments) {
  for (const Device& d : available_devices()) {
    SCOPED_TRACE(d.name());
    std::vector<int32_t> k = {5, 3, 5, 5, -1, 3, 7};
    auto [keys, counts] = al::unique(upload(k, d));
    EXPECT_EQ(keys.to_vector<int32_t>(), (std::vector<int32_t>{-1, 3, 5, 7}));
    EXPECT_EQ(counts.to_vector<int64_t>(), (std::vector<int64_t>{1, 2, 3, 1}));
    std::vector<float> v = {1, 2, 3, 4, 5, 6, 7};
    auto [rk, rv] = al::reduce_by_key(upload(k, d), upload(v, d), al::Op::Sum);
    EXPECT_EQ(rk.to_vector<int32_t>(), (std::vector<int32_t>{5, 3, 5, -1, 3, 7}));
    EXPECT_EQ(rv.to_vector<float>(), (std::vector<float>{1, 2, 7, 5, 6, 7}));
    auto [mk, mv] = al::reduce_by_key(upload(k, d), upload(v, d), al::Op::Max);
    EXPECT_EQ(mv.to_vector<float>(), (std::vector<float>{1, 2, 4, 5, 6, 7}));
    std::vector<int64_t> offsets = {0, 2, 2, 7};
    Array seg = al::segmented_reduce(upload(v, d), upload(offsets, d), al::Op::Min);
    EXPECT_EQ(seg.to_vector<float>(), (std::vector<float>{1, INFINITY, 3}));
    Array sc = al::segmented_scan(upload(v, d), upload(offsets, d));
    EXPECT_EQ(sc.to_vector<float>(), (std::vector<float>{1, 3, 3, 7, 12, 18, 25}));
    std::vector<int32_t> iv = {1, 2, 3};
    std::vector<int64_t> two = {0, 1, 3};
    EXPECT_EQ(al::segmented_reduce(upload(iv, d), upload(two, d)).to_vector<int64_t>(),
              (std::vector<int64_t>{1, 5}));
    std::vector<int64_t> bad = {0, 5, 3};
    EXPECT_THROW(al::segmented_reduce(upload(v, d), upload(bad, d)), ValueError);
    std::vector<int64_t> outside = {0, 8};
    EXPECT_THROW(al::segmented_scan(upload(v, d), upload(outside, d)), ValueError);
    std::vector<int64_t> perm = {6, 0, 7};
    EXPECT_THROW(al::gather(upload(v, d), upload(perm, d)), IndexError);
    Array c = al::concat({upload(v, d), upload(std::vector<float>{}, d), upload(v, d)});
    EXPECT_EQ(c.size(), 14);
    EXPECT_EQ(c.to_vector<float>()[7], 1.0f);
    Array f = zeros({10}, f32, &d);
    al::fill(f, 2.5, 3, 5);
    EXPECT_EQ(f.to_vector<float>(), (std::vector<float>{0, 0, 0, 2.5f, 2.5f, 0, 0, 0, 0, 0}));
    EXPECT_THROW(al::fill(f, 1, 4, 11), ValueError);
    Array g = empty({7}, f32, &d);
    al::copy(upload(v, d), g);
    EXPECT_EQ(g.to_vector<float>(), v);
  }
}

// The same input gives the same bits on every device.
TEST(Algorithms, TheSameBitsOnEveryDevice) {
  auto devices = available_devices();
  if (devices.size() < 2) GTEST_SKIP() << "one device";
  auto x = random_values<float>(100003, 7);
  std::vector<double> first;
  std::vector<float> first_scan;
  for (const Device& d : devices) {
    Array a = upload(x, d), out = empty({100003}, f32, &d);
    std::vector<double> got = {al::sum(a).value, al::dot(a, a).value,
                               al::norm(a),      al::mean(a),
                               al::var(a),       al::inclusive_scan(a, out).value};
    if (first.empty()) {
      first = got;
      first_scan = out.to_vector<float>();
    } else {
      EXPECT_EQ(got, first) << d.name();
      EXPECT_EQ(out.to_vector<float>(), first_scan) << d.name();
    }
  }
}

}  // namespace
}  // namespace tack
