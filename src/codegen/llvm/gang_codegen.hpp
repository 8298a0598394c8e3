// The widened chunk function: the innermost parallel dimension runs in gangs of W iterations, one
// per SIMD lane, the whole body as vector code with masks for control flow (as ISPC and Dr.Jit
// do). It has the scalar chunk's signature and meaning (abi.hpp); the scalar generator
// (llvm_codegen.hpp) stays for the kernels this one cannot handle yet (LaneAnalysis::unsupported).
#pragma once

#include <llvm/IR/Module.h>

#include "codegen/llvm/lane_analysis.hpp"
#include "codegen/llvm/llvm_codegen.hpp"

namespace tack::codegen {

// The lanes of a gang: as many as the target's vector registers (`vector_bits`) hold of the
// kernel's widest data type of 32 bits or more (array elements and floating-point values; the
// 64-bit loop indices do not count), at least 4.
int gang_width(const ir::Kernel& k, int vector_bits);

// Adds the widened chunk function (chunk_symbol(options.symbol_prefix)) to `m`; `lanes` is
// analyze_lanes(k), which must have found nothing unsupported.
void build_gang_chunk(const ir::Kernel& k, const LaneAnalysis& lanes, int width, llvm::Module& m,
                      const LlvmOptions& options);

}  // namespace tack::codegen
