// The typing rules of the language: promotion, weak literals, division, conversions.
#include <fmt/format.h>

#include "sema/type_rules.hpp"
#include "test_support.hpp"

namespace tack {
namespace {

using sema::promote;

TEST(Promote, SameSignednessTakesTheWider) {
  EXPECT_EQ(promote(i8, i16), i16);
  EXPECT_EQ(promote(i32, i64), i64);
  EXPECT_EQ(promote(u8, u32), u32);
  EXPECT_EQ(promote(u16, u64), u64);
  EXPECT_EQ(promote(i32, i32), i32);
}

TEST(Promote, SignedWithUnsignedTakesASignedTypeHoldingBoth) {
  EXPECT_EQ(promote(i8, u16), i32);   // the spec's example
  EXPECT_EQ(promote(i32, u32), i64);  // the spec's example
  EXPECT_EQ(promote(i16, u8), i16);
  EXPECT_EQ(promote(i64, u32), i64);
  EXPECT_EQ(promote(u8, i8), i16);
  EXPECT_EQ(promote(u32, i16), i64);
}

TEST(Promote, SignedWithU64HasNoCommonType) {
  for (DType s : {i8, i16, i32, i64}) {
    EXPECT_FALSE(promote(s, u64).has_value()) << dtype_name(s);
    EXPECT_FALSE(promote(u64, s).has_value()) << dtype_name(s);
  }
}

TEST(Promote, FloatsWinAndTheWiderFloatWins) {
  EXPECT_EQ(promote(i64, f32), f32);
  EXPECT_EQ(promote(u64, f32), f32);
  EXPECT_EQ(promote(f32, f64), f64);
  EXPECT_EQ(promote(i8, f64), f64);
}

TEST(Promote, BoolsActAsTheOtherOperand) {
  EXPECT_EQ(promote(bool_, bool_), i32);  // True + True == 2
  EXPECT_EQ(promote(bool_, u8), u8);
  EXPECT_EQ(promote(f32, bool_), f32);
}

TEST(IntFits, Ranges) {
  EXPECT_TRUE(sema::int_fits(u8, false, 255));
  EXPECT_FALSE(sema::int_fits(u8, false, 256));
  EXPECT_FALSE(sema::int_fits(u8, true, static_cast<uint64_t>(-1)));
  EXPECT_TRUE(sema::int_fits(i8, true, static_cast<uint64_t>(-128)));
  EXPECT_FALSE(sema::int_fits(i8, true, static_cast<uint64_t>(-129)));
  EXPECT_TRUE(sema::int_fits(u64, false, UINT64_MAX));
  EXPECT_FALSE(sema::int_fits(i64, false, UINT64_MAX));
  EXPECT_EQ(sema::literal_int_type(false, 2147483647), i32);
  EXPECT_EQ(sema::literal_int_type(false, 2147483648u), i64);
  EXPECT_EQ(sema::literal_int_type(false, UINT64_MAX), u64);
}

TEST(Conversions, LocalsWidenExactlyOnly) {
  EXPECT_TRUE(sema::widens_exactly(i8, i64));
  EXPECT_TRUE(sema::widens_exactly(u8, i16));
  EXPECT_TRUE(sema::widens_exactly(i32, f32));  // int to float, as the spec allows
  EXPECT_TRUE(sema::widens_exactly(f32, f64));
  EXPECT_FALSE(sema::widens_exactly(f64, f32));
  EXPECT_FALSE(sema::widens_exactly(f32, i32));
  EXPECT_FALSE(sema::widens_exactly(i64, i32));
  EXPECT_FALSE(sema::widens_exactly(i8, u64));
  EXPECT_FALSE(sema::widens_exactly(u32, i32));
}

TEST(Conversions, StoresAreSameKind) {
  EXPECT_TRUE(sema::stores_same_kind(f64, f32));
  EXPECT_TRUE(sema::stores_same_kind(i64, u8));
  EXPECT_TRUE(sema::stores_same_kind(i32, f32));
  EXPECT_TRUE(sema::stores_same_kind(bool_, f32));
  EXPECT_FALSE(sema::stores_same_kind(f32, i32));
  EXPECT_FALSE(sema::stores_same_kind(i32, bool_));
}

// The type semantic analysis gives `expr`, with a, b scalar arguments of the given types and x an
// array argument.
std::string type_of(const std::string& expr, const std::string& args = "i32,i32,f32[]") {
  std::string src = fmt::format(
      "import tack\nimport math\n@tack.kernel\ndef k(a, b, x):\n    for i in range(1):\n"
      "        r = {}\n",
      expr);
  ir::Kernel k = test::specialize(src, args);
  for (const ir::Local& l : k.locals)
    if (l.name == "r") return ir::to_string(l.type);
  return "?";
}

TEST(Inference, BinaryOperatorsPromote) {
  EXPECT_EQ(type_of("a + b", "i8,u16,f32[]"), "i32");
  EXPECT_EQ(type_of("a * b", "i32,u32,f32[]"), "i64");
  EXPECT_EQ(type_of("a - b", "u8,u8,f32[]"), "u8");
  EXPECT_EQ(type_of("a + b", "i64,f32,f32[]"), "f32");
  EXPECT_EQ(type_of("a + b", "f32,f64,f32[]"), "f64");
  EXPECT_EQ(type_of("a < b", "i32,u32,f32[]"), "bool");
}

TEST(Inference, IntegerLiteralsAreWeak) {
  EXPECT_EQ(type_of("a + 1", "u8,i32,f32[]"), "u8");
  EXPECT_EQ(type_of("a * 2", "i16,i32,f32[]"), "i16");
  EXPECT_EQ(type_of("1"), "i32");
  EXPECT_EQ(type_of("3000000000"), "i64");
  EXPECT_EQ(type_of("2 ** 40"), "i64");
  // A literal that does not fit the other operand's type promotes as if it were typed.
  EXPECT_EQ(type_of("a + 300", "u8,i32,f32[]"), "i32");
  EXPECT_EQ(type_of("a < -1", "u32,i32,f32[]"), "bool");
}

TEST(Inference, FloatLiteralsAreWeak) {
  EXPECT_EQ(type_of("x[0] * 2.5"), "f32");
  EXPECT_EQ(type_of("x[0] * 2.5", "i32,i32,f64[]"), "f64");
  EXPECT_EQ(type_of("2.5"), "f32");                   // alone: f32
  EXPECT_EQ(type_of("a * 0.5"), "f32");               // with integers: f32
  EXPECT_EQ(type_of("2.5", "i32,i32,f64[]"), "f64");  // f64 kernels: the kernel's float type
  EXPECT_EQ(type_of("math.pi"), "f32");
}

TEST(Inference, DivisionRules) {
  EXPECT_EQ(type_of("a / b"), "f32");  // true division of integers
  EXPECT_EQ(type_of("7 / 2"), "f32");
  EXPECT_EQ(type_of("a / b", "i64,i64,f64[]"), "f64");
  EXPECT_EQ(type_of("a // b"), "i32");  // floor division keeps integers
  EXPECT_EQ(type_of("a % b", "u16,u16,f32[]"), "u16");
  EXPECT_EQ(type_of("x[0] // 2.0"), "f32");
  EXPECT_EQ(type_of("a ** b", "i16,i32,f32[]"), "i16");  // at the base's type
  EXPECT_EQ(type_of("a ** 0.5", "i32,i32,f32[]"), "f32");
}

TEST(Inference, ShiftsKeepTheLeftType) {
  EXPECT_EQ(type_of("a << b", "u8,i64,f32[]"), "u8");
  EXPECT_EQ(type_of("1 << b", "u8,i64,f32[]"), "i32");
  EXPECT_EQ(type_of("a >> 3", "i16,i32,f32[]"), "i16");
}

TEST(Inference, CastsAndBuiltins) {
  EXPECT_EQ(type_of("int(x[0])"), "i32");
  EXPECT_EQ(type_of("float(a)"), "f32");
  EXPECT_EQ(type_of("tack.u8(a)"), "u8");
  EXPECT_EQ(type_of("tack.f64(a)"), "f64");
  EXPECT_EQ(type_of("sqrt(a)"), "f32");
  EXPECT_EQ(type_of("math.sqrt(x[0])", "i32,i32,f64[]"), "f64");
  EXPECT_EQ(type_of("abs(a)", "i8,i32,f32[]"), "i8");
  EXPECT_EQ(type_of("min(a, b, 3)", "u8,u16,f32[]"), "u16");
  EXPECT_EQ(type_of("max(a, x[0])"), "f32");
  EXPECT_EQ(type_of("x.shape[0]"), "i64");
  EXPECT_EQ(type_of("len(x)"), "i64");
  EXPECT_EQ(type_of("isnan(x[0])"), "bool");
  EXPECT_EQ(type_of("a if a > b else b", "i8,i64,f32[]"), "i64");
  EXPECT_EQ(type_of("a > 0 and b > 0"), "bool");
  EXPECT_EQ(type_of("not a"), "bool");
  EXPECT_EQ(type_of("i"), "i64");  // the parallel loop's index
}

// A cast of a literal converts its exact value (it was once widened from the kernel's f32).
TEST(Inference, CastsOfLiteralsAreExact) {
  Module m = Module::from_source(
      "import tack\n@tack.kernel\ndef k(d, i):\n    for _ in range(1):\n"
      "        d[0] = tack.f64(0.1)\n        i[0] = tack.i64(16777217.0)\n        i[1] = "
      "tack.u8(300)\n");
  Array d = zeros({1}, f64), i = zeros({2}, i64);
  m.kernel("k")(d, i);
  EXPECT_EQ(d.to_vector<double>()[0], 0.1);
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{16777217, 44}));
}

