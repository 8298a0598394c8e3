// Index ranges proven at launch (ir/index_ranges.hpp, runtime/launch_bounds.cpp): a launch whose
// affine accesses would leave an array is refused with an IndexError before anything runs, and
// correct kernels, guarded accesses and empty launches still run. On every available device.
#include <cstring>

#include "ir/index_ranges.hpp"
#include "test_support.hpp"

namespace tack {
namespace {

class LaunchBounds : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    for (const BackendStatus& s : backend_status())
      if (s.name == GetParam() && !s.available) GTEST_SKIP() << s.reason;
    dev_ = device(GetParam());
  }
  Array filled(int64_t n, float v, Shape shape = {}) {
    Array a = full(shape.empty() ? Shape{n} : shape, v, DType::F32, &dev_);
    return a;
  }
  Kernel kernel(const std::string& body, const std::string& params) {
    return Module::from_source("import tack\n@tack.kernel\ndef k(" + params + "):\n" + body,
                               "bounds.py")
        .kernel("k");
  }
  // The IndexError of `f`, or "" when it raised none.
  template <typename F>
  std::string refusal(F&& f) {
    try {
      f();
      sync();
    } catch (const IndexError& e) {
      return e.what();
    }
    return "";
  }
  Device dev_;
};

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// The case that crashed: out shorter than the loop over x.
TEST_P(LaunchBounds, ShortOutputIsRefusedBeforeAnythingRuns) {
  Kernel k = kernel("    for i in range(x.shape[0]):\n        out[i] = x[i] + y[i]\n", "x, y, out");
  Array x = filled(1000000, 1), y = filled(1000000, 2), out = filled(4, 7);
  std::string w = refusal([&] { k(x, y, out); });
  EXPECT_TRUE(contains(w, "bounds.py:5:9: in kernel 'k'")) << w;
  EXPECT_TRUE(contains(w, "store to 'out' at indices 0 to 999999 in dimension 0")) << w;
  EXPECT_TRUE(contains(w, "its shape is (4,)")) << w;
  EXPECT_TRUE(contains(w, "nothing ran")) << w;
  EXPECT_EQ(out.to_vector<float>(), std::vector<float>(4, 7.0f));
  // An input shorter than the loop is refused too.
  Array out2 = filled(1000000, 0), short_y = filled(8, 2);
  w = refusal([&] { k(x, short_y, out2); });
  EXPECT_TRUE(contains(w, "load from 'y' at indices 0 to 999999")) << w;
  EXPECT_EQ(out2.sum(), 0.0);
}

TEST_P(LaunchBounds, OffByOneAtEachEnd) {
  Kernel hi = kernel("    for i in range(n):\n        out[i] = x[i + 1]\n", "x, out, n");
  Kernel lo = kernel("    for i in range(n):\n        out[i] = x[i - 1]\n", "x, out, n");
  Array x = filled(8, 1), out = filled(8, 0);
  std::string w = refusal([&] { hi(x, out, 8); });
  EXPECT_TRUE(contains(w, "load from 'x' at indices 1 to 8 in dimension 0")) << w;
  EXPECT_EQ(refusal([&] { hi(x, out, 7); }), "");
  w = refusal([&] { lo(x, out, 8); });
  EXPECT_TRUE(contains(w, "load from 'x' at indices -1 to 6 in dimension 0")) << w;
  EXPECT_EQ(out.sum(), 7.0);  // only the accepted launch wrote
}

// The stencil that must still run: i - 1 and i + 1 under range(1, n - 1).
TEST_P(LaunchBounds, StencilUnderAnInnerRangeRuns) {
  Kernel k = kernel(
      "    for i in range(1, x.shape[0] - 1):\n"
      "        out[i] = x[i - 1] + x[i] + x[i + 1]\n",
      "x, out");
  Array x = arange(10, DType::F32, &dev_), out = filled(10, 0);
  EXPECT_EQ(refusal([&] { k(x, out); }), "");
  auto r = out.to_vector<float>();
  for (int i = 1; i < 9; ++i) EXPECT_EQ(r[i], 3.0f * i);
  EXPECT_EQ(r[0], 0.0f);
}

