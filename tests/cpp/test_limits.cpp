// How deep a kernel may nest: expressions, inlined @tack.func calls and both together. Up to the
// limits a kernel compiles and runs on the default device; past them it is a CompileError at the
// line and column that crosses the limit, never a stack overflow.
#include <fmt/format.h>

#include "test_support.hpp"

namespace tack {
namespace {

// `out[i] = x[i] + x[i] + ...` with `terms` terms.
std::string long_sum(int terms) {
  std::string src =
      "import tack\n@tack.kernel\ndef k(x, out):\n    for i in range(x.shape[0]):\n"
      "        out[i] = x[i]";
  for (int t = 1; t < terms; ++t) src += " + x[i]";
  return src + "\n";
}

// f0 .. f{n-1}: f0(a) = a + 1, and each other returns the previous one's result plus `terms` - 1
// more terms `+ a`, so that the calls sit at the bottom of deep expressions.
std::string call_chain(int n, int terms) {
  std::string src = "import tack\n@tack.func\ndef f0(a):\n    return a + 1.0\n";
  for (int i = 1; i < n; ++i) {
    src += fmt::format("@tack.func\ndef f{}(a):\n    return f{}(a)", i, i - 1);
    for (int t = 1; t < terms; ++t) src += " + a";
    src += "\n";
  }
  return src + fmt::format(
                   "@tack.kernel\ndef k(x, out):\n    for i in range(x.shape[0]):\n"
                   "        out[i] = f{}(x[i])\n",
                   n - 1);
}

CompileError error_of(const std::string& src) {
  try {
    Module::from_source(src, "deep.py").kernel("k")(empty({4}), empty({4}));
  } catch (const CompileError& e) {
    return e;
  }
  ADD_FAILURE() << "expected a CompileError";
  return CompileError("", "", 0, 0, "", "", "");
}

std::vector<float> run(const std::string& src, const std::vector<float>& hx) {
  Array x = empty({static_cast<int64_t>(hx.size())}), out = empty({x.size()});
  copyto(x, hx);
  Module::from_source(src, "deep.py").kernel("k")(x, out);
  return out.to_vector<float>();
}

const std::vector<float> kInputs = {0, 1, 2, 3, -4, 5, 6, 7};

TEST(Limits, TheDeepestExpressionCompilesAndRuns) {
  // x[i] is two levels (the subscript and the name), each '+' one more: 999 of 1000.
  auto got = run(long_sum(998), kInputs);
  for (size_t i = 0; i < kInputs.size(); ++i) EXPECT_EQ(got[i], 998 * kInputs[i]) << i;
}

TEST(Limits, LongerOperatorChainsAreCompileErrors) {
  for (int terms : {1000, 30000, 100000}) {
    CompileError e = error_of(long_sum(terms));
    EXPECT_EQ(e.kernel(), "k");
    EXPECT_EQ(e.line(), 5);
    EXPECT_EQ(e.col(), 8 + 9 + 4 + 7 * 998 + 2) << terms;  // the 999th '+'
    EXPECT_NE(e.message().find("more than 1000 levels"), std::string::npos) << e.what();
  }
}

TEST(Limits, InlinedCallsInsideEachOther) {
  auto got = run(call_chain(100, 1), kInputs);
  for (size_t i = 0; i < kInputs.size(); ++i) EXPECT_EQ(got[i], kInputs[i] + 1) << i;
  for (int n : {101, 300}) {
    CompileError e = error_of(call_chain(n, 1));
    EXPECT_EQ(e.kernel(), fmt::format("f{}", n - 100));  // the 100th function inlined
    EXPECT_EQ(e.line(), 2 + 3 * (n - 100) + 2);
    EXPECT_EQ(e.col(), 12);
    EXPECT_NE(e.message().find("more than 100 @tack.func calls inside each other"),
              std::string::npos)
        << e.what();
  }
}

TEST(Limits, DeepExpressionsAcrossInlinedFunctions) {
  // Five functions of 400 levels each: within the nesting limit.
  auto got = run(call_chain(5, 400), kInputs);
  for (size_t i = 0; i < kInputs.size(); ++i)
    EXPECT_EQ(got[i], kInputs[i] + 1 + 4 * 399 * kInputs[i]) << i;
  // Ten of them: each is within the expression limit, together past the nesting limit.
  CompileError e = error_of(call_chain(10, 400));
  EXPECT_NE(e.message().find("the kernel nests too deeply: more than 3000 levels"),
            std::string::npos)
      << e.what();
  EXPECT_NE(e.hint().find("variables"), std::string::npos);
}

}  // namespace
}  // namespace tack
