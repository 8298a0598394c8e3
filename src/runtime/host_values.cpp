#include "runtime/host_values.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace tack::detail {
namespace {

template <typename T>
T load(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T>
void store(void* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

// Float to integer as the generated code does it (LLVM's fptosi.sat).
template <typename T>
T saturate(double v) {
  if (std::isnan(v)) return 0;
  if (v <= static_cast<double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

}  // namespace

double host_to_double(DType t, const void* src) {
  switch (t) {
    case DType::Bool:
      return load<uint8_t>(src) != 0;
    case DType::I8:
      return load<int8_t>(src);
    case DType::U8:
      return load<uint8_t>(src);
    case DType::I16:
      return load<int16_t>(src);
    case DType::U16:
      return load<uint16_t>(src);
    case DType::I32:
      return load<int32_t>(src);
    case DType::U32:
      return load<uint32_t>(src);
    case DType::I64:
      return static_cast<double>(load<int64_t>(src));
    case DType::U64:
      return static_cast<double>(load<uint64_t>(src));
    case DType::F32:
      return load<float>(src);
    case DType::F64:
      return load<double>(src);
  }
  return 0;
}

void host_from_double(double v, DType t, void* dst) {
  switch (t) {
    case DType::Bool:
      store<uint8_t>(dst, v != 0);
      break;
    case DType::I8:
      store(dst, saturate<int8_t>(v));
      break;
    case DType::U8:
      store(dst, saturate<uint8_t>(v));
      break;
    case DType::I16:
      store(dst, saturate<int16_t>(v));
      break;
    case DType::U16:
      store(dst, saturate<uint16_t>(v));
      break;
    case DType::I32:
      store(dst, saturate<int32_t>(v));
      break;
    case DType::U32:
      store(dst, saturate<uint32_t>(v));
      break;
    case DType::I64:
      store(dst, saturate<int64_t>(v));
      break;
    case DType::U64:
      store(dst, saturate<uint64_t>(v));
      break;
    case DType::F32:
      store(dst, static_cast<float>(v));
      break;
    case DType::F64:
      store(dst, v);
      break;
  }
}

void host_convert(DType from, const void* src, DType to, void* dst) {
  // Integer to integer keeps every bit that fits (wrapping), as the language's casts do.
  if (is_integer(from) && is_integer(to)) {
    uint64_t bits = 0;
    std::memcpy(&bits, src, dtype_size(from));
    if (is_signed(from) && dtype_size(from) < 8 && (bits >> (dtype_bits(from) - 1)) & 1)
      bits |= ~uint64_t{0} << dtype_bits(from);
    std::memcpy(dst, &bits, dtype_size(to));
    return;
  }
  host_from_double(host_to_double(from, src), to, dst);
}

}  // namespace tack::detail
