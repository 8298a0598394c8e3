// The CPU backend's compiler: typed IR to a small shared object for this machine (the generator
// of codegen/llvm, LLVM at O3 with the loop and SLP vectorizers and no fast math, x86 code, and
// lld linking it), which the disk cache stores and kernel_loader.hpp loads with dlopen.
//
// It lives in its own library, libtack_cpu_compiler.so, the only part of Tack that links LLVM:
// libtack opens it with dlopen the first time a kernel must be compiled (compiler() below), so a
// process that only loads cached kernels, or runs on a GPU, never maps LLVM. The two talk through
// the interface below, built from the same sources (checked: the library reports the hash of the
// sources it was built from), and no exception crosses between them.
#pragma once

#include <string>

#include "codegen/llvm/llvm_codegen.hpp"
#include "ir/ir.hpp"

namespace tack::cpu {

// What the generated code is for: everything about the machine that changes it, in LLVM's terms.
struct HostTarget {
  std::string triple, cpu, features;  // features: "+avx2,-avx512f,..." as LLVM lists them
};

struct CompiledKernel {
  std::string shared_object;  // an ELF shared object exporting abi.hpp's entry points
  std::string ir_before;      // LLVM IR as generated (when asked for)
  std::string ir_after;       // LLVM IR after optimization (when asked for)
  std::string path;           // which chunk function: "widened: ..." or "scalar: " and why
  // Empty on success; otherwise why the kernel could not be compiled, and whether that is a bug in
  // Tack (invalid IR) rather than a failure of the compiler or linker on this machine.
  std::string error;
  bool internal_error = false;
};

// Implemented by the compiler library.
class Compiler {
 public:
  virtual ~Compiler() = default;
  virtual std::string llvm_version() const = 0;
  // LLVM's own description of this machine (its host CPU name and features).
  virtual HostTarget host() const = 0;
  // Thread-safe; compiles one kernel at a time.
  virtual CompiledKernel compile(const ir::Kernel& k, const codegen::LlvmOptions& options,
                                 const HostTarget& target, bool keep_ir) = 0;
};

// The compiler library's entry point, the one symbol it exports: its Compiler (never destroyed),
// and in *source_id the hash of the sources it was built from (runtime/source_id.hpp).
inline constexpr const char* kCompilerEntry = "tack_cpu_compiler_v1";
using CompilerEntry = Compiler* (*)(const char** source_id);

// The compiler library's file name; it is looked for in the directory libtack was loaded from.
inline constexpr const char* kCompilerLibrary = "libtack_cpu_compiler.so";

// The compiler, from the library loaded on the first call. Throws DeviceError, saying what to do,
// when the library is missing, does not load, or belongs to another build of Tack.
Compiler& compiler();

// The compiled kernel, or DeviceError (Error for an internal error) naming the kernel.
CompiledKernel compile_kernel(const ir::Kernel& k, const codegen::LlvmOptions& options,
                              const HostTarget& target, bool keep_ir);

}  // namespace tack::cpu
