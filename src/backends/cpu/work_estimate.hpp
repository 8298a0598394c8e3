// How much work one iteration of the parallel loop does, for the CPU backend's choice between the
// caller's thread and the pool (and of the chunks the pool hands out). A kernel that runs a block
// per iteration (tack.algorithms' scans, sorts and histograms: `for k in range(c * bs, min(c * bs
// + bs, n))`) has few iterations, each of thousands of steps; counted as a few steps each, such a
// launch stayed on one thread.
#pragma once

#include <cstdint>

#include "backends/backend.hpp"
#include "ir/ir.hpp"

namespace tack::cpu {

// The steps of one iteration of `k`'s parallel loop at launch `a`: each inner `for` counts its
// trip count (evaluated from the launch's scalars and extents at the parallel loop's first and
// last iterations, and averaged) times its body's steps; a `while`, or a `for` whose bounds read
// anything else, counts 64 times its body. At least 1, at most 2^40.
int64_t steps_per_iteration(const ir::Kernel& k, const detail::LaunchArgs& a);

}  // namespace tack::cpu
