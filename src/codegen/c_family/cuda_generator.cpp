// CUDA C for NVRTC, and the HIP C that hipRTC compiles (targets.hpp). NVRTC needs no include:
// the math functions and atomics are built in. Compile with --fmad=false (no contraction into
// FMAs) and without fast math, so that floats match the CPU.
#include <fmt/format.h>

#include "codegen/c_family/targets.hpp"

namespace tack::codegen {

std::string CudaGenerator::global_index() const {
  return "((long long)blockIdx.x * (long long)blockDim.x + (long long)threadIdx.x)";
}

// C99's float functions carry an f suffix (sqrtf); the classification macros are overloaded.
std::string CudaGenerator::math_function(std::string_view name, DType t) const {
  bool overloaded = name == "signbit" || name == "isnan" || name == "isinf";
  return std::string(name) + (t == DType::F32 && !overloaded ? "f" : "");
}

std::string CudaGenerator::type_name(DType t) const {
  switch (t) {
    case DType::Bool:
      return "bool";
    case DType::I8:
      return "signed char";
    case DType::U8:
      return "unsigned char";
    case DType::I16:
      return "short";
    case DType::U16:
      return "unsigned short";
    case DType::I32:
      return "int";
    case DType::U32:
      return "unsigned int";
    case DType::I64:
      return "long long";
    case DType::U64:
      return "unsigned long long";
    case DType::F32:
      return "float";
    case DType::F64:
      return "double";
  }
  return "?";
}

std::string CudaGenerator::float_from_bits(DType t, uint64_t bits) const {
  if (t == DType::F32) return fmt::format("__uint_as_float({:#x}U)", bits);
  return fmt::format("__longlong_as_double((long long){:#x}ULL)", bits);
}

std::string CudaGenerator::claim_record(const std::string& hit, const std::string& won) const {
  return fmt::format("  {} = atomicCAS({}, 0, 1) == 0;\n", won, hit);
}

bool CudaGenerator::is_reserved(std::string_view name) const {
  static const std::set<std::string_view> words = {
      "blockIdx",  "threadIdx",       "blockDim",
      "gridDim",   "warpSize",        "atomicCAS",
      "dim3",      "__uint_as_float", "__longlong_as_double",
      "atomicAdd", "atomicSub",       "atomicMin",
      "atomicMax", "atomicAnd",       "atomicOr",
      "atomicXor", "atomicExch"};
  return words.count(name) || CFamilyGenerator::is_reserved(name);
}

}  // namespace tack::codegen

namespace tack::codegen {

// CUDA's and HIP's native atomics: every 32-bit integer operation, and the adds of floats and
// 64-bit integers (a signed add is the unsigned one: both wrap).
std::string CudaGenerator::native_atomic(ir::AtomicOp op, DType t, const std::string&,
                                         const std::string& p, const std::string& v) const {
  using A = ir::AtomicOp;
  if (t == DType::I32 || t == DType::U32) {
    switch (op) {
      case A::Add:
        return fmt::format("atomicAdd({}, {})", p, v);
      case A::Sub:
        return fmt::format("atomicSub({}, {})", p, v);
      case A::Min:
        return fmt::format("atomicMin({}, {})", p, v);
      case A::Max:
        return fmt::format("atomicMax({}, {})", p, v);
      case A::And:
        return fmt::format("atomicAnd({}, {})", p, v);
      case A::Or:
        return fmt::format("atomicOr({}, {})", p, v);
      case A::Xor:
        return fmt::format("atomicXor({}, {})", p, v);
      case A::Exchange:
        return fmt::format("atomicExch({}, {})", p, v);
      case A::Cas:
        return "";
    }
  }
  if (op != A::Add) return "";
  if (t == DType::F32 || t == DType::F64 || t == DType::U64)
    return fmt::format("atomicAdd({}, {})", p, v);
  if (t == DType::I64)
    return fmt::format("(long long)atomicAdd((unsigned long long*){}, (unsigned long long){})", p,
                       v);
  return "";
}

std::string CudaGenerator::cas_body(DType, const std::string&) const {
  return "  return atomicCAS(p, e, d);\n";
}

std::string CudaGenerator::float_bits(DType f, bool to_float, const std::string& v) const {
  if (f == DType::F32)
    return fmt::format(fmt::runtime(to_float ? "__uint_as_float({})" : "__float_as_uint({})"), v);
  return fmt::format(fmt::runtime(to_float ? "__longlong_as_double((long long){})"
                                           : "((unsigned long long)__double_as_longlong({}))"),
                     v);
}

}  // namespace tack::codegen
