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
      "__kernel",     "__global",  "__local",        "__constant",    "__private",
      "image1d_t",    "image2d_t", "image3d_t",      "get_global_id", "get_local_id",
      "get_group_id", "barrier",   "atomic_cmpxchg", "as_float",      "as_double",
      "select",       "clamp",     "convert_int",    "vload",         "vstore"};
  return words.count(name) || CFamilyGenerator::is_reserved(name);
}

}  // namespace tack::codegen
