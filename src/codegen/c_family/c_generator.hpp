// C-family source generators: typed IR to CUDA C, HIP C, OpenCL C and Metal Shading Language.
//
// One printer (CFamilyGenerator) writes structured C for a kernel: its parameters, the parallel
// loop as a GPU kernel in which each thread takes one linear index, sequential loops, and helper
// functions that give every operation the CPU backend's exact meaning (llvm_codegen.cpp is the
// reference). Each target is a subclass that overrides hooks, and each hook spells one thing: an
// include, the kernel qualifier, an address space, the thread index, a type or math name, the
// debug record's compare-and-swap, the texture handle type, the identifiers to rename.
//
// The generated kernel's parameters, in order:
//   for each IR parameter: an array is a global pointer then one 64-bit extent per dimension;
//     a scalar is its type (a bool travels as an unsigned byte);
//   for each parallel-loop dimension: start, step, count (64-bit);
//   a pointer to the debug record (an int array laid out as codegen::DebugRecord), written only
//     by kernels compiled in debug mode.
// A launch runs at least count0 * count1 * ... threads; thread `gid` runs the iteration whose
// row-major position is gid, and threads past the total return at once.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ir.hpp"

namespace tack::codegen {

// The source of `k` for `target` ("cuda", "hip", "opencl", "level_zero" (OpenCL C), "metal"),
// with the kernel function named `entry_name`. Throws tack::Error for an unknown target, a
// kernel with a `return` value (not supported on GPUs yet) and f64 on Metal.
std::string generate_source(const ir::Kernel& k, const std::string& target,
                            const std::string& entry_name);

// Whether any parameter, local or expression of `k` has dtype `t` (counting the values of
// print statements when `in_print`).
bool uses_dtype(const ir::Kernel& k, DType t, bool in_print = true);

// The shared printer. A generator object prints one kernel per generate() call.
class CFamilyGenerator {
 public:
  virtual ~CFamilyGenerator() = default;

  std::string generate(const ir::Kernel& k, const std::string& entry_name);

  // ---- hooks: each spells one thing for the target ----

  // How messages name the target ("CUDA", "OpenCL C"...).
  virtual std::string target_label() const = 0;
  // The lines at the top of the file: includes and pragmas. `uses_f64` says whether the kernel
  // computes in double precision (OpenCL enables cl_khr_fp64 then).
  virtual std::string preamble(bool uses_f64) const { return ""; }
  // What precedes the kernel's name: `extern "C" __global__ void`, `__kernel void`...
  virtual std::string kernel_qualifier() const = 0;
  // What precedes a helper function: `static __device__ inline`, `static inline`.
  virtual std::string helper_qualifier() const { return "static inline"; }
  // The address-space qualifier of a pointer to device memory, with a trailing space ("" for
  // CUDA, "__global " for OpenCL, "device " for Metal).
  virtual std::string global_space() const { return ""; }
  // The address-space qualifier of a pointer to a thread's private storage (a local array), with
  // a trailing space ("thread " for Metal).
  virtual std::string private_space() const { return ""; }
  // How a scalar kernel parameter of C type `type` is declared (Metal passes `constant T&`).
  virtual std::string scalar_param_type(const std::string& type) const { return type; }
  // What follows the declaration of kernel parameter number `slot` (Metal's [[buffer(n)]]).
  virtual std::string param_attribute(int slot) const { return ""; }
  // A last kernel parameter that delivers the thread's position (Metal), or "".
  virtual std::string thread_position_param() const { return ""; }
  // An expression: this thread's linear index in the whole launch, as a 64-bit signed value.
  virtual std::string global_index() const = 0;
  // The name of math function `name` (the C99 name: sqrt, fmod, rint, signbit...) for `t`.
  virtual std::string math_function(std::string_view name, DType t) const = 0;
  // The C type of a scalar dtype (`long long` vs `long`, `unsigned char` vs `uchar`).
  virtual std::string type_name(DType t) const = 0;
  // The suffix of a 64-bit integer literal ("LL"/"ULL" in CUDA, "L"/"UL" in OpenCL and Metal).
  virtual std::string long_suffix(bool is_unsigned) const = 0;
  // An expression for the float of dtype `t` with bit pattern `bits` (infinities and NaNs).
  virtual std::string float_from_bits(DType t, uint64_t bits) const = 0;
  // Statements that set `won` (a bool declared by the caller) when this thread changes the int
  // at `hit` (a global int pointer) from 0 to 1 atomically.
  virtual std::string claim_record(const std::string& hit, const std::string& won) const = 0;
  // Whether the target has printf (Metal has none: print is accepted and ignored there).
  virtual bool supports_print() const { return true; }
  // printf's conversion for a 64-bit integer ("%lld" in CUDA, "%ld" in OpenCL C).
  virtual std::string int64_format(bool is_signed) const { return is_signed ? "%lld" : "%llu"; }
  // A float value `v` of dtype `t` as printf's argument (CUDA promotes f32 to double; OpenCL C
  // passes it as is, since double may not exist).
  virtual std::string print_float_arg(DType t, const std::string& v) const {
    return t == DType::F32 ? "(double)" + v : v;
  }
  // The type of a hardware texture handle (no textures yet; HIP swaps the CUDA one).
  virtual std::string texture_type() const { return ""; }
  // Whether `name` may not be used as an identifier in this target (a keyword, a type or a
  // builtin function). Such locals and parameters are renamed with a suffix.
  virtual bool is_reserved(std::string_view name) const;
  // Refuses kernels the target cannot run (Metal: f64). Throws tack::Error.
  virtual void check_kernel(const ir::Kernel& k) const {}

