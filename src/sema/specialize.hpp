// Semantic analysis: turns one kernel of a resolved module, for one combination of argument
// types, into a verified typed IR kernel. Every language rule is checked here, so that nothing
// after this stage rejects a kernel.
#pragma once

#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ir.hpp"
#include "lang/resolve.hpp"

namespace tack::sema {

struct ObjectType;

// The type of one actual argument: an array (dtype and rank), a scalar, or an object of a device
// class. An array of rank 2 or more whose last extent is 2, 3 or 4 also carries that extent
// (`lanes`): such an array may be indexed with one index fewer to read and write vectors, and the
// extent is then part of the variant, since a vector's width is fixed at compilation.
struct ArgType {
  enum class Kind : uint8_t { Array, Scalar, Object };
  Kind kind = Kind::Scalar;
  DType dtype = DType::F32;
  int rank = 0;
  int lanes = 0;
  bool texture = false;  // an f32 array of rank 2 or 3 that the kernel samples (tex.sample)
  // A texture made with interp="linear_exact": sampled in software on every target, for the
  // same bits everywhere, rather than by a texture unit.
  bool exact = false;
  std::shared_ptr<const ObjectType> object;  // Object

  static ArgType array(DType d, int rank, int lanes = 0) {
    return {Kind::Array, d, rank, lanes, false, false, nullptr};
  }
  static ArgType texture_of(int dims, bool exact = false) {
    return {Kind::Array, DType::F32, dims, 0, true, exact, nullptr};
  }
  static ArgType scalar(DType d) { return {Kind::Scalar, d, 0, 0, false, false, nullptr}; }
  static ArgType of_object(std::shared_ptr<const ObjectType> o) {
    return {Kind::Object, DType::F32, 0, 0, false, false, std::move(o)};
  }
  // The lanes of an array with these extents: the last one when it is 2, 3 or 4 (rank >= 2).
  static int lanes_of(std::span<const int64_t> shape) {
    if (shape.size() < 2) return 0;
    int64_t last = shape.back();
    return last >= 2 && last <= 4 ? static_cast<int>(last) : 0;
  }
  friend bool operator==(const ArgType&, const ArgType&) = default;
};

// A @tack.func stored in an object's attribute, and the module that resolves its free names.
struct FunctionRef {
  std::shared_ptr<const lang::ResolvedModule> module;
  const ast::FunctionDef* def = nullptr;
};

// An object of a device class as a kernel sees it: the class (its methods, __tack_iterate__) and
// the object's attributes, class-level and instance ones together, sorted by name. Arrays and
// scalars become the kernel's parameters (see leaves()); constants are compiled in; functions are
// called like methods; an attribute of a kind kernels cannot take is kept with what it is, for
// the TypeError of a kernel that reads it.
struct ObjectType {
  struct Attribute {
    enum class Kind : uint8_t { Value, Constant, Function, Unsupported, Tuple };
    std::string name;
    Kind kind = Kind::Value;
    ArgType type;                   // Value: an array, a scalar or another object
    std::vector<ArgType> elements;  // Tuple: scalars
    lang::Constant constant;        // Constant
    FunctionRef function;           // Function
    std::string what;               // Unsupported: "a list", "a float16 array"...
  };
  std::shared_ptr<const lang::DeviceClass> cls;
  std::vector<Attribute> attributes;

  const Attribute* find(const std::string& name) const;
};

// The kernel's parameters that arguments of these types become, in order: an array or a scalar
// is one, an object contributes its Value attributes depth first, in the order of its
// attributes, and a tuple each of its numbers; each with its name ("cells.connectivity",
// "cells.shape[0]"). The runtime passes values in this order.
struct Leaf {
  std::string name;
  const ArgType* type;
};
std::vector<Leaf> leaves(std::span<const std::string> names, std::span<const ArgType> args);

// Parses an argument list such as "f32[],f32[,],i32" (an array of rank 1, of rank 2, a scalar);
// "f32[,3]" is an array of rank 2 whose last extent is 3 (an array of vec3); "tex2d" and "tex3d"
// are textures ("tex3d_exact": one made with interp="linear_exact").
std::vector<ArgType> parse_arg_types(const std::string& text);
// The list as parse_arg_types reads it; `separator` ", " gives the cache keys' spelling.
std::string to_string(std::span<const ArgType> args, std::string_view separator = ",");

// What the target can do, as far as the language rules care.
struct TargetRules {
  std::string backend_label = "the CPU";
  bool supports_workgroups = false;
  std::set<DType> atomic_dtypes = {std::begin(kAllDTypes), std::end(kAllDTypes)};
  // Whether tex.sample is the target's texture unit (Op::TextureSample) rather than loads and
  // arithmetic, for textures not made with interp="linear_exact".
  bool hardware_textures = false;
};

// Builds the typed IR of `kernel` for `args`. Throws CompileError for a kernel the language
// rejects and TypeError for arguments that do not fit it (count, array used as scalar, rank).
ir::Kernel specialize(const lang::ResolvedModule& module, const std::string& kernel,
                      std::span<const ArgType> args, const TargetRules& target = {});

}  // namespace tack::sema
