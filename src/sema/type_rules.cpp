#include "sema/type_rules.hpp"

#include <algorithm>

namespace tack::sema {
namespace {

DType signed_of_bits(int bits) {
  switch (bits) {
    case 8:
      return DType::I8;
    case 16:
      return DType::I16;
    case 32:
      return DType::I32;
    default:
      return DType::I64;
  }
}

DType wider(DType a, DType b) {
  return dtype_bits(a) >= dtype_bits(b) ? a : b;
}

}  // namespace

std::optional<DType> promote(DType a, DType b) {
  if (a == b) return a == DType::Bool ? DType::I32 : a;
  if (a == DType::Bool) return b;
  if (b == DType::Bool) return a;
  if (is_float(a) || is_float(b)) {
    if (is_float(a) && is_float(b)) return wider(a, b);
    return is_float(a) ? a : b;
  }
  if (is_signed(a) == is_signed(b)) return wider(a, b);
  DType s = is_signed(a) ? a : b;
  DType u = is_signed(a) ? b : a;
  if (dtype_bits(s) > dtype_bits(u)) return s;
  if (u == DType::U64) return std::nullopt;
  return signed_of_bits(dtype_bits(u) * 2);
}

bool int_fits(DType t, bool negative, uint64_t v) {
  if (t == DType::Bool || is_float(t)) return false;
  int bits = dtype_bits(t);
  if (negative) {
    if (!is_signed(t)) return false;
    // v is the two's-complement bits of a negative int64.
    int64_t x = static_cast<int64_t>(v);
    return bits == 64 || x >= -(int64_t{1} << (bits - 1));
  }
  if (is_signed(t))
    return bits == 64 ? v <= static_cast<uint64_t>(INT64_MAX) : v < (uint64_t{1} << (bits - 1));
  return bits == 64 || v < (uint64_t{1} << bits);
}

DType literal_int_type(bool negative, uint64_t v) {
  if (int_fits(DType::I32, negative, v)) return DType::I32;
  if (int_fits(DType::I64, negative, v)) return DType::I64;
  return DType::U64;
}

bool widens_exactly(DType from, DType to) {
  if (from == to) return true;
  if (to == DType::Bool) return false;
  if (from == DType::Bool) return true;
  if (is_float(to)) return !is_float(from) || dtype_bits(to) >= dtype_bits(from);
  if (is_float(from)) return false;
  // Integer to integer: every value of `from` must be representable in `to`.
  if (is_signed(from) == is_signed(to)) return dtype_bits(to) >= dtype_bits(from);
  if (is_signed(from)) return false;  // negative values do not fit an unsigned type
  return dtype_bits(to) > dtype_bits(from);
}

bool stores_same_kind(DType from, DType to) {
  if (from == to || from == DType::Bool) return true;
  if (to == DType::Bool) return false;
  if (is_float(from)) return is_float(to);
  return true;
}

}  // namespace tack::sema