TEST_P(LaunchBounds, EachNdrangeDimension) {
  Kernel k = kernel(
      "    for i, j in tack.ndrange((1, h - 1), (1, w - 1)):\n"
      "        out[i, j] = u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1]\n",
      "u, out, h, w");
  Array u = filled(0, 1, {6, 5}), out = filled(0, 0, {6, 5});
  EXPECT_EQ(refusal([&] { k(u, out, 6, 5); }), "");
  EXPECT_EQ(out.sum(), 4.0 * 4 * 3);
  std::string w = refusal([&] { k(u, out, 7, 5); });
  EXPECT_TRUE(contains(w, "load from 'u' at indices 2 to 6 in dimension 0")) << w;  // i + 1
  EXPECT_TRUE(contains(w, "shape is (6, 5)")) << w;
  w = refusal([&] { k(u, out, 6, 6); });
  EXPECT_TRUE(contains(w, "load from 'u' at indices 2 to 5 in dimension 1")) << w;  // j + 1
}

TEST_P(LaunchBounds, ScalarArgumentOffsetAndScale) {
  Kernel k = kernel("    for i in range(n):\n        out[i] = x[2 * i + c]\n", "x, out, n, c");
  Array x = arange(10, DType::F32, &dev_), out = filled(4, 0);
  EXPECT_EQ(refusal([&] { k(x, out, 4, 3); }), "");  // 3, 5, 7, 9
  EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{3, 5, 7, 9}));
  std::string w = refusal([&] { k(x, out, 4, 4); });
  EXPECT_TRUE(contains(w, "load from 'x' at indices 4 to 10")) << w;
  w = refusal([&] { k(x, out, 4, -1); });
  EXPECT_TRUE(contains(w, "indices -1 to 5")) << w;
}

TEST_P(LaunchBounds, StepCountsOnlyTheIndicesVisited) {
  Kernel k = kernel("    for i in range(0, n, s):\n        out[i // s] = x[i]\n", "x, out, n, s");
  Kernel k2 = kernel("    for i in range(1, n, 3):\n        out[i] = x[i]\n", "x, out, n");
  Array x = filled(10, 1), out = filled(10, 0);
  // range(1, 11, 3) visits 1, 4, 7, 10: the last is out of bounds; range(1, 10, 3) stops at 7.
  EXPECT_EQ(refusal([&] { k2(x, out, 10); }), "");
  std::string w = refusal([&] { k2(x, out, 11); });
  EXPECT_TRUE(contains(w, "indices 1 to 10")) << w;
  EXPECT_EQ(refusal([&] { k(x, out, 10, 4); }), "");  // 0, 4, 8
}

TEST_P(LaunchBounds, EmptyLaunchRunsNothingWithoutComplaint) {
  Kernel k = kernel("    for i in range(n):\n        out[i] = x[i + 5]\n", "x, out, n");
  Array x = filled(0, 1, {0}), out = filled(0, 0, {0});
  EXPECT_EQ(refusal([&] { k(x, out, 0); }), "");
}

TEST_P(LaunchBounds, InnerLoopsWithHostBounds) {
  Kernel k = kernel(
      "    for i in range(out.shape[0]):\n"
      "        s = 0.0\n"
      "        for t in range(taps):\n"
      "            s += x[i + t]\n"
      "        out[i] = s\n",
      "x, out, taps");
  Array x = filled(10, 1), out = filled(8, 0);
  EXPECT_EQ(refusal([&] { k(x, out, 3); }), "");
  EXPECT_EQ(out.sum(), 24.0);
  std::string w = refusal([&] { k(x, out, 4); });
  EXPECT_TRUE(contains(w, "load from 'x' at indices 0 to 10")) << w;
  // No taps: the inner loop never runs, nor does its access.
  EXPECT_EQ(refusal([&] { k(x, out, 0); }), "");
  // A reversed inner loop, and a negative coefficient: out[n - 1 - i] reverses.
  Kernel rev = kernel(
      "    for i in range(n):\n"
      "        for t in range(m - 1, -1, -1):\n"
      "            out[n - 1 - i] = x[t]\n",
      "x, out, n, m");
  EXPECT_EQ(refusal([&] { rev(x, out, 8, 10); }), "");
  w = refusal([&] { rev(x, out, 8, 11); });
  EXPECT_TRUE(contains(w, "load from 'x' at indices 0 to 10")) << w;
  w = refusal([&] { rev(x, out, 9, 10); });
  EXPECT_TRUE(contains(w, "store to 'out' at indices 0 to 8")) << w;
}

TEST_P(LaunchBounds, LocalsAssignedOnceAreFollowed) {
  Kernel k = kernel(
      "    half = n // 2\n"
      "    for i in range(half):\n"
      "        j = i + half\n"
      "        out[i] = x[j]\n",
      "x, out, n");
  Array x = filled(8, 1), out = filled(8, 0);
  EXPECT_EQ(refusal([&] { k(x, out, 8); }), "");
  std::string w = refusal([&] { k(x, out, 10); });  // j reaches 9
  EXPECT_TRUE(contains(w, "load from 'x' at indices 5 to 9")) << w;
}

