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
//   a pointer to the debug record (an int array laid out as codegen::DebugRecord, in
//     codegen/debug_record.hpp), written only by kernels compiled in debug mode.
//   Metal only: the thread's position in the grid ([[thread_position_in_grid]]) and, in kernels
//     with workgroups, its lane, group and group size (thread_position_in_threadgroup,
//     threadgroup_position_in_grid, threads_per_threadgroup).
// A launch runs at least count0 * count1 * ... threads; thread `gid` runs the iteration whose
// row-major position is gid, and threads past the total return at once.
//
// Workgroups: a kernel with ir::Kernel::workgroup_size > 0 (it uses tack.shared, thread_id,
// barrier, block collectives...) must be launched with groups of exactly that many threads (256)
// in dimension 0. When it also has ir::Kernel::collectives (barriers or block collectives), the
// launch must consist of complete groups: the runtime refuses an iteration count that is not a
// multiple of 256, so no thread returns early and every barrier is reached by the whole group.
// Shared arrays and the collectives' scratch (256 values per dtype used) are statically sized
// workgroup memory (__shared__, __local, threadgroup). Block collectives combine in the fixed
// order of ir::Collective, so floats give the same bits on every target.
//
// Atomics (tack.atomic_*) are relaxed and device-scoped and return the old value. 32-bit integer
// operations use the target's native atomics (and CUDA/HIP's float and 64-bit adds); the others
// (floats, 64-bit min/max/and/or/xor/exchange, every compare-and-swap of a float) are
// compare-and-swap loops over the value's bits. Supported dtypes: i32 u32 i64 u64 f32 f64 on
// CUDA, HIP and OpenCL (64-bit needs cl_khr_int64_base/extended_atomics); i32 u32 f32 on Metal
// and Level Zero. Other dtypes are refused with an error naming the target. An atomic on a
// tack.local_array is a plain read-modify-write (no other thread sees that memory).
//
// Kernels that return a value (`return expr` after the loop) get a second entry named
// `<entry>_result` with the same parameters followed by one more: a global pointer to the
// result's memory type (a bool is a byte). Launch it with one thread after the main entry has
// finished: it recomputes the prelude, runs the epilogue and stores the result expression at
// element 0.
//
// Kernels with reductions (ir::Reduction) run one thread per lane of every block instead of one
// per iteration: launch reduction_partials(iterations) threads (backends::launch_threads); thread
// t runs lane t % 16 of block t / 16 and stores its values to the partials, which the result
// entry's epilogue combines.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ir.hpp"

namespace tack::codegen {

// The source of `k` for `target` ("cuda", "hip", "opencl", "level_zero" (OpenCL C), "metal"),
// with the kernel function named `entry_name` (and `<entry_name>_result` for a kernel that
// returns a value). Throws tack::Error for an unknown target, f64 on Metal and atomics on a
// dtype the target has no atomics for.
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

  // ---- workgroups and atomics ----
  // The qualifier that declares a shared array ("__shared__ ", "__local ", "threadgroup "), and
  // the address space of a pointer to one ("" in CUDA).
  virtual std::string shared_decl() const = 0;
  virtual std::string shared_space() const = 0;
  // A statement: wait for the whole group; `global` also orders device memory (tack.barrier),
  // else only shared memory (inside the collectives).
  virtual std::string barrier(bool global) const = 0;
  // Expressions: the lane in the group (int), the group's index (64-bit), the group's size (int).
  virtual std::string lane_index() const = 0;
  virtual std::string group_index() const = 0;
  virtual std::string group_size() const = 0;
  // More kernel parameters that deliver these (Metal), in kernels with workgroups.
  virtual std::vector<std::string> workgroup_params() const { return {}; }
  // Lines for the top of the file when the kernel has atomics (`int64`: on 64-bit values).
  virtual std::string atomics_preamble(bool int64) const { return ""; }
  // The dtypes with atomics on this target.
  virtual std::set<DType> atomic_dtypes() const;
  // An expression for a native atomic `op` on `T* p` (in address space `space`) with value `v`
  // that returns the old value, or "" to use a compare-and-swap loop.
  virtual std::string native_atomic(ir::AtomicOp op, DType t, const std::string& space,
                                    const std::string& p, const std::string& v) const = 0;
  // The body of `U tack_cas(SPACE U* p, U e, U d)` for U = u32 or u64: one strong
  // compare-and-swap returning the old value.
  virtual std::string cas_body(DType u, const std::string& space) const = 0;
  // An expression: the bits of `v` (of float dtype `from`) as the unsigned integer of its width,
  // or the reverse (`to_float`).
  virtual std::string float_bits(DType f, bool to_float, const std::string& v) const = 0;

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
  // `space`: the address space of the array (global, private, shared).
  std::string helper_checked_load(DType mem, int rank, const std::string& space);
  std::string space_of(int array) const;
  std::string helper_cas(DType u, const std::string& space);
  std::string helper_atomic(ir::AtomicOp op, DType t, int array);
  std::string helper_collective(ir::Collective c, DType t);
  std::string combine(ir::Op op, DType t, const std::string& a, const std::string& b);
  std::string atomic(const ir::Expr& e);
  std::string collective(const ir::Expr& e);
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
  std::string signature(const std::string& entry_name, bool result_entry);
  void declare_storage();
  std::string body();
  std::string result_body();
  void iteration(const std::string& g, int depth);
  std::string reduction_body(const std::string& gid);
  void reset_entry();

  const ir::Kernel* k_ = nullptr;
  std::set<std::string> names_;
  std::vector<std::string> param_names_;                // per IR parameter
  std::vector<std::vector<std::string>> extent_names_;  // per array parameter
  std::vector<std::string> local_names_;
  std::vector<std::string> start_names_, step_names_, count_names_;
  std::string record_name_, result_name_;
  std::set<DType> scratch_dtypes_;  // block collectives' scratch arrays
  std::set<std::string> helper_names_;
  std::string helpers_;
  std::string out_;
};

}  // namespace tack::codegen
