// What a tack::Module, a tack::Class and a tack::Function hold, and how a Module makes a Kernel
// (runtime/kernel.cpp, the dispatch).
#pragma once

#include <memory>
#include <string>

#include "lang/resolve.hpp"
#include "runtime/module_source.hpp"
#include "tack/kernel.hpp"

namespace tack::detail {

struct ModuleState {
  std::shared_ptr<const ModuleSource> source;
  // The module, resolved (Module::from_source and from_function resolve it when made).
  std::shared_ptr<const lang::ResolvedModule> module() const { return source->module(); }
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

// A handle on kernel `name` of `source`'s module; throws TypeError when the module has no such
// kernel. Unless `check_now` is false, when the module is resolved at the first call instead, and
// the check with it (Python's @tack.kernel, whose name is the decorated function's).
Kernel make_kernel(std::shared_ptr<const ModuleSource> source, const std::string& name,
                   bool check_now = true);

}  // namespace tack::detail
