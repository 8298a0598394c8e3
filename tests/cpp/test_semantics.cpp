// The language's arithmetic semantics, run on the CPU backend and compared with Python's rules
// written out independently here: floor division and modulo, wrapping, exact integer powers,
// shifts, true division, saturating conversions, NaN, infinities and signed zeros.
#include <bit>
#include <cmath>
#include <limits>

#include "test_support.hpp"

namespace tack {
namespace {

Module arith() {
  return Module::from_file(test::kernels_dir() + "/arith.py");
}

template <typename T>
Array array_of(const std::vector<T>& v) {
  Array a = empty({static_cast<int64_t>(v.size())}, dtype_of<T>());
  copyto(a, v);
  return a;
}

// Exact intermediate values; __extension__ keeps -Wpedantic quiet about the GNU type.
__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

// Python's integer semantics on exact values, wrapped to T.
template <typename T>
T wrap(i128 v) {
  return static_cast<T>(static_cast<u128>(v));
}
i128 py_floordiv(i128 a, i128 b) {
  i128 q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
template <typename T>
T py_pow(T base, T exp) {
  if constexpr (std::is_signed_v<T>) {
    if (exp < 0) return base == 1 ? 1 : base == -1 ? (exp % 2 ? -1 : 1) : 0;
  }
  // Unsigned arithmetic at least as wide as unsigned int: a narrower type would be promoted to
  // int, whose overflow is undefined (UBSan found 62059 * 55105 for u16).
  using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
  U r = 1, b = static_cast<U>(static_cast<std::make_unsigned_t<T>>(base));
  for (U e = static_cast<U>(exp); e; e >>= 1, b *= b)
    if (e & 1) r *= b;
  return static_cast<T>(r);
}

template <typename T>
void check_int_binary() {
  using L = std::numeric_limits<T>;
  std::vector<T> values = {L::min(), static_cast<T>(L::min() + 1), 0, 1, 2, 3, 7,
                           L::max(), static_cast<T>(L::max() - 1)};
  if constexpr (std::is_signed_v<T>) {
    for (T v : {-1, -2, -3, -7}) values.push_back(v);
  }
  std::vector<T> a, b;
  for (T x : values)
    for (T y : values) {
      a.push_back(x);
      b.push_back(y);
    }
  int64_t n = static_cast<int64_t>(a.size());
  Array A = array_of(a), B = array_of(b);
  Array fd = empty({n}, dtype_of<T>()), md = empty({n}, dtype_of<T>()),
        ad = empty({n}, dtype_of<T>()), sb = empty({n}, dtype_of<T>()),
        ml = empty({n}, dtype_of<T>()), pw = empty({n}, dtype_of<T>());
  arith().kernel("int_binary")(A, B, fd, md, ad, sb, ml, pw);
  auto f = fd.to_vector<T>(), m = md.to_vector<T>(), s = ad.to_vector<T>(), d = sb.to_vector<T>(),
       p = ml.to_vector<T>(), w = pw.to_vector<T>();
  for (int64_t i = 0; i < n; ++i) {
    i128 x = a[i], y = b[i];
    SCOPED_TRACE(testing::Message()
                 << dtype_name(dtype_of<T>()) << " a=" << static_cast<int64_t>(a[i])
                 << " b=" << static_cast<int64_t>(b[i]));
    // x // 0 and x % 0 are defined as 0 (Python raises; a kernel cannot).
    EXPECT_EQ(f[i], y == 0 ? T(0) : wrap<T>(py_floordiv(x, y)));
    EXPECT_EQ(m[i], y == 0 ? T(0) : wrap<T>(x - y * py_floordiv(x, y)));
    EXPECT_EQ(s[i], wrap<T>(x + y));
    EXPECT_EQ(d[i], wrap<T>(x - y));
    EXPECT_EQ(p[i], wrap<T>(static_cast<i128>(static_cast<u128>(x) * static_cast<u128>(y))));
    EXPECT_EQ(w[i], py_pow<T>(a[i], b[i]));
  }
}

TEST(IntegerSemantics, I8) {
  check_int_binary<int8_t>();
}
TEST(IntegerSemantics, U8) {
  check_int_binary<uint8_t>();
}
TEST(IntegerSemantics, I16) {
  check_int_binary<int16_t>();
}
TEST(IntegerSemantics, U16) {
  check_int_binary<uint16_t>();
}
TEST(IntegerSemantics, I32) {
  check_int_binary<int32_t>();
}
TEST(IntegerSemantics, U32) {
  check_int_binary<uint32_t>();
}
TEST(IntegerSemantics, I64) {
  check_int_binary<int64_t>();
}
TEST(IntegerSemantics, U64) {
  check_int_binary<uint64_t>();
}

TEST(IntegerSemantics, ShiftsKeepTheLeftTypeAndShiftEverythingOutPastTheWidth) {
  std::vector<int16_t> a = {1, -1, 0x4000, -32768, 12345, 7, -7, 1};
  std::vector<int64_t> n = {3, 1, 1, 15, 16, 40, 100, -1};
  Array l = empty({8}, i16), r = empty({8}, i16);
  arith().kernel("shifts")(array_of(a), array_of(n), l, r);
  auto L = l.to_vector<int16_t>(), R = r.to_vector<int16_t>();
  for (size_t i = 0; i < a.size(); ++i) {
    bool out = n[i] < 0 || n[i] >= 16;
    EXPECT_EQ(L[i], out ? 0 : static_cast<int16_t>(static_cast<uint16_t>(a[i]) << n[i])) << i;
    EXPECT_EQ(R[i], out ? (a[i] < 0 ? -1 : 0) : static_cast<int16_t>(a[i] >> n[i])) << i;
  }
}

// CPython's float floor division and modulo.
double py_fmod(double a, double b) {
  double m = std::fmod(a, b);
  if (m != 0) {
    if ((b < 0) != (m < 0)) m += b;
  } else {
    m = std::copysign(0.0, b);
  }
  return m;
}
double py_ffloordiv(double a, double b) {
  if (b == 0) return a / b;
  double m = std::fmod(a, b);
  double d = (a - m) / b;
  if (m != 0 && ((b < 0) != (m < 0))) d -= 1;
  if (d == 0) return std::copysign(0.0, a / b);
  double fl = std::floor(d);
  return d - fl > 0.5 ? fl + 1 : fl;
}

bool same(double x, double y) {
  return (std::isnan(x) && std::isnan(y)) ||
         std::bit_cast<uint64_t>(x) == std::bit_cast<uint64_t>(y);
}

TEST(FloatSemantics, FloorDivisionModuloDivisionPowerWithSpecialValues) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  std::vector<double> values = {0.0, -0.0, 1.0, -1.0, 7.5, -7.5, 2.0, 0.1, 1e300, inf, -inf, nan};
  std::vector<double> a, b;
  for (double x : values)
    for (double y : values) {
      a.push_back(x);
      b.push_back(y);
    }
  int64_t n = static_cast<int64_t>(a.size());
  Array fd = empty({n}, f64), md = empty({n}, f64), dv = empty({n}, f64), pw = empty({n}, f64);
  arith().kernel("float_binary")(array_of(a), array_of(b), fd, md, dv, pw);
  auto F = fd.to_vector<double>(), M = md.to_vector<double>(), D = dv.to_vector<double>(),
       P = pw.to_vector<double>();
  for (int64_t i = 0; i < n; ++i) {
    SCOPED_TRACE(testing::Message() << "a=" << a[i] << " b=" << b[i]);
    if (b[i] != 0) {
      EXPECT_TRUE(same(M[i], py_fmod(a[i], b[i]))) << M[i];
    }
    EXPECT_TRUE(same(F[i], py_ffloordiv(a[i], b[i]))) << F[i];
    EXPECT_TRUE(same(D[i], a[i] / b[i])) << D[i];
    EXPECT_TRUE(same(P[i], std::pow(a[i], b[i]))) << P[i];
  }
}

TEST(FloatSemantics, F32DivisionIsCorrectlyRoundedAndSignedZerosSurvive) {
  std::vector<float> a = {1.0f, -0.0f, 0.0f, 1e-45f, 3.0f}, b = {3.0f, 5.0f, -5.0f, 2.0f, 0.0f};
  Array out = empty({5}, f32);
  arith().kernel("true_divide")(array_of(a), array_of(b), out);
  auto r = out.to_vector<float>();
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(std::bit_cast<uint32_t>(r[i]), std::bit_cast<uint32_t>(a[i] / b[i])) << i;
}

TEST(FloatSemantics, IntegerTrueDivisionGivesFloats) {
  std::vector<int32_t> a = {7, -7, 1, 0}, b = {2, 2, 3, 5};
  Array out = empty({4}, f32);
  arith().kernel("true_divide")(array_of(a), array_of(b), out);
  EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{3.5f, -3.5f, 1.0f / 3.0f, 0.0f}));
}

