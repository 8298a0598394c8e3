// The C-family targets: each overrides the hooks of CFamilyGenerator that it spells differently.
//
//   CudaGenerator    CUDA C for NVRTC (compile with --fmad=false: no contraction into FMAs)
//   └ HipGenerator   HIP C for hipRTC: the CUDA code with HIP's include and texture handle type
//   └ OpenClGenerator  OpenCL C (the opencl and level_zero backends)
//   MslGenerator     Metal Shading Language (no f64)
#pragma once

#include "codegen/c_family/c_generator.hpp"

namespace tack::codegen {

// OpenCL C's names of the scalar types (char is signed, long is 64-bit); Metal uses the same.
std::string opencl_scalar_type(DType t);

class CudaGenerator : public CFamilyGenerator {
 public:
  std::string target_label() const override { return "CUDA"; }
  std::string kernel_qualifier() const override { return "extern \"C\" __global__ void"; }
  std::string helper_qualifier() const override { return "static __device__ inline"; }
  std::string global_index() const override;
  std::string math_function(std::string_view name, DType t) const override;
  std::string type_name(DType t) const override;
  std::string long_suffix(bool is_unsigned) const override { return is_unsigned ? "ULL" : "LL"; }
  std::string float_from_bits(DType t, uint64_t bits) const override;
  std::string claim_record(const std::string& hit, const std::string& won) const override;
  std::string texture_type() const override { return "cudaTextureObject_t"; }
  bool is_reserved(std::string_view name) const override;
  std::string shared_decl() const override { return "__shared__ "; }
  std::string shared_space() const override { return ""; }
  std::string barrier(bool) const override { return "__syncthreads();"; }
  std::string lane_index() const override { return "((int)threadIdx.x)"; }
  std::string group_index() const override { return "((long long)blockIdx.x)"; }
  std::string group_size() const override { return "((int)blockDim.x)"; }
  std::string native_atomic(ir::AtomicOp op, DType t, const std::string& space,
                            const std::string& p, const std::string& v) const override;
  std::string cas_body(DType u, const std::string& space) const override;
  std::string float_bits(DType f, bool to_float, const std::string& v) const override;
};

// HIP compiles CUDA's dialect: only the include and the texture handle type differ.
class HipGenerator : public CudaGenerator {
 public:
  std::string target_label() const override { return "HIP"; }
  std::string preamble(bool) const override { return "#include <hip/hip_runtime.h>\n"; }
  std::string texture_type() const override { return "hipTextureObject_t"; }
};

// OpenCL C for the opencl backend, or (level_zero) for Level Zero, which declares fewer atomics.
class OpenClGenerator : public CudaGenerator {
 public:
  explicit OpenClGenerator(bool level_zero = false) : level_zero_(level_zero) {}
  std::string target_label() const override {
    return level_zero_ ? "Level Zero (OpenCL C)" : "OpenCL C";
  }
  std::string preamble(bool uses_f64) const override;
  std::string kernel_qualifier() const override { return "__kernel void"; }
  std::string helper_qualifier() const override { return "static inline"; }
  std::string global_space() const override { return "__global "; }
  std::string global_index() const override { return "((long)get_global_id(0))"; }
  std::string math_function(std::string_view name, DType t) const override;
  std::string type_name(DType t) const override;
  std::string long_suffix(bool is_unsigned) const override { return is_unsigned ? "UL" : "L"; }
  std::string float_from_bits(DType t, uint64_t bits) const override;
  std::string claim_record(const std::string& hit, const std::string& won) const override;
  std::string int64_format(bool is_signed) const override { return is_signed ? "%ld" : "%lu"; }
  std::string print_float_arg(DType, const std::string& v) const override { return v; }
  std::string texture_type() const override { return "image3d_t"; }
  bool is_reserved(std::string_view name) const override;
  std::string shared_decl() const override { return "__local "; }
  std::string shared_space() const override { return "__local "; }
  std::string barrier(bool global) const override {
    return global ? "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);"
                  : "barrier(CLK_LOCAL_MEM_FENCE);";
  }
  std::string lane_index() const override { return "((int)get_local_id(0))"; }
  std::string group_index() const override { return "((long)get_group_id(0))"; }
  std::string group_size() const override { return "((int)get_local_size(0))"; }
  std::set<DType> atomic_dtypes() const override;
  std::string atomics_preamble(bool int64) const override;
  std::string native_atomic(ir::AtomicOp op, DType t, const std::string& space,
                            const std::string& p, const std::string& v) const override;
  std::string cas_body(DType u, const std::string& space) const override;
  std::string float_bits(DType f, bool to_float, const std::string& v) const override;

 private:
  bool level_zero_;
};

class MslGenerator : public CFamilyGenerator {
 public:
  std::string target_label() const override { return "Metal"; }
  std::string preamble(bool) const override { return "#include <metal_stdlib>\n"; }
  std::string kernel_qualifier() const override { return "kernel void"; }
  std::string global_space() const override { return "device "; }
  std::string private_space() const override { return "thread "; }
  std::string scalar_param_type(const std::string& type) const override {
    return "constant " + type + "&";
  }
  std::string param_attribute(int slot) const override;
  std::string thread_position_param() const override {
    return "uint tack_thread [[thread_position_in_grid]]";
  }
  std::string global_index() const override { return "((long)tack_thread)"; }
  std::string math_function(std::string_view name, DType t) const override;
  std::string type_name(DType t) const override;
  std::string long_suffix(bool is_unsigned) const override { return is_unsigned ? "UL" : "L"; }
  std::string float_from_bits(DType t, uint64_t bits) const override;
  std::string claim_record(const std::string& hit, const std::string& won) const override;
  bool supports_print() const override { return false; }
  std::string texture_type() const override { return "metal::texture3d<float>"; }
  bool is_reserved(std::string_view name) const override;
  void check_kernel(const ir::Kernel& k) const override;
  std::string shared_decl() const override { return "threadgroup "; }
  std::string shared_space() const override { return "threadgroup "; }
  std::string barrier(bool global) const override;
  std::string lane_index() const override { return "((int)tack_lane)"; }
  std::string group_index() const override { return "((long)tack_group)"; }
  std::string group_size() const override { return "((int)tack_group_size)"; }
  std::vector<std::string> workgroup_params() const override;
  std::set<DType> atomic_dtypes() const override;
  std::string native_atomic(ir::AtomicOp op, DType t, const std::string& space,
                            const std::string& p, const std::string& v) const override;
  std::string cas_body(DType u, const std::string& space) const override;
  std::string float_bits(DType f, bool to_float, const std::string& v) const override;
};

}  // namespace tack::codegen
