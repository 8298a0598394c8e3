// Device classes (@tack.data_oriented): what kernels need of a class whose instances they take as
// arguments. A kernels file declares them in its source (ResolvedModule makes one per class); a
// host language describes its own (Python's classes, through the runtime), answering for the
// methods by name as kernels call them.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "lang/ast.hpp"
#include "lang/constant.hpp"

namespace tack::lang {

class ResolvedModule;

// A name of a device class that is a function.
struct Method {
  enum class Kind : uint8_t {
    Func,    // a @tack.func method: inlined with the object as its first parameter (self)
    Static,  // a @staticmethod @tack.func: inlined without the object
    Kernel,  // a @tack.kernel method: called from the host only
    Host,    // anything else callable (__init__, a plain def, a property): not device code
  };
  Kind kind = Kind::Host;
  const ast::FunctionDef* def = nullptr;   // Func and Static; the definition
  const ResolvedModule* module = nullptr;  // resolves the free names of def's body
};

class DeviceClass {
 public:
  // The method `name` (inherited ones included), or nothing when the class has no function of
  // that name. Asked at most once per name.
  using MethodResolver = std::function<std::optional<Method>(const std::string& name)>;

  DeviceClass(std::string name, std::vector<std::string> iterate, MethodResolver methods,
              std::map<std::string, Constant> constants = {},
              std::map<std::string, std::string> other_attributes = {})
      : name_(std::move(name)),
        iterate_(std::move(iterate)),
        methods_(std::move(methods)),
        constants_(std::move(constants)),
        other_attributes_(std::move(other_attributes)) {}
  DeviceClass(const DeviceClass&) = delete;
  DeviceClass& operator=(const DeviceClass&) = delete;

  const std::string& name() const { return name_; }
  // __tack_iterate__: one to three attribute names, fastest first, or none.
  const std::vector<std::string>& iterate() const { return iterate_; }
  // The class-level attributes its source declares (a kernels file's class, bases included): the
  // numbers, compile-time constants, and the others, each with what it is ("a str"). A host's
  // class declares none here: each object it passes carries them.
  const std::map<std::string, Constant>& constants() const { return constants_; }
  const std::map<std::string, std::string>& other_attributes() const { return other_attributes_; }
  std::optional<Method> method(const std::string& name) const {
    std::lock_guard lock(mutex_);
    auto it = cache_.find(name);
    if (it == cache_.end()) it = cache_.emplace(name, methods_(name)).first;
    return it->second;
  }

 private:
  std::string name_;
  std::vector<std::string> iterate_;
  MethodResolver methods_;
  std::map<std::string, Constant> constants_;
  std::map<std::string, std::string> other_attributes_;
  // Methods may be asked for by several compiling threads; a host resolver is slow.
  mutable std::recursive_mutex mutex_;
  mutable std::map<std::string, std::optional<Method>> cache_;
};

}  // namespace tack::lang
