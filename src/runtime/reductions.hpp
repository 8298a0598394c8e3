// Array reductions (sum, min, max) computed on the device, as Tack kernels with workgroup trees,
// on backends that declare supports_device_reductions. See docs/backends.md, "Device reductions".
#pragma once

#include <optional>

#include "tack/array.hpp"

namespace tack::detail {

enum class Reduction { Sum, Min, Max };

// The dtype a reduction accumulates (and returns) in: for sums i64 for bools and signed
// integers, u64 for unsigned ones, the array's dtype for floats (NumPy's rule); for min and max
// i64 or u64 for integers (every value is exact there), the dtype for floats.
DType reduction_dtype(DType input, Reduction op);

// The reduction of every element of `a` computed on its device, or nothing when the array's
// backend has no device reductions or cannot compute in the accumulator dtype (the caller then
// reduces on the host). `a` must not be empty.
std::optional<double> device_reduce(const Array& a, Reduction op);

}  // namespace tack::detail
