// OpenCL C, for the opencl backend (clBuildProgram) and level_zero (ocloc to SPIR-V and native
// binaries). Floats are exact only when the program is built with
// -cl-fp32-correctly-rounded-divide-sqrt and without -cl-fast-relaxed-math; the pragma below
// forbids contraction into FMAs.
#include <fmt/format.h>

#include "codegen/c_family/targets.hpp"

namespace tack::codegen {

std::string OpenClGenerator::preamble(bool uses_f64) const {
  std::string s = "#pragma OPENCL FP_CONTRACT OFF\n";
  if (uses_f64) s += "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
  return s;
}

// OpenCL's math functions are overloaded on the argument type.
std::string OpenClGenerator::math_function(std::string_view name, DType) const {
  return std::string(name);
}

std::string opencl_scalar_type(DType t) {
  switch (t) {
    case DType::Bool:
      return "bool";
    case DType::I8:
      return "char";  // signed in OpenCL C
    case DType::U8:
      return "uchar";
    case DType::I16:
      return "short";
    case DType::U16:
      return "ushort";
    case DType::I32:
      return "int";
    case DType::U32:
      return "uint";
    case DType::I64:
      return "long";
    case DType::U64:
      return "ulong";
    case DType::F32:
      return "float";
    case DType::F64:
      return "double";
  }
  return "?";
}

std::string OpenClGenerator::type_name(DType t) const {
  return opencl_scalar_type(t);
}

std::string OpenClGenerator::float_from_bits(DType t, uint64_t bits) const {
  if (t == DType::F32) return fmt::format("as_float({:#x}U)", bits);
  return fmt::format("as_double({:#x}UL)", bits);
}

std::string OpenClGenerator::claim_record(const std::string& hit, const std::string& won) const {
  return fmt::format("  {} = atomic_cmpxchg((volatile __global int*){}, 0, 1) == 0;\n", won, hit);
}

bool OpenClGenerator::is_reserved(std::string_view name) const {
  static const std::set<std::string_view> words = {
      "__kernel",     "__global",      "__local",        "__constant",    "__private",
      "image1d_t",    "image2d_t",     "image3d_t",      "get_global_id", "get_local_id",
      "get_group_id", "barrier",       "atomic_cmpxchg", "as_float",      "as_double",
      "select",       "clamp",         "convert_int",    "vload",         "vstore",
      "atomic_add",   "atomic_sub",    "atomic_min",     "atomic_max",    "atomic_and",
      "atomic_or",    "atomic_xor",    "atomic_xchg",    "atom_cmpxchg",  "as_uint",
      "as_ulong",     "get_local_size"};
  return words.count(name) || CFamilyGenerator::is_reserved(name);
}

}  // namespace tack::codegen

namespace tack::codegen {

// Level Zero declares atomics on i32, u32 and f32 only (spec backends.md).
std::set<DType> OpenClGenerator::atomic_dtypes() const {
  if (level_zero_) return {DType::I32, DType::U32, DType::F32};
  return CudaGenerator::atomic_dtypes();
}

// 64-bit values go through atom_cmpxchg (cl_khr_int64_base_atomics).
std::string OpenClGenerator::atomics_preamble(bool int64) const {
  return int64 ? "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n" : "";
}

// OpenCL 1.1's atomics on 32-bit integers; everything else is a compare-and-swap loop.
std::string OpenClGenerator::native_atomic(ir::AtomicOp op, DType t, const std::string&,
                                           const std::string& p, const std::string& v) const {
  using A = ir::AtomicOp;
  if (t != DType::I32 && t != DType::U32) return "";
  const char* fn = nullptr;
  switch (op) {
    case A::Add:
      fn = "atomic_add";
      break;
    case A::Sub:
      fn = "atomic_sub";
      break;
    case A::Min:
      fn = "atomic_min";
      break;
    case A::Max:
      fn = "atomic_max";
      break;
    case A::And:
      fn = "atomic_and";
      break;
    case A::Or:
      fn = "atomic_or";
      break;
    case A::Xor:
      fn = "atomic_xor";
      break;
    case A::Exchange:
      fn = "atomic_xchg";
      break;
    case A::Cas:
      return "";
  }
  return fmt::format("{}({}, {})", fn, p, v);
}

std::string OpenClGenerator::cas_body(DType u, const std::string& space) const {
  if (u == DType::U64)
    return fmt::format("  return atom_cmpxchg((volatile {}ulong*)p, e, d);\n", space);
  return fmt::format("  return atomic_cmpxchg((volatile {}uint*)p, e, d);\n", space);
}

std::string OpenClGenerator::float_bits(DType f, bool to_float, const std::string& v) const {
  if (f == DType::F32)
    return fmt::format(fmt::runtime(to_float ? "as_float({})" : "as_uint({})"), v);
  return fmt::format(fmt::runtime(to_float ? "as_double({})" : "as_ulong({})"), v);
}

}  // namespace tack::codegen