 private:
  // ---- names ----
  // A unique identifier. User names (parameters, locals) are sanitized and renamed away from
  // the target's reserved words and from the generator's own `tack_` names.
  std::string fresh(std::string_view base, bool user = false);
  // ---- types and literals ----
  std::string mem_type(DType t) const;   // the type in memory: bools are bytes
  std::string wrap_type(DType t) const;  // the unsigned type integer arithmetic wraps in
  std::string flit(DType t, double v) const;
  std::string ilit(DType t, uint64_t bits) const;
  std::string math(std::string_view name, DType t) const { return math_function(name, t); }
  // ---- helpers (the prelude) ----
  std::string use_helper(const std::string& name, const std::string& definition);
  std::string helper_int_div(ir::Op op, DType t);
  std::string helper_float_div(ir::Op op, DType t);
  std::string helper_int_pow(DType t);
  std::string helper_shift(ir::Op op, DType t);
  std::string helper_min_max(ir::Op op, DType t);
  std::string helper_abs(DType t);
  std::string helper_float_to_int(DType from, DType to);
  std::string helper_trips(bool is_signed);
  std::string helper_report(int rank);
  std::string helper_checked_load(DType mem, int rank, bool local);
  // ---- code ----
  std::string expr(const ir::Expr& e);
  std::string call(const ir::Expr& e);
  std::string cast(const ir::Expr& e);
  std::string flat_index(int array, const std::vector<std::string>& idx) const;
  std::string load(const ir::Expr& e);
  void store(const ir::Stmt& s, int depth);
  void block(const ir::Block& b, int depth);
  void stmt(const ir::Stmt& s, int depth);
  void for_loop(const ir::Stmt& s, int depth);
  void print(const ir::Stmt& s, int depth);
  void line(int depth, const std::string& text);
  std::string signature(const std::string& entry_name);
  std::string body();

  const ir::Kernel* k_ = nullptr;
  std::set<std::string> names_;
  std::vector<std::string> param_names_;                // per IR parameter
  std::vector<std::vector<std::string>> extent_names_;  // per array parameter
  std::vector<std::string> local_names_;
  std::vector<std::string> start_names_, step_names_, count_names_;
  std::string record_name_;
  std::set<std::string> helper_names_;
  std::string helpers_;
  std::string out_;
};

}  // namespace tack::codegen