TEST(Conversions, FloatToIntTruncatesTowardZeroAndSaturates) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {2.7f, -2.7f, 1e20f, -1e20f, inf, -inf, std::nanf(""), -0.5f};
  Array out = empty({8}, i32);
  arith().kernel("to_i32")(array_of(x), out);
  EXPECT_EQ(out.to_vector<int32_t>(),
            (std::vector<int32_t>{2, -2, INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN, 0, 0}));
}

// The language's conversion by its definition: truncate toward zero, saturate at the type's
// limits, NaN to 0 (computed in long double, which holds every f32 and f64 value and every limit).
template <typename I, typename F>
I saturated(F x) {
  if (std::isnan(x)) return 0;
  const auto t = std::trunc(static_cast<long double>(x));
  if (t <= static_cast<long double>(std::numeric_limits<I>::min()))
    return std::numeric_limits<I>::min();
  if (t >= static_cast<long double>(std::numeric_limits<I>::max()))
    return std::numeric_limits<I>::max();
  return static_cast<I>(t);
}

// The floats at and around each integer type's limits (2^k and its neighbours, negated too),
// fractions, zeros, infinities and NaN, for every float and integer type, in more elements than
// a gang of lanes holds.
template <typename F>
void check_float_to_int_conversions() {
  std::vector<F> x = {0,
                      -0.0f,
                      0.5f,
                      -0.5f,
                      0.99f,
                      -0.99f,
                      1.5f,
                      -1.5f,
                      2.7f,
                      -2.7f,
                      std::numeric_limits<F>::infinity(),
                      -std::numeric_limits<F>::infinity(),
                      std::numeric_limits<F>::quiet_NaN(),
                      -std::numeric_limits<F>::quiet_NaN(),
                      std::numeric_limits<F>::max(),
                      std::numeric_limits<F>::lowest(),
                      std::numeric_limits<F>::denorm_min()};
  for (int k : {7, 8, 15, 16, 31, 32, 63, 64}) {
    const F p = std::ldexp(F(1), k);
    for (F v : {p, std::nextafter(p, F(0)), std::nextafter(p, 2 * p), p - 1, p + 1})
      for (F s : {F(1), F(-1)}) x.push_back(s * v);
  }
  const int64_t n = static_cast<int64_t>(x.size());
  Array in = array_of(x);
  Array o[8] = {empty({n}, DType::I8),  empty({n}, DType::U8),  empty({n}, DType::I16),
                empty({n}, DType::U16), empty({n}, DType::I32), empty({n}, DType::U32),
                empty({n}, DType::I64), empty({n}, DType::U64)};
  arith().kernel("to_ints")(in, o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7]);
  auto expect = [&]<typename I>(const Array& a, I) {
    std::vector<I> got = a.to_vector<I>();
    for (int64_t i = 0; i < n; ++i)
      EXPECT_EQ(got[i], saturated<I>(x[i]))
          << dtype_name(dtype_of<I>()) << " of " << dtype_name(dtype_of<F>()) << " " << x[i];
  };
  expect(o[0], int8_t{});
  expect(o[1], uint8_t{});
  expect(o[2], int16_t{});
  expect(o[3], uint16_t{});
  expect(o[4], int32_t{});
  expect(o[5], uint32_t{});
  expect(o[6], int64_t{});
  expect(o[7], uint64_t{});
}

