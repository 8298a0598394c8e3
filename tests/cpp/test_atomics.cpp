// Atomics on the CPU: results, old values, contention across threads, rejections.
#include <random>

#include "test_support.hpp"

namespace tack {
namespace {

Module atomics() {
  return Module::from_file(test::kernels_dir() + "/atomics.py");
}

TEST(Atomics, HistogramUnderContention) {
  const int64_t n = 1 << 20;
  const int32_t bins = 16;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(-0.1f, 1.1f);
  std::vector<float> hv(n);
  for (auto& v : hv) v = d(rng);
  Array values = empty({n}), counts = zeros({bins}, i32);
  copyto(values, hv);
  atomics().kernel("histogram")(values, bins, counts);
  std::vector<int32_t> want(bins, 0);
  for (float v : hv) {
    int32_t b = static_cast<int32_t>(v * bins);
    if (0 <= b && b < bins) want[b]++;
  }
  EXPECT_EQ(counts.to_vector<int32_t>(), want);
}

TEST(Atomics, EveryOperationReturnsTheOldValue) {
  std::vector<int32_t> init = {1, 2, 3, 4, 5, 5, 5, 7, 10, 10};
  Array x = empty({10}, i32), out = zeros({10}, i32);
  copyto(x, init);
  atomics().kernel("every_op")(x, out);
  EXPECT_EQ(out.to_vector<int32_t>(), init);
  EXPECT_EQ(x.to_vector<int32_t>(),
            (std::vector<int32_t>{6, -1, -7, 9, 5 & 6, 5 | 6, 5 ^ 6, 42, 11, 10}));
}

TEST(Atomics, FloatAddOnA2DArray) {
  const int64_t n = 100000;
  Array x = full({n}, 0.5), total = zeros({1, 1});
  atomics().kernel("float_sum")(x, total);
  EXPECT_EQ(total.item({0, 0}), 50000.0);  // exact: every partial sum is a multiple of 0.5
}

TEST(Atomics, DebugModeChecksTheIndex) {
  Array values = full({8}, 0.5), counts = zeros({4}, i32);  // bin 4 of 9: past the end
  set_debug(true);
  EXPECT_THROW(
      {
        atomics().kernel("histogram")(values, 9, counts);
        sync();  // an asynchronous backend reports at the next synchronization
      },
      IndexError);
  set_debug(false);
  EXPECT_EQ(counts.sum(), 0);
}

CompileError atomic_error(const std::string& line, const std::string& args) {
  return test::compile_error(
      "import tack\n@tack.kernel\ndef k(x, y):\n    for i in range(4):\n        " + line + "\n",
      args);
}

TEST(Atomics, Rejections) {
  auto e = atomic_error("tack.atomic_and(x, i, 1)", "f32[],f32[]");
  EXPECT_NE(e.message().find("needs an integer array, not f32"), std::string::npos) << e.what();
  e = atomic_error("tack.atomic_add(x, i, 1)", "bool[],f32[]");
  EXPECT_NE(e.message().find("the CPU has no atomics on bool arrays"), std::string::npos)
      << e.what();
  e = atomic_error("tack.atomic_add(3, i, 1)", "f32[],f32[]");
  EXPECT_NE(e.message().find("must be an array argument"), std::string::npos) << e.what();
  e = atomic_error("tack.atomic_cas(x, i, 1)", "i32[],f32[]");
  EXPECT_NE(e.hint().find("atomic_cas(array, index, expected, desired)"), std::string::npos);
  e = atomic_error("tack.atomic_add(x, i, y[i])", "i32[],f32[]");
  EXPECT_NE(e.message().find("cannot store f32 into array 'x'"), std::string::npos) << e.what();
  EXPECT_THROW(test::specialize("import tack\n@tack.kernel\ndef k(x, y):\n    for i in range(4):\n"
                                "        tack.atomic_add(x, i, 1)\n",
                                "i32[,],f32[]"),
               TypeError);
  auto outside = test::compile_error(
      "import tack\n@tack.kernel\ndef k(x) -> tack.i32:\n    for i in range(4):\n        pass\n"
      "    return tack.atomic_add(x, 0, 1)\n",
      "i32[]");
  EXPECT_NE(outside.message().find("only allowed inside the parallel loop"), std::string::npos);
}

}  // namespace
}  // namespace tack