TEST(Inference, ScalarArgumentTypesFollowTheArrays) {
  // A float argument is f32, or f64 when any array argument is f64: exercised through the C++ API
  // in test_runtime; here the IR of both specializations.
  std::string src =
      "import tack\n@tack.kernel\ndef k(a, x):\n    for i in range(x.shape[0]):\n        x[i] = "
      "a\n";
  EXPECT_EQ(ir::to_string(test::specialize(src, "f32,f32[]").params[0].type), "f32");
  EXPECT_EQ(ir::to_string(test::specialize(src, "f64,f64[]").params[0].type), "f64");
}

TEST(Inference, MixingSignedAndU64IsAnError) {
  auto e = test::compile_error(
      "import tack\n@tack.kernel\ndef k(a, b, x):\n    for i in range(1):\n        r = a + b\n",
      "i32,u64,f32[]");
  EXPECT_EQ(e.line(), 5);
  EXPECT_EQ(e.col(), 13);
  EXPECT_NE(e.message().find("i32 and u64"), std::string::npos) << e.what();
  EXPECT_NE(e.hint().find("cast"), std::string::npos);
}

TEST(Inference, LocalsKeepTheirFirstType) {
  auto ok = test::specialize(
      "import tack\n@tack.kernel\ndef k(x):\n    for i in range(1):\n        s = 0.0\n"
      "        s = 1\n        t = tack.i16(0)\n        t = tack.i8(3)\n",
      "f32[]");
  (void)ok;
  auto e = test::compile_error(
      "import tack\n@tack.kernel\ndef k(x):\n    for i in range(1):\n        s = 0\n        s = "
      "x[i]\n",
      "f32[]");
  EXPECT_EQ(e.line(), 6);
  EXPECT_NE(e.message().find("cannot assign f32 to 's', a local of type i32"), std::string::npos)
      << e.what();
  auto e2 = test::compile_error(
      "import tack\n@tack.kernel\ndef k(x):\n    for i in range(1):\n        s = x[i]\n        s = "
      "tack.f64(1)\n",
      "f32[]");
  EXPECT_NE(e2.message().find("not exact"), std::string::npos);
}

}  // namespace
}  // namespace tack