TEST(Conversions, FloatToEveryIntegerTypeAtItsLimits) {
  check_float_to_int_conversions<float>();
  if (get_backend().supports_f64()) check_float_to_int_conversions<double>();
}

TEST(Comparisons, SignedAndUnsignedCompareByValue) {
  std::vector<int32_t> a = {-1, 5, INT32_MIN};
  std::vector<uint32_t> b = {1, 4, 0};
  Array out = empty({3}, bool_);
  arith().kernel("mixed_compare")(array_of(a), array_of(b), out);
  auto r = out.to_vector<bool>();
  EXPECT_EQ(r, (std::vector<bool>{true, false, true}));
}

TEST(FloatSemantics, MinAndMaxPropagateNaN) {
  std::vector<float> a = {1, std::nanf(""), -0.0f, 3}, b = {std::nanf(""), 2, 0.0f, -4};
  Array lo = empty({4}), hi = empty({4});
  arith().kernel("min_max_nan")(array_of(a), array_of(b), lo, hi);
  auto L = lo.to_vector<float>(), H = hi.to_vector<float>();
  EXPECT_TRUE(std::isnan(L[0]) && std::isnan(L[1]) && std::isnan(H[0]) && std::isnan(H[1]));
  EXPECT_TRUE(std::signbit(L[2]) && !std::signbit(H[2]));
  EXPECT_EQ(L[3], -4);
  EXPECT_EQ(H[3], 3);
}

TEST(FloatSemantics, RoundIsHalfToEven) {
  std::vector<double> x = {0.5, 1.5, 2.5, -0.5, -1.5, 2.4, -2.6};
  Array r = empty({7}, f64), f = empty({7}, f64), c = empty({7}, f64), t = empty({7}, f64);
  arith().kernel("rounding")(array_of(x), r, f, c, t);
  EXPECT_EQ(r.to_vector<double>(), (std::vector<double>{0, 2, 2, -0.0, -2, 2, -3}));
  EXPECT_EQ(f.to_vector<double>(), (std::vector<double>{0, 1, 2, -1, -2, 2, -3}));
  EXPECT_EQ(c.to_vector<double>(), (std::vector<double>{1, 2, 3, -0.0, -1, 3, -2}));
  EXPECT_EQ(t.to_vector<double>(), (std::vector<double>{0, 1, 2, -0.0, -1, 2, -2}));
}

