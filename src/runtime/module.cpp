// Building modules: a kernels file, or one function handed over by a host language with a resolver
// of its free names, parsed and resolved into a lang::ResolvedModule.
#include <fmt/format.h>
#include <fstream>
#include <set>
#include <sstream>

#include "lang/load.hpp"
#include "lang/parser.hpp"
#include "lang/resolve.hpp"
#include "runtime/module_state.hpp"
#include "tack/error.hpp"
#include "tack/kernel.hpp"
#include "tack/object.hpp"

namespace tack {

Module Module::from_source(const std::string& source, const std::string& filename) {
  auto file = std::make_shared<const SourceFile>(filename, source);
  Module m;
  m.state_ = std::make_shared<detail::ModuleState>();
  // Its functions are parsed when a kernel first reaches them (lang/load.hpp).
  m.state_->source = std::make_shared<const detail::ModuleSource>(file, lang::load_module(file));
  return m;
}

lang::Constant detail::to_constant(const ExternalName& n, const std::string& name) {
  auto scalar = [&](const ExternalName& n) {
    lang::Constant c;
    c.name = name;
    c.is_float = n.is_float;
    c.is_bool = n.is_bool;
    c.int_value = n.int_value;
    c.uint_value = n.is_big ? n.uint_value : static_cast<uint64_t>(n.int_value);
    c.float_value = n.is_float ? n.float_value : static_cast<double>(n.int_value);
    if (!n.dtype.empty()) {
      auto dt = dtype_from_name(n.dtype);
      if (!dt) throw TypeError(fmt::format("tack.constant has an unknown dtype '{}'", n.dtype));
      c.dtype = *dt;
    }
    return c;
  };
  lang::Constant c = scalar(n);
  if (!n.components.empty() && (n.components.size() < 2 || n.components.size() > 4))
    throw TypeError("a vector tack.constant has 2, 3 or 4 components");
  for (const ExternalName& part : n.components) c.components.push_back(scalar(part));
  return c;
}

Module Module::from_function(const std::string& source, const std::string& filename, int first_line,
                             NameResolver resolve) {
  Module m;
  m.state_ = std::make_shared<detail::ModuleState>();
  m.state_->source = std::make_shared<const detail::ModuleSource>(
      detail::function_source(source, filename, first_line), std::move(resolve));
  m.state_->module();  // its errors surface here
  return m;
}

Module Module::from_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("cannot read the kernels file '{}'", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return from_source(ss.str(), path);
}

Kernel Module::kernel(const std::string& name) const {
  return detail::make_kernel(state_->source, name);
}

std::vector<std::string> Module::kernel_names() const {
  return state_->module()->kernel_names();
}

// ---- device classes ----

Class Module::device_class(const std::string& name) const {
  std::shared_ptr<const lang::ResolvedModule> module = state_->module();
  const lang::DeviceClass* c = module->device_class(name);
  if (!c) {
    std::string known;
    for (const auto& n : module->class_names()) known += (known.empty() ? "" : ", ") + n;
    throw TypeError(
        fmt::format("{} has no device class named '{}' (its @tack.data_oriented "
                    "classes: {})",
                    module->source().name(), name, known.empty() ? "none" : known));
  }
  auto state = std::make_shared<detail::ClassState>();
  state->cls = std::shared_ptr<const lang::DeviceClass>(module, c);  // keeps the module
  return Class(std::move(state));
}

Object Module::object(const std::string& cls,
                      std::vector<std::pair<std::string, Attribute>> attributes) const {
  return Object(device_class(cls), std::move(attributes));
}

std::vector<std::string> Module::class_names() const {
  return state_->module()->class_names();
}

Function Module::function(const std::string& name) const {
  std::shared_ptr<const lang::ResolvedModule> module = state_->module();
  const ast::FunctionDef* f = module->function(name);
  if (!f || module->kind_of(*f) != lang::FunctionKind::Func) {
    std::string known;
    for (const auto& n : module->func_names()) known += (known.empty() ? "" : ", ") + n;
    throw TypeError(fmt::format("{} has no @tack.func named '{}' (its functions: {})",
                                module->source().name(), name, known.empty() ? "none" : known));
  }
  auto state = std::make_shared<detail::FunctionState>();
  state->module = std::move(module);
  state->def = f;
  return Function(std::move(state));
}

const std::string& Function::name() const {
  if (!state_) throw TypeError("an empty tack::Function");
  return state_->def->name;
}

const std::string& Class::name() const {
  if (!state_) throw TypeError("an empty tack::Class");
  return state_->cls->name();
}

Class Class::from_host(std::string name, std::vector<std::string> iterate, MethodResolver methods) {
  if (iterate.size() > 3)
    throw TypeError(
        fmt::format("class '{}': __tack_iterate__ names one to three attributes, not {}", name,
                    iterate.size()));
  // The modules of the methods asked for so far; DeviceClass asks under its lock.
  auto modules = std::make_shared<std::vector<std::shared_ptr<const lang::ResolvedModule>>>();
  lang::DeviceClass::MethodResolver resolve =
      [methods = std::move(methods), modules](const std::string& n) -> std::optional<lang::Method> {
    ExternalMethod m = methods(n);
    lang::Method out;
    switch (m.kind) {
      case ExternalMethod::Kind::None:
        return std::nullopt;
      case ExternalMethod::Kind::Host:
        return out;
      case ExternalMethod::Kind::Kernel:
        out.kind = lang::Method::Kind::Kernel;
        return out;
      case ExternalMethod::Kind::Method:
      case ExternalMethod::Kind::Static:
        break;
    }
    lang::ExternalResolver external = [resolve = std::move(m.resolve)](const std::string& name) {
      return detail::to_external(resolve(name));
    };
    auto module = std::make_shared<const lang::ResolvedModule>(
        lang::parse_module(detail::function_source(m.source, m.filename, m.first_line)),
        std::move(external));
    std::vector<std::string> funcs = module->func_names();
    if (funcs.empty())
      throw TypeError(fmt::format("the method '{}' handed over is not a @tack.func", n));
    out.kind = m.kind == ExternalMethod::Kind::Static ? lang::Method::Kind::Static
                                                      : lang::Method::Kind::Func;
    out.def = module->function(funcs.front());
    out.module = module.get();
    modules->push_back(std::move(module));
    return out;
  };
  auto state = std::make_shared<detail::ClassState>();
  state->cls = std::make_shared<const lang::DeviceClass>(std::move(name), std::move(iterate),
                                                         std::move(resolve));
  return Class(std::move(state));
}

Object::Object(Class cls, Attributes attributes, Constants constants)
    : class_(std::move(cls)), attributes_(std::move(attributes)), constants_(std::move(constants)) {
  if (!class_.state()) throw TypeError("a tack::Object needs its class");
  std::set<std::string> seen;
  for (const auto& [name, value] : attributes_)
    if (name.empty() || !seen.insert(name).second)
      throw TypeError(fmt::format("an object of class '{}' has {} attribute '{}'", class_.name(),
                                  name.empty() ? "an empty name for an" : "two values for its",
                                  name));
}

}  // namespace tack
