// The spellings of a C-family target, as data: one CDialect table per target (cuda_dialect.cpp,
// opencl_dialect.cpp, msl_dialect.cpp), read by the one printer (c_generator.hpp). Every field must
// be given: a field type has no default, so a table that forgets a spelling does not compile,
// rather than printing another target's syntax (which would still compile as C, and mean something
// else). Where a target lacks a feature, its table says so explicitly ("" or nullopt, with the
// reason).
//
// Format strings (fmt syntax) take named arguments, listed with each field.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "tack/dtype.hpp"

namespace tack::codegen {

// A value a dialect table must give: it has no default constructor.
template <typename T>
struct Required {
  // Implicit, from anything that converts, so that tables read as plain values.
  template <typename U>
  requires std::is_convertible_v<U, T>
  constexpr Required(U&& v) : value(std::forward<U>(v)) {}
  Required() = delete;
  std::string str() const requires std::is_same_v<T, std::string_view> {
    return std::string(value);
  }
  T value;
};

// Text: a spelling, or a format string.
using Spelling = Required<std::string_view>;

// The C type of each dtype.
struct TypeNames {
  Spelling bool_, i8, u8, i16, u16, i32, u32, i64, u64, f32, f64;
  std::string_view of(DType t) const;
};

// OpenCL C's names of the scalar types (char is signed, long is 64-bit), which Metal shares.
inline constexpr TypeNames kOpenClTypeNames = {.bool_ = "bool",
                                               .i8 = "char",
                                               .u8 = "uchar",
                                               .i16 = "short",
                                               .u16 = "ushort",
                                               .i32 = "int",
                                               .u32 = "uint",
                                               .i64 = "long",
                                               .u64 = "ulong",
                                               .f32 = "float",
                                               .f64 = "double"};

// What the native atomics on 32-bit integers are called (atomicAdd, atomic_add...).
struct AtomicNames {
  Spelling add, sub, min, max, and_, or_, xor_, exchange;
};

// Adds on wider values that the target has natively ("" for a compare-and-swap loop). Format:
// {p} the pointer, {v} the value.
struct NativeAdds {
  Spelling i64, u64, f32, f64;
};

// printf's spellings, where the target has printf.
struct PrintSpelling {
  Required<std::string_view> i64, u64;  // the conversions of 64-bit integers: "%lld"
  // What precedes an f32 argument: "(double)" where varargs promote floats, "" where a float
  // is passed as it is (OpenCL C: double may not exist).
  Required<std::string_view> f32_cast;
};

// Hardware textures (ir::Param::texture): normalized coordinates, clamp-to-edge addressing and
// linear filtering, set in the kernel's sampler where the target has one in code (OpenCL C,
// Metal), in the texture object where the sampler is part of it (CUDA, HIP).
struct TextureSpelling {
  // The parameter's type, for a 2-D and a 3-D texture.
  Spelling type2d, type3d;
  // What follows texture parameter number {} (Metal's ` [[texture({})]]`, counted apart from
  // the buffers), or "".
  Spelling param_attribute;
  // The file-scope declaration of the sampler `tack_sampler`, or "" where the texture carries it.
  Spelling sampler_decl;
  // The f32 sample. Format: {t} the texture, {u} {v} {w} the coordinates (x first).
  Spelling sample2d, sample3d;
};

struct CDialect {
  // How messages name the target: "CUDA", "OpenCL C".
  Spelling label;

  // ---- the file ----
  // The lines at the top of every file (includes, pragmas), and those added when the kernel
  // computes in f64, or has atomics on 64-bit values.
  Spelling preamble, f64_preamble, atomics64_preamble;

  // ---- functions and parameters ----
  // What precedes a kernel's name (`extern "C" __global__ void`) and a helper's.
  Spelling kernel_qualifier, helper_qualifier;
  // The address-space qualifiers of pointers, each with a trailing space or "": device memory,
  // a thread's private storage, workgroup (shared) memory; and what declares a shared array.
  Spelling global_space, private_space, shared_space, shared_decl;
  // A scalar kernel parameter's declared type. Format: {} the C type (Metal: `constant {}&`).
  Spelling scalar_param;
  // What follows kernel parameter number {} ("" or Metal's ` [[buffer({})]]`).
  Spelling param_attribute;
  // Kernel parameters that deliver the thread's position (Metal), and in kernels with workgroups
  // its lane, group and group size; none where those are builtins.
  Spelling thread_position_param;
  Required<std::span<const std::string_view>> workgroup_params;

  // ---- indices and synchronization ----
  // Expressions: this thread's linear index in the launch (64-bit signed), its lane in the group
  // (int), its group's index (64-bit), the group's size (int).
  Spelling global_index, lane_index, group_index, group_size;
  // Statements: wait for the whole group, ordering device memory too (tack.barrier) or only
  // shared memory (inside the collectives).
  Spelling barrier_global, barrier_shared;

  // ---- types, literals and math ----
  TypeNames types;
  // The suffixes of 64-bit integer literals ("LL"/"ULL" in CUDA, "L"/"UL" in OpenCL C).
  Spelling i64_suffix, u64_suffix;
  // A float's bits as the unsigned integer of its width, and the reverse. Format: {} the value.
  Spelling f32_to_bits, f32_from_bits, f64_to_bits, f64_from_bits;
  // Math functions: `prefix + C99 name + suffix`, the suffix for f32 only (sqrtf); the
  // classification macros (signbit, isnan, isinf) are overloaded and take no suffix.
  Spelling math_prefix, f32_math_suffix;
  // Identifiers of the target (keywords, types, builtins) that a kernel's names are renamed away
  // from, besides the words every C-family target reserves (c_generator.cpp).
  Required<std::span<const std::string_view>> reserved;

  // ---- atomics ----
  // The dtypes with atomics on this target.
  Required<std::span<const DType>> atomic_dtypes;
  AtomicNames atomic_names;
  // A native atomic on a 32-bit integer. Format: {fn} its name, {p} the pointer, {v} the value,
  // {space} the pointer's address space, {atomic} Metal's atomic type of the dtype
  // (atomic_int, atomic_uint).
  Spelling atomic_call;
  NativeAdds native_adds;
  // The body of `U tack_cas(SPACE U* p, U e, U d)`: one strong compare-and-swap returning the
  // old value, for 32- and 64-bit U ("" where there are no 64-bit atomics). Format: {space}.
  Spelling cas32_body, cas64_body;
  // Statements that set `won` when this thread changes the int at `hit` (a global int pointer)
  // from 0 to 1 atomically: how debug mode claims its record. Format: {hit}, {won}.
  Spelling claim_record;

  // ---- the rest ----
  // printf, or nullopt where the target has none (Metal: print is accepted and ignored).
  Required<std::optional<PrintSpelling>> print;
  // Hardware textures: their parameters and sampling.
  TextureSpelling textures;
};

// The dialects: CUDA C for NVRTC; HIP C, CUDA's with HIP's include and texture handle types; OpenCL
// C; Level Zero's OpenCL C, with the atomics Level Zero declares; Metal Shading Language.
const CDialect& cuda_dialect();
const CDialect& hip_dialect();
const CDialect& opencl_dialect();
const CDialect& level_zero_dialect();
const CDialect& msl_dialect();

}  // namespace tack::codegen
