// The compiler library's implementation of cpu_compiler.hpp: LLVM's optimizer and x86 code
// generator, and lld (shared_object_linker.hpp).
#include "backends/cpu/cpu_compiler.hpp"

#include <fmt/format.h>
#include <llvm/Analysis/TargetTransformInfo.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/SubtargetFeature.h>

#include <exception>
#include <memory>
#include <mutex>

#include "backends/cpu/shared_object_linker.hpp"
#include "runtime/source_id.hpp"

namespace tack::cpu {
namespace {

std::string to_text(const llvm::Module& m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  m.print(os, nullptr);
  return s;
}

class LlvmCompiler final : public Compiler {
 public:
  LlvmCompiler() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  }

  std::string llvm_version() const override { return LLVM_VERSION_STRING; }

  HostTarget host() const override {
    HostTarget t;
    t.triple = llvm::sys::getProcessTriple();
    t.cpu = llvm::sys::getHostCPUName().str();
    llvm::SubtargetFeatures features;
    for (const auto& [name, on] : llvm::sys::getHostCPUFeatures()) features.AddFeature(name, on);
    t.features = features.getString();
    return t;
  }

  CompiledKernel compile(const ir::Kernel& k, const codegen::LlvmOptions& options,
                         const HostTarget& target, bool keep_ir) override {
    std::lock_guard lock(mutex_);
    CompiledKernel out;
    llvm::LLVMContext ctx;
    std::unique_ptr<llvm::Module> m;
    llvm::TargetMachine* tm = nullptr;
    try {
      tm = &target_machine(target);
    } catch (const std::exception& e) {
      out.error = e.what();
      return out;
    }
    try {
      codegen::LlvmOptions o = options;
      o.vector_bits = o.simd ? vector_bits(*tm) : 0;
      o.can_stream = tm->getTargetTriple().isX86();
      m = codegen::generate_llvm(k, ctx, o, &out.path);
    } catch (const std::exception& e) {
      out.error = e.what();
      out.internal_error = true;
      return out;
    }
    try {
      m->setTargetTriple(target.triple);
      m->setDataLayout(tm->createDataLayout());
      if (keep_ir) out.ir_before = to_text(*m);
      optimize(*m, *tm);
      if (keep_ir) out.ir_after = to_text(*m);
      out.shared_object = link_shared_object(emit_object(*m, *tm));
    } catch (const std::exception& e) {
      out.error = e.what();
    }
    return out;
  }

 private:
  // One target machine, made again only for another target: making one costs more than
  // compiling a small kernel.
  llvm::TargetMachine& target_machine(const HostTarget& target) {
    const std::string description =
        fmt::format("{};{};{}", target.triple, target.cpu, target.features);
    if (tm_ && description == tm_description_) return *tm_;
    std::string err;
    const llvm::Target* t = llvm::TargetRegistry::lookupTarget(target.triple, err);
    if (!t) throw std::runtime_error("LLVM has no target for this machine: " + err);
    llvm::TargetOptions to;
    // No fast math: results must match the language's IEEE semantics (and NumPy) bit for bit, so
    // multiplies and adds are not contracted into FMAs either.
    to.AllowFPOpFusion = llvm::FPOpFusion::Strict;
    tm_.reset(t->createTargetMachine(target.triple, target.cpu, target.features, to,
                                     llvm::Reloc::PIC_, std::nullopt,
                                     llvm::CodeGenOptLevel::Aggressive));
    if (!tm_) throw std::runtime_error("LLVM cannot generate code for " + description);
    tm_description_ = description;
    return *tm_;
  }

  // The width of the vector registers LLVM's cost model prefers for this target (256 bits on
  // AVX-512 machines where it avoids the 512-bit frequency penalty), asked of a throwaway function.
  static int vector_bits(llvm::TargetMachine& tm) {
    llvm::LLVMContext ctx;
    llvm::Module m("probe", ctx);
    m.setDataLayout(tm.createDataLayout());
    auto* f = llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), false),
                                     llvm::Function::ExternalLinkage, "probe", m);
    llvm::TargetTransformInfo tti = tm.getTargetTransformInfo(*f);
    return static_cast<int>(
        tti.getRegisterBitWidth(llvm::TargetTransformInfo::RGK_FixedWidthVector).getFixedValue());
  }

  static void optimize(llvm::Module& m, llvm::TargetMachine& tm) {
    llvm::PipelineTuningOptions pto;
    pto.LoopVectorization = true;
    pto.SLPVectorization = true;
    pto.LoopUnrolling = true;
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb(&tm, pto);
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
    mpm.run(m, mam);
  }

  static std::string emit_object(llvm::Module& m, llvm::TargetMachine& tm) {
    llvm::SmallVector<char, 0> buffer;
    llvm::raw_svector_ostream os(buffer);
    llvm::legacy::PassManager pm;
    if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::ObjectFile))
      throw std::runtime_error("LLVM cannot emit object code for this machine");
    pm.run(m);
    return std::string(buffer.begin(), buffer.end());
  }

  std::mutex mutex_;
  std::unique_ptr<llvm::TargetMachine> tm_;
  std::string tm_description_;
};

}  // namespace
}  // namespace tack::cpu

extern "C" __attribute__((visibility("default"))) tack::cpu::Compiler* tack_cpu_compiler_v1(
    const char** source_id) {
  static auto* compiler = new tack::cpu::LlvmCompiler();  // leaked, like every compiled kernel
  *source_id = tack::detail::source_id();
  return compiler;
}
