// The launch-time half of the index-range proof (ir/index_ranges.hpp): before a launch, the
// ranges of the proven accesses are evaluated from the launch's own bounds, scalars and shapes,
// and a launch that would index outside an array is refused before anything runs.
#pragma once

#include "ir/index_ranges.hpp"
#include "ir/passes.hpp"
#include "runtime/backend.hpp"

namespace tack::detail {

// Throws IndexError naming the kernel, the access (file, line, column), the array, the dimension,
// the index range and the shape. `launch` holds the evaluated parallel-loop bounds and the
// arguments; `column_offset` is the kernel source's column in its file.
void check_index_ranges(const ir::Kernel& k, const ir::IndexProof& proof,
                        const ir::HostValues& values, const LaunchArgs& launch, int column_offset);

}  // namespace tack::detail
