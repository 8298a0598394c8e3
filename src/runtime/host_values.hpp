// Converting single values between dtypes on the host, with the language's conversion rules
// (floats to integers truncate toward zero and saturate; NaN gives 0).
#pragma once

#include "tack/dtype.hpp"

namespace tack::detail {

double host_to_double(DType t, const void* src);
void host_from_double(double v, DType t, void* dst);
void host_convert(DType from, const void* src, DType to, void* dst);

}  // namespace tack::detail
