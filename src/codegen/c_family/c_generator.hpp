// C-family source generators: typed IR to CUDA C, HIP C, OpenCL C and Metal Shading Language.
//
// One printer (CFamilyGenerator) writes structured C for a kernel: its parameters, the parallel
// loop as a GPU kernel in which each thread takes one linear index, sequential loops, and helper
// functions that give every operation the CPU backend's exact meaning (llvm_codegen.cpp is the
// reference). Each target is a table of spellings (CDialect, c_dialect.hpp): an include, the kernel
// qualifier, an address space, the thread index, a type or math name, the debug record's
// compare-and-swap, the texture handle type, the identifiers to rename. Only Metal adds code of
// its own (MslGenerator: what it refuses).
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

#include "codegen/c_family/c_dialect.hpp"
#include "ir/ir.hpp"

namespace tack::codegen {

// The source of `k` for `target` ("cuda", "hip", "opencl", "level_zero" (OpenCL C), "metal"),
// with the kernel function named `entry_name` (and `<entry_name>_result` for a kernel that
// returns a value). Throws tack::Error for an unknown target, f64 on Metal and atomics on a
// dtype the target has no atomics for.
std::string generate_source(const ir::Kernel& k, const std::string& target,
                            const std::string& entry_name);

// The targets generate_source prints, in alphabetical order: the one list the runtime's
// inspect(backend=...) and `tack emit` offer without a device.
const std::vector<std::string>& source_targets();

// Whether any parameter, local or expression of `k` has dtype `t` (counting the values of
// print statements when `in_print`).
bool uses_dtype(const ir::Kernel& k, DType t, bool in_print = true);

// The printer. A generator object prints one kernel per generate() call, in the spellings of its
// dialect (c_dialect.hpp). Its work is in three files: c_generator.cpp (the kernel, statements and
// expressions), c_prelude.cpp (the helper functions that give operations the CPU's meaning) and
// c_atomics.cpp (atomics and block collectives).
class CFamilyGenerator {
 public:
  explicit CFamilyGenerator(const CDialect& dialect) : d_(dialect) {}
  virtual ~CFamilyGenerator() = default;

  std::string generate(const ir::Kernel& k, const std::string& entry_name);

 protected:
  // Refuses, before printing, a kernel the target cannot run (Metal: f64). Throws tack::Error.
  // The one thing a target does in code rather than spell in its dialect.
  virtual void check_kernel(const ir::Kernel& k) const {}

 private:
  // ---- the dialect's spellings, where they are not printed as they are ----
  std::string type_name(DType t) const { return std::string(d_.types.of(t)); }
  std::string long_suffix(bool is_unsigned) const;
  std::string math(std::string_view name, DType t) const;
  // The bits of `v` (of float dtype `f`) as the unsigned integer of its width, or the reverse.
  std::string float_bits(DType f, bool to_float, const std::string& v) const;
  // The float of dtype `t` with bit pattern `bits` (infinities and NaNs).
  std::string float_from_bits(DType t, uint64_t bits) const;
  std::string claim_record(const std::string& hit, const std::string& won) const;
  // How a scalar kernel parameter of C type `type` is declared.
  std::string scalar_param(const std::string& type) const;
  // Whether `name` may not be an identifier of this target (a keyword, a type or a builtin).
  bool is_reserved(std::string_view name) const;
  // ---- names ----
  // A unique identifier. User names (parameters, locals) are sanitized and renamed away from
  // the target's reserved words and from the generator's own `tack_` names.
  std::string fresh(std::string_view base, bool user = false);
  // ---- types and literals ----
  std::string mem_type(DType t) const;   // the type in memory: bools are bytes
  std::string wrap_type(DType t) const;  // the unsigned type integer arithmetic wraps in
  std::string flit(DType t, double v) const;
  std::string ilit(DType t, uint64_t bits) const;
  // ---- helpers: each printed once, before the entries, when first used ----
  std::string use_helper(const std::string& name, const std::string& definition);
  // The address space of array parameter `array` (global, private, shared).
  std::string space_of(int array) const;
  // ---- the prelude (c_prelude.cpp) ----
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
  // ---- atomics and collectives (c_atomics.cpp) ----
  // A native atomic `op` on `T* p` with value `v` returning the old value, or "" for a
  // compare-and-swap loop.
  std::string native_atomic(ir::AtomicOp op, DType t, const std::string& space,
                            const std::string& p, const std::string& v) const;
  std::string cas_body(DType u, const std::string& space) const;
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

  const CDialect& d_;
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

// Metal Shading Language: its dialect, and the refusals of what Metal cannot run.
class MslGenerator final : public CFamilyGenerator {
 public:
  MslGenerator() : CFamilyGenerator(msl_dialect()) {}

 protected:
  // f64 (Metal GPUs have none), and more than 31 buffer arguments.
  void check_kernel(const ir::Kernel& k) const override;
};

}  // namespace tack::codegen
