// Semantic analysis: turns one kernel of a resolved module, for one combination of argument
// types, into a verified typed IR kernel. Every language rule is checked here, so that nothing
// after this stage rejects a kernel.
#pragma once

#include <set>
#include <span>
#include <string>
#include <vector>

#include "ir/ir.hpp"
#include "lang/resolve.hpp"

namespace tack::sema {

// The type of one actual argument: an array (dtype and rank) or a scalar. An array of rank 2 or
// more whose last extent is 2, 3 or 4 also carries that extent (`lanes`): such an array may be
// indexed with one index fewer to read and write vectors, and the extent is then part of the
// variant, since a vector's width is fixed at compilation.
struct ArgType {
  enum class Kind : uint8_t { Array, Scalar };
  Kind kind = Kind::Scalar;
  DType dtype = DType::F32;
  int rank = 0;
  int lanes = 0;
  bool texture = false;  // an f32 array of rank 2 or 3 that the kernel samples (tex.sample)

  static ArgType array(DType d, int rank, int lanes = 0) {
    return {Kind::Array, d, rank, lanes, false};
  }
  static ArgType texture_of(int dims) { return {Kind::Array, DType::F32, dims, 0, true}; }
  static ArgType scalar(DType d) { return {Kind::Scalar, d, 0, 0, false}; }
  // The lanes of an array with these extents: the last one when it is 2, 3 or 4 (rank >= 2).
  static int lanes_of(std::span<const int64_t> shape) {
    if (shape.size() < 2) return 0;
    int64_t last = shape.back();
    return last >= 2 && last <= 4 ? static_cast<int>(last) : 0;
  }
  friend bool operator==(const ArgType&, const ArgType&) = default;
};

// Parses an argument list such as "f32[],f32[,],i32" (an array of rank 1, of rank 2, a scalar);
// "f32[,3]" is an array of rank 2 whose last extent is 3 (an array of vec3).
std::vector<ArgType> parse_arg_types(const std::string& text);
std::string to_string(std::span<const ArgType> args);

// What the target can do, as far as the language rules care.
struct TargetRules {
  std::string backend_label = "the CPU";
  bool supports_workgroups = false;
  std::set<DType> atomic_dtypes = {std::begin(kAllDTypes), std::end(kAllDTypes)};
};

// Builds the typed IR of `kernel` for `args`. Throws CompileError for a kernel the language
// rejects and TypeError for arguments that do not fit it (count, array used as scalar, rank).
ir::Kernel specialize(const lang::ResolvedModule& module, const std::string& kernel,
                      std::span<const ArgType> args, const TargetRules& target = {});

}  // namespace tack::sema
