// @tack.func device functions, inlined at each call: results against plain C++, and rejections.
#include <fmt/format.h>

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

// A return whose value calls another function inlines that function while the caller's return is
// being lowered; the caller's frame must survive the inner call (it was read after being freed).
TEST(Funcs, ReturnValuesThatCallOtherFunctions) {
  Module m = Module::from_source(
      "import tack\n"
      "@tack.func\ndef inner(v):\n    return v * 2.0\n"
      "@tack.func\ndef direct(v):\n    return inner(v)\n"
      "@tack.func\ndef plus_one(v):\n    return inner(v) + 1.0\n"
      "@tack.func\ndef branches(v):\n    if v > 0.0:\n        return inner(v) + 1.0\n"
      "    return inner(inner(v))\n"
      "@tack.func\ndef pair(v):\n    return inner(v), plus_one(v)\n"
      "@tack.kernel\ndef k(x, a, b, c, d, e):\n    for i in range(x.shape[0]):\n"
      "        a[i] = direct(x[i])\n        b[i] = plus_one(x[i])\n"
      "        c[i] = branches(x[i])\n        d[i], e[i] = pair(x[i])\n");
  const int64_t n = 16;
  std::vector<float> hx(n);
  for (int64_t i = 0; i < n; ++i) hx[i] = static_cast<float>(i) - 7.5f;
  Array x = empty({n}), a = empty({n}), b = empty({n}), c = empty({n}), d = empty({n}),
        e = empty({n});
  copyto(x, hx);
  m.kernel("k")(x, a, b, c, d, e);
  auto A = a.to_vector<float>(), B = b.to_vector<float>(), C = c.to_vector<float>();
  auto D = d.to_vector<float>(), E = e.to_vector<float>();
  for (int64_t i = 0; i < n; ++i) {
    float v = hx[i];
    EXPECT_EQ(A[i], v * 2) << i;
    EXPECT_EQ(B[i], v * 2 + 1) << i;
    EXPECT_EQ(C[i], v > 0 ? v * 2 + 1 : v * 4) << i;
    EXPECT_EQ(D[i], v * 2) << i;
    EXPECT_EQ(E[i], v * 2 + 1) << i;
  }
}

// f0 .. f{n-1}, each returning the previous one's result plus one (under an `if` when `branch`).
std::string call_chain(int n, bool branch) {
  std::string src = "import tack\n@tack.func\ndef f0(a):\n    return a + 1.0\n";
  for (int i = 1; i < n; ++i) {
    src += fmt::format("@tack.func\ndef f{}(a):\n", i);
    if (branch) src += fmt::format("    if a > 1000.0:\n        return f{}(a) - 1.0\n", i - 1);
    src += fmt::format("    return f{}(a) + 1.0\n", i - 1);
  }
  return src + fmt::format(
                   "@tack.kernel\ndef k(x, out):\n    for i in range(x.shape[0]):\n"
                   "        out[i] = f{}(x[i])\n",
                   n - 1);
}

TEST(Funcs, ChainsOfReturnedCalls) {
  const int64_t len = 8;
  std::vector<float> hx(len);
  for (int64_t i = 0; i < len; ++i) hx[i] = static_cast<float>(i * 300);  // some above 1000
  Array x = empty({len});
  copyto(x, hx);
  for (bool branch : {false, true})
    for (int n = 2; n <= 8; ++n) {
      Array out = empty({len});
      Module::from_source(call_chain(n, branch)).kernel("k")(x, out);
      auto got = out.to_vector<float>();
      for (int64_t i = 0; i < len; ++i) {
        // Every function but f0 adds 1, or subtracts 1 on the branch taken above 1000.
        float step = branch && hx[i] > 1000.0f ? -1.0f : 1.0f;
        EXPECT_EQ(got[i], hx[i] + 1.0f + static_cast<float>(n - 1) * step)
            << "chain of " << n << (branch ? " with branches" : "") << ", element " << i;
      }
    }
}

}  // namespace
}  // namespace tack
