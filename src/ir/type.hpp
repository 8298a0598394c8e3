// The types of values in the typed IR.
#pragma once

#include <cstdint>
#include <string>

#include "tack/dtype.hpp"

namespace tack::ir {

// A value's type. Scalars are the common case; vectors and matrices share the layout (lanes and
// rows) so the language issue can add them without touching every stage; arrays are kernel
// parameters only (an array's element dtype and rank).
struct Type {
  enum class Kind : uint8_t { Void, Scalar, Vector, Matrix, Array };
  Kind kind = Kind::Void;
  DType dtype = DType::I32;  // element type
  uint8_t lanes = 1;         // vector width, or matrix columns
  uint8_t rows = 1;          // matrix rows
  uint8_t rank = 0;          // array rank

  static Type void_() { return {}; }
  static Type scalar(DType d) { return {Kind::Scalar, d, 1, 1, 0}; }
  static Type array(DType d, int rank) {
    return {Kind::Array, d, 1, 1, static_cast<uint8_t>(rank)};
  }
  static Type bool_() { return scalar(DType::Bool); }
  static Type i64() { return scalar(DType::I64); }

  bool is_void() const { return kind == Kind::Void; }
  bool is_scalar() const { return kind == Kind::Scalar; }
  bool is_array() const { return kind == Kind::Array; }
  bool is_bool() const { return is_scalar() && dtype == DType::Bool; }
  bool is_int() const { return is_scalar() && is_integer(dtype); }
  bool is_float() const { return is_scalar() && tack::is_float(dtype); }

  friend bool operator==(const Type&, const Type&) = default;
};

// "f32", "i64[,]" (an array of rank 2), "void".
std::string to_string(const Type& t);

}  // namespace tack::ir
