// Metal Shading Language. Metal GPUs have no double precision: kernels that use f64 are refused.
// Every argument is a buffer ([[buffer(n)]]); scalars are passed as `constant T&`. Floats are
// exact only when the library is compiled with MTLMathModeSafe and precise math functions
// (fastMathEnabled = NO).
#include <fmt/format.h>

#include "codegen/c_family/c_dialect.hpp"
#include "codegen/c_family/c_generator.hpp"
#include "tack/error.hpp"

namespace tack::codegen {
namespace {

// Metal binds at most 31 buffers to a compute function.
constexpr int kMaxMetalBuffers = 31;

constexpr std::string_view kMslReserved[] = {"as_type",   "vec",       "packed_float3", "array",
                                             "texture2d", "texture3d", "sampler"};

constexpr std::string_view kMslWorkgroupParams[] = {
    "uint tack_lane [[thread_position_in_threadgroup]]",
    "uint tack_group [[threadgroup_position_in_grid]]",
    "uint tack_group_size [[threads_per_threadgroup]]"};

// Metal declares atomics on i32, u32 and f32 (the last through compare-and-swap here).
constexpr DType kMslAtomics[] = {DType::I32, DType::U32, DType::F32};

constexpr CDialect kMsl = {
    .label = "Metal",
    .preamble = "#include <metal_stdlib>\n",
    .f64_preamble = "",        // no f64: a kernel that computes in it is refused (print aside)
    .atomics64_preamble = "",  // no 64-bit atomics
    .kernel_qualifier = "kernel void",
    .helper_qualifier = "static inline",
    .global_space = "device ",
    .private_space = "thread ",
    .shared_space = "threadgroup ",
    .shared_decl = "threadgroup ",
    .scalar_param = "constant {}&",
    .param_attribute = " [[buffer({})]]",
    .thread_position_param = "uint tack_thread [[thread_position_in_grid]]",
    .workgroup_params = kMslWorkgroupParams,
    .global_index = "((long)tack_thread)",
    .lane_index = "((int)tack_lane)",
    .group_index = "((long)tack_group)",
    .group_size = "((int)tack_group_size)",
    .barrier_global =
        "metal::threadgroup_barrier(metal::mem_flags::mem_device | "
        "metal::mem_flags::mem_threadgroup);",
    .barrier_shared = "metal::threadgroup_barrier(metal::mem_flags::mem_threadgroup);",
    .types = kOpenClTypeNames,  // Metal spells scalars as OpenCL C does
    .i64_suffix = "L",
    .u64_suffix = "UL",
    .f32_to_bits = "as_type<uint>({})",
    .f32_from_bits = "as_type<float>({})",
    .f64_to_bits = "",  // no f64
    .f64_from_bits = "",
    .math_prefix = "metal::",
    .f32_math_suffix = "",
    .reserved = kMslReserved,
    .atomic_dtypes = kMslAtomics,
    .atomic_names = {.add = "atomic_fetch_add_explicit",
                     .sub = "atomic_fetch_sub_explicit",
                     .min = "atomic_fetch_min_explicit",
                     .max = "atomic_fetch_max_explicit",
                     .and_ = "atomic_fetch_and_explicit",
                     .or_ = "atomic_fetch_or_explicit",
                     .xor_ = "atomic_fetch_xor_explicit",
                     .exchange = "atomic_exchange_explicit"},
    .atomic_call = "metal::{fn}(({space}metal::{atomic}*){p}, {v}, metal::memory_order_relaxed)",
    .native_adds = {.i64 = "", .u64 = "", .f32 = "", .f64 = ""},
    // A weak compare-and-swap may fail spuriously: retry while the value still equals `e`.
    .cas32_body =
        "  uint x = e;\n"
        "  while (!metal::atomic_compare_exchange_weak_explicit(({space}metal::atomic_uint*)p, "
        "&x, d, metal::memory_order_relaxed, metal::memory_order_relaxed))\n"
        "    if (x != e) return x;\n"
        "  return e;\n",
    .cas64_body = "",  // no 64-bit atomics
    // Likewise: retry while the record is still unclaimed.
    .claim_record =
        "  for (;;) {{\n"
        "    int expected = 0;\n"
        "    if (metal::atomic_compare_exchange_weak_explicit((device metal::atomic_int*){hit}, "
        "&expected, 1, metal::memory_order_relaxed, metal::memory_order_relaxed)) {{\n"
        "      {won} = true;\n"
        "      break;\n"
        "    }}\n"
        "    if (expected != 0) break;\n"
        "  }}\n",
    .print = std::nullopt,  // no printf: print is accepted and ignored
    // Textures bind to their own indices ([[texture(n)]]), not to buffers'.
    .textures = {.type2d = "metal::texture2d<float>",
                 .type3d = "metal::texture3d<float>",
                 .param_attribute = " [[texture({})]]",
                 .sampler_decl = "constexpr metal::sampler tack_sampler(metal::coord::normalized, "
                                 "metal::address::clamp_to_edge, metal::filter::linear);\n",
                 .sample2d = "{t}.sample(tack_sampler, float2({u}, {v})).x",
                 .sample3d = "{t}.sample(tack_sampler, float3({u}, {v}, {w})).x"},
};

}  // namespace

const CDialect& msl_dialect() {
  return kMsl;
}

void MslGenerator::check_kernel(const ir::Kernel& k) const {
  if (uses_dtype(k, DType::F64, /*in_print=*/false))  // print is ignored on Metal
    throw Error(fmt::format(
        "kernel '{}' computes in f64, which Metal does not support (Metal GPUs have no 64-bit "
        "floating point): pass f32 arrays and scalars, or run it on another backend",
        k.name));
  int buffers = 1 + 3 * static_cast<int>(k.dims.size()) + (k.result ? 1 : 0);
  for (const ir::Param& p : k.params)
    if (!p.is_local_array() && !p.texture) buffers += p.type.is_array() ? 1 + p.type.rank : 1;
  if (buffers > kMaxMetalBuffers)
    throw Error(fmt::format(
        "kernel '{}' needs {} Metal buffer arguments (arrays, their extents, scalars and loop "
        "bounds), more than Metal's {}: pass fewer arguments",
        k.name, buffers, kMaxMetalBuffers));
}

}  // namespace tack::codegen
