// Scalar element types.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tack {

enum class DType : uint8_t { Bool, I8, U8, I16, U16, I32, U32, I64, U64, F32, F64 };

inline constexpr DType bool_ = DType::Bool;
inline constexpr DType i8 = DType::I8;
inline constexpr DType u8 = DType::U8;
inline constexpr DType i16 = DType::I16;
inline constexpr DType u16 = DType::U16;
inline constexpr DType i32 = DType::I32;
inline constexpr DType u32 = DType::U32;
inline constexpr DType i64 = DType::I64;
inline constexpr DType u64 = DType::U64;
inline constexpr DType f32 = DType::F32;
inline constexpr DType f64 = DType::F64;

inline constexpr DType kAllDTypes[] = {DType::Bool, DType::I8,  DType::U8,  DType::I16,
                                       DType::U16,  DType::I32, DType::U32, DType::I64,
                                       DType::U64,  DType::F32, DType::F64};

// "f32", "u8", "bool"...
std::string_view dtype_name(DType t);
// Accepts Tack's names and NumPy's ("float32", "int64", "uint8", "bool", "float", "int").
std::optional<DType> dtype_from_name(std::string_view name);

constexpr int dtype_size(DType t) {
  switch (t) {
    case DType::Bool:
    case DType::I8:
    case DType::U8:
      return 1;
    case DType::I16:
    case DType::U16:
      return 2;
    case DType::I32:
    case DType::U32:
    case DType::F32:
      return 4;
    case DType::I64:
    case DType::U64:
    case DType::F64:
      return 8;
  }
  return 0;
}
constexpr int dtype_bits(DType t) {
  return dtype_size(t) * 8;
}
constexpr bool is_float(DType t) {
  return t == DType::F32 || t == DType::F64;
}
constexpr bool is_bool(DType t) {
  return t == DType::Bool;
}
constexpr bool is_integer(DType t) {
  return !is_float(t) && !is_bool(t);
}
constexpr bool is_signed(DType t) {
  return t == DType::I8 || t == DType::I16 || t == DType::I32 || t == DType::I64 || is_float(t);
}
constexpr bool is_unsigned(DType t) {
  return is_integer(t) && !is_signed(t);
}

// The C++ type of each dtype, for templates such as Array::to_vector<T>.
template <typename T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<bool>() {
  return DType::Bool;
}
template <>
constexpr DType dtype_of<int8_t>() {
  return DType::I8;
}
template <>
constexpr DType dtype_of<uint8_t>() {
  return DType::U8;
}
template <>
constexpr DType dtype_of<int16_t>() {
  return DType::I16;
}
template <>
constexpr DType dtype_of<uint16_t>() {
  return DType::U16;
}
template <>
constexpr DType dtype_of<int32_t>() {
  return DType::I32;
}
template <>
constexpr DType dtype_of<uint32_t>() {
  return DType::U32;
}
template <>
constexpr DType dtype_of<int64_t>() {
  return DType::I64;
}
template <>
constexpr DType dtype_of<uint64_t>() {
  return DType::U64;
}
template <>
constexpr DType dtype_of<float>() {
  return DType::F32;
}
template <>
constexpr DType dtype_of<double>() {
  return DType::F64;
}

}  // namespace tack