// Accesses the program guards itself are not refused: under an `if`, after a `continue`, in a
// loop that may break, in one arm of a conditional expression.
TEST_P(LaunchBounds, GuardedAccessesStillRun) {
  Kernel guarded = kernel(
      "    for i in range(n):\n"
      "        if i < x.shape[0]:\n"
      "            out[i] = x[i]\n",
      "x, out, n");
  Kernel cont = kernel(
      "    for i in range(n):\n"
      "        if i >= x.shape[0]:\n"
      "            continue\n"
      "        out[i] = x[i]\n",
      "x, out, n");
  Kernel arm = kernel(
      "    for i in range(n):\n"
      "        out[i] = x[i - 1] if i > 0 else 0.0\n",
      "x, out, n");
  Kernel brk = kernel(
      "    for i in range(out.shape[0]):\n"
      "        s = 0.0\n"
      "        for t in range(1000):\n"
      "            v = x[t]\n"
      "            if v < 0.0:\n"
      "                break\n"
      "            s += v\n"
      "        out[i] = s\n",
      "x, out");
  Array x = filled(4, 1), out = filled(8, 0);
  EXPECT_EQ(refusal([&] { guarded(x, out, 8); }), "");
  EXPECT_EQ(out.sum(), 4.0);
  EXPECT_EQ(refusal([&] { cont(x, out, 8); }), "");
  EXPECT_EQ(refusal([&] { arm(x, out, 4); }), "");
  std::vector<float> sentinel = {1, 2, -1, 0};
  copyto(x, sentinel);
  EXPECT_EQ(refusal([&] { brk(x, out); }), "");
  EXPECT_EQ(out.to_vector<float>()[7], 3.0f);
}

TEST_P(LaunchBounds, AtomicsAreProvenToo) {
  Kernel k = kernel("    for i in range(n):\n        tack.atomic_add(out, i, 1.0)\n", "out, n");
  Array out = filled(4, 0);
  std::string w = refusal([&] { k(out, 5); });
  EXPECT_TRUE(contains(w, "store to 'out' at indices 0 to 4")) << w;
  EXPECT_EQ(out.sum(), 0.0);
}

std::vector<std::string> devices_to_test() {
  return {"cpu", "opencl"};
}

INSTANTIATE_TEST_SUITE_P(Devices, LaunchBounds, testing::ValuesIn(devices_to_test()),
                         [](const auto& info) { return info.param; });

// The analysis itself: which accesses it records.
TEST(IndexRanges, RecordsAffineUnconditionalAccessesOnly) {
  ir::Kernel k = test::specialize(
      "import tack\n@tack.kernel\ndef k(x, idx, out, n):\n"
      "    for i in range(n):\n"
      "        a = x[idx[i]]\n"  // idx[i] proven, x[idx[i]] not
      "        if a > 0.0:\n"
      "            out[i] = a\n"      // guarded
      "        out[i] = x[i * i]\n",  // not affine; the store is
      "f32[],i32[],f32[],i32");
  ir::IndexProof p = ir::prove_index_ranges(k);
  ASSERT_EQ(p.accesses.size(), 2u);
  EXPECT_EQ(k.params[p.accesses[0].array].name, "idx");
  EXPECT_EQ(k.params[p.accesses[1].array].name, "out");
  EXPECT_TRUE(p.accesses[1].is_store);
}

// Sema moves every 16 levels of a deep expression into a temporary (docs/language.md, "Limits"),
// each assigned once, so a 200-term index is followed through them and proven like a short one.
TEST_P(LaunchBounds, DeepIndicesAreFollowedThroughTemporaries) {
  std::string sum = "i";
  for (int t = 0; t < 200; ++t) sum += " + 1";
  Kernel k =
      kernel("    for i in range(out.shape[0]):\n        out[i] = x[" + sum + "]\n", "x, out");
  Array out = filled(4, 0);
  Array x = filled(204, 1);  // indices 200 to 203
  EXPECT_EQ(refusal([&] { k(x, out); }), "");
  Array short_x = filled(203, 1);
  std::string w = refusal([&] { k(short_x, out); });
  EXPECT_TRUE(contains(w, "load from 'x' at indices 200 to 203")) << w;
}

}  // namespace
}  // namespace tack
