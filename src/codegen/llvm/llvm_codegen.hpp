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
};

// Builds the chunk (and result) functions of abi.hpp for `k`. The module is verified.
std::unique_ptr<llvm::Module> generate_llvm(const ir::Kernel& k, llvm::LLVMContext& ctx,
                                            const LlvmOptions& options);

}  // namespace tack::codegen
