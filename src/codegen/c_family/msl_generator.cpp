// Metal Shading Language. Metal GPUs have no double precision: kernels that use f64 are refused.
// Every argument is a buffer ([[buffer(n)]]); scalars are passed as `constant T&`. Floats are
// exact only when the library is compiled with MTLMathModeSafe and precise math functions
// (fastMathEnabled = NO).
#include <fmt/format.h>

#include "codegen/c_family/targets.hpp"
#include "tack/error.hpp"

namespace tack::codegen {

// Metal binds at most 31 buffers to a compute function.
constexpr int kMaxMetalBuffers = 31;

std::string MslGenerator::param_attribute(int slot) const {
  return fmt::format(" [[buffer({})]]", slot);
}

std::string MslGenerator::math_function(std::string_view name, DType) const {
  return "metal::" + std::string(name);
}

std::string MslGenerator::type_name(DType t) const {
  return opencl_scalar_type(t);  // Metal spells scalars as OpenCL C does
}

std::string MslGenerator::float_from_bits(DType, uint64_t bits) const {
  return fmt::format("as_type<float>({:#x}U)", bits);
}

// A weak compare-and-swap may fail spuriously: retry while the record is still unclaimed.
std::string MslGenerator::claim_record(const std::string& hit, const std::string& won) const {
  return fmt::format(
      "  for (;;) {{\n"
      "    int expected = 0;\n"
      "    if (metal::atomic_compare_exchange_weak_explicit((device metal::atomic_int*){}, "
      "&expected, 1, metal::memory_order_relaxed, metal::memory_order_relaxed)) {{\n"
      "      {} = true;\n"
      "      break;\n"
      "    }}\n"
      "    if (expected != 0) break;\n"
      "  }}\n",
      hit, won);
}

bool MslGenerator::is_reserved(std::string_view name) const {
  static const std::set<std::string_view> words = {
      "as_type", "vec", "packed_float3", "array", "texture2d", "texture3d", "sampler"};
  return words.count(name) || CFamilyGenerator::is_reserved(name);
}

void MslGenerator::check_kernel(const ir::Kernel& k) const {
  if (uses_dtype(k, DType::F64, /*in_print=*/false))  // print is ignored on Metal
    throw Error(fmt::format(
        "kernel '{}' computes in f64, which Metal does not support (Metal GPUs have no 64-bit "
        "floating point): pass f32 arrays and scalars, or run it on another backend",
        k.name));
  int buffers = 1 + 3 * static_cast<int>(k.dims.size()) + (k.result ? 1 : 0);
  for (const ir::Param& p : k.params)
    if (!p.is_local_array()) buffers += p.type.is_array() ? 1 + p.type.rank : 1;
  if (buffers > kMaxMetalBuffers)
    throw Error(fmt::format(
        "kernel '{}' needs {} Metal buffer arguments (arrays, their extents, scalars and loop "
        "bounds), more than Metal's {}: pass fewer arguments",
        k.name, buffers, kMaxMetalBuffers));
}

}  // namespace tack::codegen

namespace tack::codegen {

std::string MslGenerator::barrier(bool global) const {
  return global ? "metal::threadgroup_barrier(metal::mem_flags::mem_device | "
                  "metal::mem_flags::mem_threadgroup);"
                : "metal::threadgroup_barrier(metal::mem_flags::mem_threadgroup);";
}

std::vector<std::string> MslGenerator::workgroup_params() const {
  return {"uint tack_lane [[thread_position_in_threadgroup]]",
          "uint tack_group [[threadgroup_position_in_grid]]",
          "uint tack_group_size [[threads_per_threadgroup]]"};
}

// Metal declares atomics on i32, u32 and f32 (the last through compare-and-swap here).
std::set<DType> MslGenerator::atomic_dtypes() const {
  return {DType::I32, DType::U32, DType::F32};
}

std::string MslGenerator::native_atomic(ir::AtomicOp op, DType t, const std::string& space,
                                        const std::string& p, const std::string& v) const {
  using A = ir::AtomicOp;
  if (t != DType::I32 && t != DType::U32) return "";
  const char* fn = nullptr;
  switch (op) {
    case A::Add:
      fn = "atomic_fetch_add_explicit";
      break;
    case A::Sub:
      fn = "atomic_fetch_sub_explicit";
      break;
    case A::Min:
      fn = "atomic_fetch_min_explicit";
      break;
    case A::Max:
      fn = "atomic_fetch_max_explicit";
      break;
    case A::And:
      fn = "atomic_fetch_and_explicit";
      break;
    case A::Or:
      fn = "atomic_fetch_or_explicit";
      break;
    case A::Xor:
      fn = "atomic_fetch_xor_explicit";
      break;
    case A::Exchange:
      fn = "atomic_exchange_explicit";
      break;
    case A::Cas:
      return "";
  }
  return fmt::format("metal::{}(({}metal::{}*){}, {}, metal::memory_order_relaxed)", fn, space,
                     t == DType::I32 ? "atomic_int" : "atomic_uint", p, v);
}

// A weak compare-and-swap may fail spuriously: retry while the value still equals `e`.
std::string MslGenerator::cas_body(DType, const std::string& space) const {
  return fmt::format(
      "  uint x = e;\n"
      "  while (!metal::atomic_compare_exchange_weak_explicit(({}metal::atomic_uint*)p, &x, d, "
      "metal::memory_order_relaxed, metal::memory_order_relaxed))\n"
      "    if (x != e) return x;\n"
      "  return e;\n",
      space);
}

std::string MslGenerator::float_bits(DType, bool to_float, const std::string& v) const {
  return fmt::format(fmt::runtime(to_float ? "as_type<float>({})" : "as_type<uint>({})"), v);
}

}  // namespace tack::codegen
