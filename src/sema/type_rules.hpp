// The typing rules of the kernel language (spec: Types, Arithmetic semantics), as pure functions
// of dtypes so that they can be tested one by one and shared by every stage that needs them.
#pragma once

#include <cstdint>
#include <optional>

#include "tack/dtype.hpp"

namespace tack::sema {

// The narrowest type that holds both operands' ranges: same signedness takes the wider;
// signed with unsigned takes a signed type wider than the unsigned one (i32 + u32 is i64);
// an integer with a float takes the float; f32 with f64 is f64; bool acts as the other operand's
// type (two bools give i32, as True + True == 2). nullopt where no type holds both: a signed
// integer with u64.
std::optional<DType> promote(DType a, DType b);

// Whether an integer value (given as its exact 65-bit value: negative, or up to 2^64-1) fits t.
bool int_fits(DType t, bool negative, uint64_t magnitude_or_bits);

// The type of a weak integer literal standing alone: i32 if it fits, else i64, else u64.
DType literal_int_type(bool negative, uint64_t magnitude_or_bits);

// Whether assigning a value of type `from` to a local of type `to` is exact in kind: the same
// type, a wider integer that holds every value, int to float, bool to a number, f32 to f64.
bool widens_exactly(DType from, DType to);

// Whether storing a value of type `from` into an array of dtype `to` is allowed (NumPy's
// same_kind casting): any integer into any integer, integers into floats, floats into floats,
// bools into anything. Floats into integers and numbers into bools need an explicit cast.
bool stores_same_kind(DType from, DType to);

}  // namespace tack::sema
