// The CPU backend's compiler: typed IR to a relocatable object for this machine (LLVM at O3
// with the loop and SLP vectorizers, no fast math), and an ORC JIT that links such objects into
// the process. Objects are what the disk cache stores, so a later process only links.
#pragma once

#include <mutex>
#include <string>
#include <unordered_map>

#include "codegen/llvm/llvm_codegen.hpp"
#include "ir/ir.hpp"

namespace llvm::orc {
class LLJIT;
}

namespace tack::cpu {

struct CompiledObject {
  std::string object;     // ELF relocatable object
  std::string ir_before;  // LLVM IR as generated (when asked for)
  std::string ir_after;   // LLVM IR after optimization (when asked for)
};

class CpuCompiler {
 public:
  static CpuCompiler& instance();

  // Triple, CPU and features: everything about the target that changes the code.
  const std::string& target_description() const { return target_; }
  const std::string& triple() const { return triple_; }
  const std::string& cpu() const { return cpu_; }
  const std::string& features() const { return features_; }
  std::string llvm_version() const;

  CompiledObject compile(const ir::Kernel& k, const codegen::LlvmOptions& options,
                         bool keep_ir = false);

 private:
  CpuCompiler();
  std::mutex mutex_;
  std::string triple_, cpu_, features_, target_;
};

using ChunkFn = void (*)(const uint64_t* slots, int64_t begin, int64_t end);
using ResultFn = void (*)(const uint64_t* slots, void* out);

struct LoadedKernel {
  ChunkFn chunk = nullptr;
  ResultFn result = nullptr;
};

class Jit {
 public:
  static Jit& instance();
  ~Jit();
  // Links `object` (whose symbols start with `prefix`) into the process. Loading the same prefix
  // twice returns the first load. Throws DeviceError when the object cannot be linked (a corrupt
  // object that passed its checksum, or a missing symbol).
  LoadedKernel load(const std::string& object, const std::string& prefix, bool has_result);

 private:
  Jit();
  std::mutex mutex_;
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  std::unordered_map<std::string, LoadedKernel> loaded_;
  uint64_t dylibs_ = 0;
};

}  // namespace tack::cpu
