// The CPU code generator: typed IR to an LLVM module, through LLVM's C++ API.
#pragma once

#include <memory>
#include <string>

#include "ir/ir.hpp"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace tack::codegen {

struct LlvmOptions {
  std::string symbol_prefix = "tack_kernel";  // see abi.hpp
  // The arrays were checked at the call not to overlap: accesses to different arrays get
  // alias-scope metadata so that the vectorizer needs no runtime overlap checks.
  bool no_alias = false;
  // Run the parallel loop in SIMD lanes (gang_codegen.hpp) where the kernel allows; the backend
  // turns it off with TACK_CPU_SIMD=0.
  bool simd = true;
  // The target's vector register width, which the compiler fills in from LLVM's description of
  // the target; 0 runs every kernel on the scalar path.
  int vector_bits = 0;
  // The target has non-temporal vector stores and a store fence (x86-64), which the compiler fills
  // in: the widened chunk's whole-gang stores can be streamed past the caches.
  bool can_stream = false;
  // This build streams them, for launches larger than the caches (abi.hpp, <prefix>_streams). A
  // separate build rather than a flag read at run time: LLVM would copy every loop for both values.
  bool stream_stores = false;
};

// Builds the chunk (and result) functions of abi.hpp for `k`. The module is verified. `path`, when
// given, receives which chunk function was built ("widened: ..." or "scalar: " and why).
std::unique_ptr<llvm::Module> generate_llvm(const ir::Kernel& k, llvm::LLVMContext& ctx,
                                            const LlvmOptions& options,
                                            std::string* path = nullptr);

}  // namespace tack::codegen
