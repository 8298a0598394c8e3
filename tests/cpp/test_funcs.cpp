// @tack.func device functions, inlined at each call: results against plain C++, and rejections.
#include "test_support.hpp"

namespace tack {
namespace {

int64_t collatz(int64_t n) {
  int64_t s = 0;
  while (n != 1) {
    n = n % 2 == 0 ? n / 2 : 3 * n + 1;
    ++s;
  }
  return s;
}

TEST(Funcs, InlinedFunctionsComputeWhatCxxComputes) {
  Module m = Module::from_file(test::kernels_dir() + "/funcs.py");
  const int64_t n = 40;
  std::vector<float> hx(n);
  for (int64_t i = 0; i < n; ++i) hx[i] = -0.5f + 0.05f * static_cast<float>(i);
  std::vector<int32_t> hd = {3, 1, 4, 1, -5, 9, -2};
  Array x = empty({n}), data = empty({7}, i32);
  copyto(x, hx);
  copyto(data, hd);
  Array f = empty({n}), q = empty({n}, i32), r = empty({n}, i32), idx = empty({n}, i64),
        w = zeros({n}), c = empty({n}, i64);
  m.kernel("use_funcs")(x, data, f, q, r, idx, w, c);
  auto F = f.to_vector<float>();
  auto Q = q.to_vector<int32_t>(), R = r.to_vector<int32_t>();
  auto I = idx.to_vector<int64_t>(), C = c.to_vector<int64_t>();
  auto W = w.to_vector<float>();
  for (int64_t i = 0; i < n; ++i) {
    float v = hx[i];
    EXPECT_EQ(F[i], v < 0 ? 0.0f : v > 1 ? 1.0f : v) << i;
    int32_t a = static_cast<int32_t>(i) - 5;
    int32_t fq = a / 3 - ((a % 3 != 0) && (a < 0));
    EXPECT_EQ(Q[i], fq) << i;
    EXPECT_EQ(R[i], a - 3 * fq) << i;
    EXPECT_EQ(I[i], 4);
    EXPECT_EQ(W[i], v * 2) << i;
    EXPECT_EQ(C[i], v > 0 && v < 1.0f ? collatz(i + 1) : -1) << i;
  }
}

const char* const kHeader = "import tack\n";

CompileError func_error(const std::string& body) {
  return test::compile_error(std::string(kHeader) + body, "f32[]");
}

TEST(Funcs, RecursionIsRejected) {
  auto e = func_error(
      "@tack.func\ndef f(x):\n    return f(x)\n@tack.kernel\ndef k(x):\n    for i in range(1):\n"
      "        x[i] = f(x[i])\n");
  EXPECT_EQ(e.kernel(), "f");
  EXPECT_EQ(e.line(), 4);
  EXPECT_NE(e.message().find("calls itself"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("error in function 'f'"), std::string::npos) << e.what();
}

TEST(Funcs, TupleResultUsedAsAValue) {
  auto e = func_error(
      "@tack.func\ndef f(x):\n    return x, x\n@tack.kernel\ndef k(x):\n    for i in range(1):\n"
      "        x[i] = f(x[i])\n");
  EXPECT_NE(e.message().find("returns 2 values"), std::string::npos) << e.what();
  EXPECT_NE(e.hint().find("a, b = f(...)"), std::string::npos);
}

TEST(Funcs, BreakOutsideTheFunctionsLoops) {
  auto e = func_error(
      "@tack.func\ndef f(x):\n    break\n@tack.kernel\ndef k(x):\n    for i in range(1):\n"
      "        f(x[i])\n");
  EXPECT_EQ(e.line(), 4);
  EXPECT_NE(e.message().find("'break' outside a loop"), std::string::npos) << e.what();
}

TEST(Funcs, PlainFunctionsAreNotCallable) {
  auto e = func_error(
      "def helper(x):\n    return x\n@tack.kernel\ndef k(x):\n    for i in range(1):\n"
      "        x[i] = helper(x[i])\n");
  EXPECT_NE(e.message().find("host function"), std::string::npos) << e.what();
  EXPECT_NE(e.hint().find("@tack.func"), std::string::npos);
}

TEST(Funcs, ErrorsInsideAFunctionPointAtItsLine) {
  auto e = func_error(
      "@tack.func\ndef f(x):\n    y = x\n    return y + undefined_name\n@tack.kernel\ndef k(x):\n"
      "    for i in range(1):\n        x[i] = f(x[i])\n");
  EXPECT_EQ(e.kernel(), "f");
  EXPECT_EQ(e.line(), 5);
  EXPECT_EQ(e.col(), 16);
}

TEST(Funcs, WrongArgumentCount) {
  auto e = func_error(
      "@tack.func\ndef f(x, y):\n    return x\n@tack.kernel\ndef k(x):\n    for i in range(1):\n"
      "        x[i] = f(x[i])\n");
  EXPECT_NE(e.message().find("f() takes 2 arguments, not 1"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace tack
