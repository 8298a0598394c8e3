// The CPU backend's estimate of one parallel iteration's work (backends/cpu/work_estimate.hpp),
// which decides whether a launch uses the thread pool: inner loops count their trip counts where
// the launch's scalars and extents give them.
#include "backends/cpu/work_estimate.hpp"

#include "test_support.hpp"

namespace tack {
namespace {

// The launch of `k` over [0, n) with `scalars` as its integer parameters (in order, after the
// arrays) and every array of extent `extent`.
int64_t steps(const ir::Kernel& k, int64_t n, std::vector<int64_t> scalars, int64_t extent) {
  detail::LaunchArgs a;
  const int64_t shape[3] = {extent, extent, extent};
  size_t next = 0;
  for (const ir::Param& p : k.params) {
    detail::LaunchArgs::Param lp;
    if (p.type.is_array()) {
      lp.shape = shape;
    } else if (next < scalars.size()) {
      lp.scalar = static_cast<uint64_t>(scalars[next++]);
    }
    a.params.push_back(lp);
  }
  a.start = {0};
  a.step = {1};
  a.count = {n};
  return cpu::steps_per_iteration(k, a);
}

TEST(WorkEstimate, ABlockPerIterationCountsTheBlock) {
  ir::Kernel k = test::specialize(
      "import tack\n@tack.kernel\ndef k(x, counts, bs):\n"
      "    for c in range(counts.shape[0]):\n"
      "        for i in range(c * bs, min(c * bs + bs, x.shape[0])):\n"
      "            counts[c] += x[i]\n",
      "i32[],i32[],i64");
  EXPECT_EQ(steps(k, 64, {16384}, 1 << 20), 16384);
  // The last block is shorter: the first and last iterations are averaged.
  EXPECT_EQ(steps(k, 2, {1000}, 1500), 750);
}

TEST(WorkEstimate, NestedTriangularAndUnknownLoops) {
  ir::Kernel nested = test::specialize(
      "import tack\n@tack.kernel\ndef k(a, n):\n"
      "    for i in range(a.shape[0]):\n"
      "        m = n * 2\n"
      "        for j in range(m):\n"
      "            for q in range(0, 10, 3):\n"
      "                a[i] += 1.0\n",
      "f32[],i32");
  EXPECT_EQ(steps(nested, 100, {5}, 100), 10 * 4);
  ir::Kernel triangle = test::specialize(
      "import tack\n@tack.kernel\ndef k(a):\n"
      "    for i in range(a.shape[0]):\n"
      "        for j in range(i):\n"
      "            a[i] += 1.0\n",
      "f32[]");
  EXPECT_EQ(steps(triangle, 101, {}, 101), 50);
  ir::Kernel loops = test::specialize(
      "import tack\n@tack.kernel\ndef k(a, idx):\n"
      "    for i in range(a.shape[0]):\n"
      "        for j in range(idx[i]):\n"  // bounds read memory: unknown, 64
      "            a[i] += 1.0\n"
      "        while a[i] < 100.0:\n"  // 64
      "            a[i] += 1.0\n",
      "f32[],i32[]");
  EXPECT_EQ(steps(loops, 10, {}, 10), 128);
  ir::Kernel flat = test::specialize(
      "import tack\n@tack.kernel\ndef k(a):\n"
      "    for i in range(a.shape[0]):\n"
      "        a[i] = 1.0\n",
      "f32[]");
  EXPECT_EQ(steps(flat, 10, {}, 10), 1);
  EXPECT_EQ(steps(flat, 0, {}, 0), 1);  // an empty launch
}

}  // namespace
}  // namespace tack
