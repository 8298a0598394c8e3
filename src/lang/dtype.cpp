#include <string>

#include "tack/dtype.hpp"

namespace tack {

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::Bool:
      return "bool";
    case DType::I8:
      return "i8";
    case DType::U8:
      return "u8";
    case DType::I16:
      return "i16";
    case DType::U16:
      return "u16";
    case DType::I32:
      return "i32";
    case DType::U32:
      return "u32";
    case DType::I64:
      return "i64";
    case DType::U64:
      return "u64";
    case DType::F32:
      return "f32";
    case DType::F64:
      return "f64";
  }
  return "?";
}

std::optional<DType> dtype_from_name(std::string_view name) {
  for (DType t : kAllDTypes)
    if (name == dtype_name(t)) return t;
  struct Alias {
    std::string_view name;
    DType t;
  };
  static constexpr Alias aliases[] = {
      {"bool_", DType::Bool},  {"int8", DType::I8},     {"uint8", DType::U8},
      {"int16", DType::I16},   {"uint16", DType::U16},  {"int32", DType::I32},
      {"uint32", DType::U32},  {"int64", DType::I64},   {"uint64", DType::U64},
      {"float32", DType::F32}, {"float64", DType::F64}, {"float", DType::F32},
      {"int", DType::I32},     {"double", DType::F64},
  };
  for (const Alias& a : aliases)
    if (name == a.name) return a.t;
  return std::nullopt;
}

}  // namespace tack
