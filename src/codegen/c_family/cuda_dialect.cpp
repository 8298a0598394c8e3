// CUDA C for NVRTC, and the HIP C that hipRTC compiles: CUDA's dialect with HIP's include and
// texture handle type. NVRTC needs no include: the math functions and atomics are built in.
// Compile with --fmad=false (no contraction into FMAs) and without fast math, so that floats match
// the CPU.
#include "codegen/c_family/c_dialect.hpp"

namespace tack::codegen {
namespace {

constexpr std::string_view kCudaReserved[] = {
    "blockIdx",  "threadIdx",       "blockDim",
    "gridDim",   "warpSize",        "atomicCAS",
    "dim3",      "__uint_as_float", "__longlong_as_double",
    "atomicAdd", "atomicSub",       "atomicMin",
    "atomicMax", "atomicAnd",       "atomicOr",
    "atomicXor", "atomicExch"};

constexpr DType kCudaAtomics[] = {DType::I32, DType::U32, DType::I64,
                                  DType::U64, DType::F32, DType::F64};

constexpr CDialect kCuda = {
    .label = "CUDA",
    .preamble = "",
    .f64_preamble = "",
    .atomics64_preamble = "",
    .kernel_qualifier = "extern \"C\" __global__ void",
    .helper_qualifier = "static __device__ inline",
    .global_space = "",
    .private_space = "",
    .shared_space = "",
    .shared_decl = "__shared__ ",
    .scalar_param = "{}",
    .param_attribute = "",
    .thread_position_param = "",
    .workgroup_params = std::span<const std::string_view>(),
    .global_index = "((long long)blockIdx.x * (long long)blockDim.x + (long long)threadIdx.x)",
    .lane_index = "((int)threadIdx.x)",
    .group_index = "((long long)blockIdx.x)",
    .group_size = "((int)blockDim.x)",
    .barrier_global = "__syncthreads();",
    .barrier_shared = "__syncthreads();",
    .types = {.bool_ = "bool",
              .i8 = "signed char",
              .u8 = "unsigned char",
              .i16 = "short",
              .u16 = "unsigned short",
              .i32 = "int",
              .u32 = "unsigned int",
              .i64 = "long long",
              .u64 = "unsigned long long",
              .f32 = "float",
              .f64 = "double"},
    .i64_suffix = "LL",
    .u64_suffix = "ULL",
    .f32_to_bits = "__float_as_uint({})",
    .f32_from_bits = "__uint_as_float({})",
    .f64_to_bits = "((unsigned long long)__double_as_longlong({}))",
    .f64_from_bits = "__longlong_as_double((long long){})",
    // C99's float functions carry an f suffix (sqrtf).
    .math_prefix = "",
    .f32_math_suffix = "f",
    .reserved = kCudaReserved,
    .atomic_dtypes = kCudaAtomics,
    // Every 32-bit integer operation is native.
    .atomic_names = {.add = "atomicAdd",
                     .sub = "atomicSub",
                     .min = "atomicMin",
                     .max = "atomicMax",
                     .and_ = "atomicAnd",
                     .or_ = "atomicOr",
                     .xor_ = "atomicXor",
                     .exchange = "atomicExch"},
    .atomic_call = "{fn}({p}, {v})",
    // So are the adds of floats and 64-bit integers (a signed add is the unsigned one: both
    // wrap).
    .native_adds = {.i64 =
                        "(long long)atomicAdd((unsigned long long*){p}, (unsigned long long){v})",
                    .u64 = "atomicAdd({p}, {v})",
                    .f32 = "atomicAdd({p}, {v})",
                    .f64 = "atomicAdd({p}, {v})"},
    .cas32_body = "  return atomicCAS(p, e, d);\n",
    .cas64_body = "  return atomicCAS(p, e, d);\n",
    .claim_record = "  {won} = atomicCAS({hit}, 0, 1) == 0;\n",
    .print = PrintSpelling{.i64 = "%lld", .u64 = "%llu", .f32_cast = "(double)"},
    // The texture object carries the sampler's settings (cuTexObjectCreate's descriptor).
    .textures = {.type2d = "cudaTextureObject_t",
                 .type3d = "cudaTextureObject_t",
                 .param_attribute = "",
                 .sampler_decl = "",
                 .sample2d = "tex2D<float>({t}, {u}, {v})",
                 .sample3d = "tex3D<float>({t}, {u}, {v}, {w})"},
};

// HIP compiles CUDA's dialect: only the include and the texture handle type differ.
constexpr CDialect hip_from(CDialect d) {
  d.label = "HIP";
  d.preamble = "#include <hip/hip_runtime.h>\n";
  d.textures.type2d = "hipTextureObject_t";
  d.textures.type3d = "hipTextureObject_t";
  return d;
}

constexpr CDialect kHip = hip_from(kCuda);

}  // namespace

const CDialect& cuda_dialect() {
  return kCuda;
}

const CDialect& hip_dialect() {
  return kHip;
}

}  // namespace tack::codegen
