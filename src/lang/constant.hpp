// A constant a kernel uses: a module's tack.constant, or a number a device class declares.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lang/source.hpp"
#include "tack/dtype.hpp"

namespace tack::lang {

// A `tack.constant(value, dtype=None)` declared at module level. Its value is folded when the
// module is loaded; constants are baked into the code at compilation.
struct Constant {
  std::string name;
  SourceLoc loc;
  bool is_float = false;
  bool is_bool = false;
  int64_t int_value = 0;
  uint64_t uint_value = 0;  // exact value of a non-negative integer (may exceed int64)
  double float_value = 0;
  std::optional<DType> dtype;  // given explicitly; otherwise the constant is weak like a literal
  // A vector constant, tack.constant((x, y, z)): its 2 to 4 components (scalars); the fields
  // above are unused then.
  std::vector<Constant> components;
};

}  // namespace tack::lang