TEST(ControlFlow, RangesWithStepsBreakContinueAndWhile) {
  const int32_t n = 20;
  Array out = empty({12}, i64);
  arith().kernel("sequential_loops")(n, out);
  auto r = out.to_vector<int64_t>();
  for (int64_t i = 0; i < 12; ++i) {
    int64_t s = 0;
    for (int64_t k = i; k < n; k += 3) s += k;
    for (int64_t k = n; k > i; k -= 2) {
      if (k % 5 == 0) continue;
      if (k < 4) break;
      s += 1;
    }
    int64_t j = 0;
    while (true) {
      j += 1;
      if (j >= i) break;
    }
    EXPECT_EQ(r[i], s * 100 + j) << i;
  }
}

TEST(ControlFlow, TupleAssignmentChainsAndConditionals) {
  std::vector<float> x = {5, 1, 50, 200}, y = {1, 5, 60, 300};
  Array out = empty({4}, i32);
  arith().kernel("swap_and_chain")(array_of(x), array_of(y), out);
  std::vector<int32_t> want;
  for (size_t i = 0; i < x.size(); ++i) {
    float a = y[i], b = x[i];
    want.push_back(0 <= a && a < b && b < 100 ? 1 : 2);
  }
  EXPECT_EQ(out.to_vector<int32_t>(), want);
}

TEST(Kernels, ReturnValueComesBackAsAHostNumber) {
  std::vector<float> x = {1.5f, 2, 3, 4.25f};
  Scalar s = arith().kernel("sum_of")(array_of(x));
  ASSERT_TRUE(s.has_value);
  EXPECT_EQ(s.dtype, f64);
  EXPECT_EQ(s.as<double>(), 5.75);
}

TEST(Kernels, NdrangeWithStartStopPairs) {
  Array out = zeros({3, 4, 5}, i32);
  arith().kernel("grid")(out);
  auto r = out.to_vector<int32_t>();
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 5; ++k)
        EXPECT_EQ(r[(i * 4 + j) * 5 + k], j == 0 ? 0 : i * 100 + j * 10 + k);
}

TEST(Print, FormatsEachDtypeOnOneLine) {
  std::vector<float> x = {0.5f, 2.25f};
  testing::internal::CaptureStdout();
  arith().kernel("show")(array_of(x), 2);
  std::fflush(stdout);
  std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(out,
            "x[ 0 ] = 0.5 False 100%\n4,0.1;\n"
            "x[ 1 ] = 2.25 True 100%\n4,0.1;\n");
}

TEST(Print, OnlyInsideTheLoop) {
  auto e = test::compile_error(
      "import tack\n@tack.kernel\ndef k(x):\n    print(1)\n    for i in range(1):\n        pass\n",
      "f32[]");
  EXPECT_NE(e.message().find("before the parallel loop a kernel may only assign"),
            std::string::npos)
      << e.what();
}

// IEEE 754-2019 maximum and minimum (what min/max compile to): NaN propagates, -0 < +0.
float ieee_max(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::nanf("");
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
float ieee_min(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::nanf("");
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

TEST(Builtins, GlslHelpersFollowGlslFormulas) {
  std::vector<float> x = {-2.5f, -1.0f, -0.0f, 0.25f, 0.5f, 0.75f, 1.5f, 3.0f},
                     y = {1.0f, -3.0f, 0.5f, 0.25f, -0.5f, 2.0f, 1.0f, 0.0f};
  Array out = empty({8, 8});
  arith().kernel("glsl_helpers")(array_of(x), array_of(y), out);
  auto r = out.to_vector<float>();
  for (size_t i = 0; i < x.size(); ++i) {
    float v = x[i];
    float t = ieee_min(ieee_max((v - -1.0f) / (2.0f - -1.0f), 0.0f), 1.0f);
    std::vector<float> want = {
        ieee_min(ieee_max(v, -1.0f), 1.0f), ieee_min(ieee_max(v, 0.0f), 1.0f),
        v * (1.0f - 0.25f) + y[i] * 0.25f,  v < 0.5f ? 0.0f : 1.0f,
        t * t * (3.0f - 2.0f * t),          v - std::floor(v),
        v > 0 ? 1.0f : v < 0 ? -1.0f : v,   v > y[i] ? v : y[i]};
    for (size_t k = 0; k < 8; ++k)
      EXPECT_EQ(std::bit_cast<uint32_t>(r[i * 8 + k]), std::bit_cast<uint32_t>(want[k]))
          << "x=" << v << " helper " << k;
  }
}

}  // namespace
}  // namespace tack
