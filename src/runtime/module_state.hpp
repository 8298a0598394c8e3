// What a tack::Module, a tack::Class and a tack::Function hold, and how a Module makes a Kernel
// (runtime/kernel.cpp, the dispatch).
#pragma once

#include <memory>
#include <string>

#include "lang/resolve.hpp"
#include "tack/kernel.hpp"

namespace tack::detail {

struct ModuleState {
  std::shared_ptr<const lang::ResolvedModule> module;
};

// A device class; one of a kernels file keeps its module alive.
struct ClassState {
  std::shared_ptr<const lang::DeviceClass> cls;
};

struct FunctionState {
  std::shared_ptr<const lang::ResolvedModule> module;
  const ast::FunctionDef* def = nullptr;
};

// A constant as a host describes it (ExternalName of kind Constant), as the compiler's; throws
// TypeError for an unknown dtype or a vector of the wrong size.
lang::Constant to_constant(const ExternalName& n, const std::string& name);

// A handle on kernel `name` of `module`; throws TypeError when the module has no such kernel.
Kernel make_kernel(std::shared_ptr<const lang::ResolvedModule> module, const std::string& name);

}  // namespace tack::detail
