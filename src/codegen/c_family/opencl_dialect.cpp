// OpenCL C, for the opencl backend (clBuildProgram) and level_zero (ocloc to SPIR-V and native
// binaries), which declares fewer atomics. Floats are exact only when the program is built with
// -cl-fp32-correctly-rounded-divide-sqrt and without -cl-fast-relaxed-math; the pragma of the
// preamble forbids contraction into FMAs.
#include "codegen/c_family/c_dialect.hpp"

namespace tack::codegen {
namespace {

constexpr std::string_view kOpenClReserved[] = {
    "__kernel",     "__global",      "__local",        "__constant",    "__private",
    "image1d_t",    "image2d_t",     "image3d_t",      "get_global_id", "get_local_id",
    "get_group_id", "barrier",       "atomic_cmpxchg", "as_float",      "as_double",
    "select",       "clamp",         "convert_int",    "vload",         "vstore",
    "atomic_add",   "atomic_sub",    "atomic_min",     "atomic_max",    "atomic_and",
    "atomic_or",    "atomic_xor",    "atomic_xchg",    "atom_cmpxchg",  "as_uint",
    "as_ulong",     "get_local_size"};

// 64-bit atomics need cl_khr_int64_base_atomics (the opencl backend declares them only for
// devices that have it).
constexpr DType kOpenClAtomics[] = {DType::I32, DType::U32, DType::I64,
                                    DType::U64, DType::F32, DType::F64};
// Level Zero declares atomics on i32, u32 and f32 only (spec backends.md).
constexpr DType kLevelZeroAtomics[] = {DType::I32, DType::U32, DType::F32};

constexpr CDialect kOpenCl = {
    .label = "OpenCL C",
    .preamble = "#pragma OPENCL FP_CONTRACT OFF\n",
    .f64_preamble = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n",
    // 64-bit values go through atom_cmpxchg (cl_khr_int64_base_atomics).
    .atomics64_preamble = "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n",
    .kernel_qualifier = "__kernel void",
    .helper_qualifier = "static inline",
    .global_space = "__global ",
    .private_space = "",
    .shared_space = "__local ",
    .shared_decl = "__local ",
    .scalar_param = "{}",
    .param_attribute = "",
    .thread_position_param = "",
    .workgroup_params = std::span<const std::string_view>(),
    .global_index = "((long)get_global_id(0))",
    .lane_index = "((int)get_local_id(0))",
    .group_index = "((long)get_group_id(0))",
    .group_size = "((int)get_local_size(0))",
    .barrier_global = "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);",
    .barrier_shared = "barrier(CLK_LOCAL_MEM_FENCE);",
    .types = kOpenClTypeNames,
    .i64_suffix = "L",
    .u64_suffix = "UL",
    .f32_to_bits = "as_uint({})",
    .f32_from_bits = "as_float({})",
    .f64_to_bits = "as_ulong({})",
    .f64_from_bits = "as_double({})",
    // OpenCL's math functions are overloaded on the argument type.
    .math_prefix = "",
    .f32_math_suffix = "",
    .reserved = kOpenClReserved,
    .atomic_dtypes = kOpenClAtomics,
    // OpenCL 1.1's atomics on 32-bit integers; everything else is a compare-and-swap loop.
    .atomic_names = {.add = "atomic_add",
                     .sub = "atomic_sub",
                     .min = "atomic_min",
                     .max = "atomic_max",
                     .and_ = "atomic_and",
                     .or_ = "atomic_or",
                     .xor_ = "atomic_xor",
                     .exchange = "atomic_xchg"},
    .atomic_call = "{fn}({p}, {v})",
    .native_adds = {.i64 = "", .u64 = "", .f32 = "", .f64 = ""},
    .cas32_body = "  return atomic_cmpxchg((volatile {space}uint*)p, e, d);\n",
    .cas64_body = "  return atom_cmpxchg((volatile {space}ulong*)p, e, d);\n",
    .claim_record = "  {won} = atomic_cmpxchg((volatile __global int*){hit}, 0, 1) == 0;\n",
    // printf's arguments are not promoted: f32 is passed as it is, since double may not exist.
    .print = PrintSpelling{.i64 = "%ld", .u64 = "%lu", .f32_cast = ""},
    // Images with a program-scope sampler; read_imagef returns (r, 0, 0, 1) for a CL_R image.
    .textures = {.type2d = "__read_only image2d_t",
                 .type3d = "__read_only image3d_t",
                 .param_attribute = "",
                 .sampler_decl = "__constant sampler_t tack_sampler = CLK_NORMALIZED_COORDS_TRUE | "
                                 "CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_LINEAR;\n",
                 .sample2d = "read_imagef({t}, tack_sampler, (float2)({u}, {v})).x",
                 .sample3d = "read_imagef({t}, tack_sampler, (float4)({u}, {v}, {w}, 0.0f)).x"},
};

constexpr CDialect level_zero_from(CDialect d) {
  d.label = "Level Zero (OpenCL C)";
  d.atomic_dtypes = kLevelZeroAtomics;
  return d;
}

constexpr CDialect kLevelZero = level_zero_from(kOpenCl);

}  // namespace

const CDialect& opencl_dialect() {
  return kOpenCl;
}

const CDialect& level_zero_dialect() {
  return kLevelZero;
}

}  // namespace tack::codegen
