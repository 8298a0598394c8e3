#include "backends/cpu/cpu_compiler.hpp"

#include <fmt/format.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>

#include "tack/error.hpp"

namespace tack::cpu {
namespace {

void init_llvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

std::string to_text(const llvm::Module& m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  m.print(os, nullptr);
  return s;
}

}  // namespace

CpuCompiler& CpuCompiler::instance() {
  static CpuCompiler* c = new CpuCompiler();  // leaked: kernels may run during static destruction
  return *c;
}

CpuCompiler::CpuCompiler() {
  init_llvm();
  triple_ = llvm::sys::getProcessTriple();
  cpu_ = llvm::sys::getHostCPUName().str();
  llvm::SubtargetFeatures features;
  for (const auto& [name, on] : llvm::sys::getHostCPUFeatures()) features.AddFeature(name, on);
  features_ = features.getString();
  target_ = fmt::format("{};{};{}", triple_, cpu_, features_);
}

std::string CpuCompiler::llvm_version() const {
  return LLVM_VERSION_STRING;
}

CompiledObject CpuCompiler::compile(const ir::Kernel& k, const codegen::LlvmOptions& options,
                                    bool keep_ir) {
  std::lock_guard lock(mutex_);
  std::string err;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple_, err);
  if (!target) throw DeviceError("LLVM has no target for this machine: " + err);
  llvm::TargetOptions to;
  // No fast math: results must match the language's IEEE semantics (and NumPy) bit for bit, so
  // multiplies and adds are not contracted into FMAs either.
  to.AllowFPOpFusion = llvm::FPOpFusion::Strict;
  std::unique_ptr<llvm::TargetMachine> tm(
      target->createTargetMachine(triple_, cpu_, features_, to, llvm::Reloc::PIC_, std::nullopt,
                                  llvm::CodeGenOptLevel::Aggressive));

  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m = codegen::generate_llvm(k, ctx, options);
  m->setTargetTriple(triple_);
  m->setDataLayout(tm->createDataLayout());
  CompiledObject out;
  if (keep_ir) out.ir_before = to_text(*m);

  {
    llvm::PipelineTuningOptions pto;
    pto.LoopVectorization = true;
    pto.SLPVectorization = true;
    pto.LoopUnrolling = true;
    llvm::PassBuilder pb(tm.get(), pto);
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
    mpm.run(*m, mam);
  }
  if (keep_ir) out.ir_after = to_text(*m);

  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  if (tm->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::ObjectFile))
    throw DeviceError("LLVM cannot emit object code for this machine");
  pm.run(*m);
  out.object.assign(buffer.begin(), buffer.end());
  return out;
}

Jit& Jit::instance() {
  static Jit* j = new Jit();  // leaked, like the compiler: generated code must outlive statics
  return *j;
}

Jit::Jit() {
  init_llvm();
  // The JIT only links objects compiled by CpuCompiler; describing the target with what the
  // compiler already detected spares detecting the host a second time at start-up.
  const CpuCompiler& compiler = CpuCompiler::instance();
  llvm::orc::JITTargetMachineBuilder jtmb{llvm::Triple(compiler.triple())};
  jtmb.setCPU(compiler.cpu());
  jtmb.addFeatures(std::vector<std::string>{compiler.features()});
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(jtmb)).create();
  if (!jit) throw DeviceError("cannot start the LLVM JIT: " + llvm::toString(jit.takeError()));
  jit_ = std::move(*jit);
  // Generated code calls the C math library (sinf, exp...), found in this process.
  auto gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      jit_->getDataLayout().getGlobalPrefix());
  if (!gen) throw DeviceError("cannot start the LLVM JIT: " + llvm::toString(gen.takeError()));
  jit_->getMainJITDylib().addGenerator(std::move(*gen));
}

Jit::~Jit() = default;

LoadedKernel Jit::load(const std::string& object, const std::string& prefix, bool has_result) {
  std::lock_guard lock(mutex_);
  if (auto it = loaded_.find(prefix); it != loaded_.end()) return it->second;
  // Each object gets a dylib of its own, so that a failed link leaves nothing half-defined for
  // the retry (a recompiled object with the same symbols) to collide with.
  auto jd = jit_->createJITDylib(fmt::format("{}#{}", prefix, dylibs_++));
  if (!jd) throw DeviceError("JIT: " + llvm::toString(jd.takeError()));
  jd->addToLinkOrder(jit_->getMainJITDylib());
  auto buf = llvm::MemoryBuffer::getMemBufferCopy(object, prefix);
  if (auto e = jit_->addObjectFile(*jd, std::move(buf)))
    throw DeviceError(fmt::format("cannot link the compiled kernel {}: {}", prefix,
                                  llvm::toString(std::move(e))));
  auto find = [&](const std::string& name) -> void* {
    auto sym = jit_->lookup(*jd, name);
    if (!sym)
      throw DeviceError(fmt::format("cannot link the compiled kernel {}: {}", prefix,
                                    llvm::toString(sym.takeError())));
    return sym->toPtr<void*>();
  };
  LoadedKernel k;
  k.chunk = reinterpret_cast<ChunkFn>(find(prefix + "_chunk"));
  if (has_result) k.result = reinterpret_cast<ResultFn>(find(prefix + "_result"));
  loaded_[prefix] = k;
  return k;
}

}  // namespace tack::cpu
