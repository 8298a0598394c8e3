// Constant shifts and the messages of common mistakes: each says what is wrong and what to do.
#include "test_support.hpp"

namespace tack {
namespace {

std::string store(const std::string& value) {
  return "import tack\n@tack.kernel\ndef k(x, out):\n    for i in range(out.shape[0]):\n"
         "        out[i] = " +
         value + "\n";
}

TEST(FrontEndMessages, ConstantShiftsAreExactOrErrors) {
  // 1 << 70 does not fit in 64 bits: an error like 2 ** 70 (it used to store 0).
  for (const char* v : {"1 << 70", "2 ** 70", "1 << 64", "3 << 62"}) {
    auto e = test::compile_error(store(v), "i64[],i64[]");
    EXPECT_EQ(e.line(), 5) << v;
    EXPECT_NE(e.message().find("overflows 64 bits"), std::string::npos) << v << ": " << e.what();
  }
  auto neg = test::compile_error(store("1 << -1"), "i64[],i64[]");
  EXPECT_NE(neg.message().find("negative shift count"), std::string::npos) << neg.what();
  // A typed value shifted by a constant count outside its width.
  for (const auto& [v, count, width] :
       std::vector<std::tuple<std::string, std::string, int>>{{"x[i] << 64", "64", 64},
                                                              {"x[i] >> 100", "100", 64},
                                                              {"x[i] << -3", "-3", 64},
                                                              {"tack.i32(x[i]) << 32", "32", 32}}) {
    auto e = test::compile_error(store(v), "i64[],i64[]");
    EXPECT_EQ(e.col(), 18) << v;
    EXPECT_NE(e.message().find("the shift count " + count + " is outside 0 to " +
                               std::to_string(width - 1)),
              std::string::npos)
        << e.what();
    EXPECT_NE(e.hint().find("tack.i64(x)"), std::string::npos);
  }
  // Exact constants and counts within the width compile and compute Python's values.
  Module m = Module::from_source(
      store("(1 << 40) + (-1 >> 70) + (5 >> 1) + (x[i] << 63 >> 63) + 1 ** 9223372036854775807"));
  Array x = empty({3}, i64), out = empty({3}, i64);
  copyto(x, std::vector<int64_t>{0, 1, 2});
  m.kernel("k")(x, out);
  auto got = out.to_vector<int64_t>();
  const int64_t base = (int64_t{1} << 40) - 1 + 2 + 1;
  EXPECT_EQ(got[0], base);
  EXPECT_EQ(got[1], base - 1);  // 1 << 63 is INT64_MIN; >> 63 gives -1
  EXPECT_EQ(got[2], base);
}

TEST(FrontEndMessages, AVectorStoredIntoOneElementNamesTheDimensions) {
  // A 2-D array of shape (n, 2) where the kernel wants 1-D: x[i] is a vec2.
  auto e = test::compile_error(store("x[i]"), "f32[,2],f32[]");
  EXPECT_EQ(e.line(), 5);
  EXPECT_NE(e.message().find("cannot store vec2 into one element of 'out' (an array of 1 "
                             "dimension): the value is a vector"),
            std::string::npos)
      << e.what();
  EXPECT_NE(e.hint().find("more dimensions than the kernel indexes"), std::string::npos);
  EXPECT_NE(e.hint().find("x[i, 0]"), std::string::npos);
}

TEST(FrontEndMessages, AFloatLoopBoundSaysItMustBeAnInteger) {
  const std::string src =
      "import tack\n@tack.kernel\ndef k(x, n):\n    for i in range(n):\n        x[i] = 1.0\n";
  auto e = test::compile_error(src, "f32[],f32");
  EXPECT_EQ(e.line(), 4);
  EXPECT_EQ(e.col(), 20);
  EXPECT_NE(e.message().find("bounds must be integers, not f32"), std::string::npos) << e.what();
  EXPECT_NE(e.hint().find("int(n)"), std::string::npos);
  auto literal = test::compile_error(
      "import tack\n@tack.kernel\ndef k(x):\n    for i in range(0, 4, 0.5):\n        x[i] = 1.0\n",
      "f32[]");
  EXPECT_NE(literal.message().find("must be integers"), std::string::npos) << literal.what();
}

// Found by the fuzzer in the clang build: a vector constant was built with its components moved
// out before their count was read (argument evaluation order), so tack.vec3(V) saw a scalar with
// no expression (UBSan: reference binding to null). Fails before the fix when built with clang.
TEST(FuzzFindings, AVectorConstantPassedToAConstructor) {
  Module m = Module::from_source(
      "import tack\nV = tack.constant((1.0, 2.0, -3.0))\n@tack.kernel\ndef k(out):\n"
      "    for i in range(out.shape[0]):\n        v = tack.vec3(V) * 2.0\n"
      "        out[i] = v.x + 10.0 * v.y + 100.0 * v.z\n");
  Array out = empty({2});
  m.kernel("k")(out);
  EXPECT_EQ(out.to_vector<float>(), std::vector<float>(2, 2.0f + 40.0f - 600.0f));
}

}  // namespace
}  // namespace tack
