// Module-level name resolution: which names a kernels file binds (imports, constants, kernels,
// device functions) and what a free name inside a function refers to.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "lang/ast.hpp"
#include "lang/constant.hpp"
#include "lang/device_class.hpp"
#include "tack/dtype.hpp"

namespace tack::lang {

// What a free name in a kernel refers to.
struct Symbol {
  enum class Kind {
    Unknown,        // not bound at module level (or bound to something kernels cannot use)
    HostValue,      // a module-level assignment that is not a tack.constant
    Constant,       // constant
    Function,       // a @tack.func or @tack.kernel (function)
    TackModule,     // `tack` or its alias
    MathModule,     // `math`
    ForeignModule,  // another imported module (numpy...)
    TackMember,     // a name imported from tack (`from tack import f32`): member
    Class,          // a @tack.data_oriented class of the module: device_class
  };
  Kind kind = Kind::Unknown;
  const Constant* constant = nullptr;
  const ast::FunctionDef* function = nullptr;
  const DeviceClass* device_class = nullptr;
  std::string member;  // TackMember: the name inside tack; ForeignModule: the module
  SourceLoc loc;       // where it was bound
};

enum class FunctionKind { Kernel, Func, Plain };

// The host's answer for a name the module itself does not bind (Module::from_function): the
// symbol, and for a function its parsed definition.
struct ExternalSymbol {
  Symbol symbol;
  std::optional<Constant> constant;
  std::unique_ptr<ast::Module> function_module;  // holds the definition of a Function
};
using ExternalResolver = std::function<ExternalSymbol(const std::string& name)>;

class ResolvedModule {
 public:
  // Resolves the module's top level. Throws CompileError for a malformed tack.constant,
  // a duplicate definition, or an unknown tack decorator. Names the module does not bind are
  // asked of `external` (once each) when one is given. `lazy_functions`: functions of this module
  // that `external` parses when they are first looked up (load.hpp), which kernel_names() and
  // func_names() list too.
  explicit ResolvedModule(ast::Module module, ExternalResolver external = nullptr,
                          std::vector<std::string> lazy_functions = {});

  const SourceFile& source() const { return *module_.source; }
  std::shared_ptr<const SourceFile> source_ptr() const { return module_.source; }
  Symbol lookup(const std::string& name) const;
  // A function of the module, or a method of one of its device classes named "Class.method".
  const ast::FunctionDef* function(const std::string& name) const;
  // The kernel `name`; throws TypeError naming the module and listing its kernels when it has no
  // kernel of that name.
  const ast::FunctionDef& kernel(const std::string& name) const;
  FunctionKind kind_of(const ast::FunctionDef& f) const;
  // The file a function was written in: this module's, or the host's file for a function the
  // external resolver supplied.
  const SourceFile& source_of(const ast::FunctionDef& f) const;
  std::vector<std::string> kernel_names() const;  // a kernel method as "Class.method"
  std::vector<std::string> func_names() const;
  // The module's @tack.data_oriented class `name`, or null.
  const DeviceClass* device_class(const std::string& name) const;
  std::vector<std::string> class_names() const;

 private:
  void resolve_imports();
  void resolve_globals();
  void resolve_functions();
  void resolve_classes();
  void resolve_class(const ast::ClassDef& c);
  // `call` is tack.constant(value, dtype=...) when `is_call`, else the value itself; `scope`
  // holds the constants declared before it in a class.
  Constant fold_constant(const std::string& name, SourceLoc loc, const ast::Expr& call,
                         bool is_call, const std::string& context,
                         const std::map<std::string, Constant>* scope = nullptr) const;
  FunctionKind decorator_kind(const ast::FunctionDef& f) const;
  std::vector<std::string> names_of(FunctionKind kind) const;
  // Fails on a parameter annotation other than tack.template() (which documents an object).
  void check_annotations(const ast::FunctionDef& f) const;
  // The NAME of `tack.NAME` or of a name imported from tack, else "".
  std::string tack_member(const ast::Expr& e) const;

  ast::Module module_;
  std::map<std::string, Symbol> symbols_;
  std::map<std::string, std::unique_ptr<Constant>> constants_;
  std::map<const ast::FunctionDef*, FunctionKind> kinds_;
  std::map<std::string, std::unique_ptr<DeviceClass>> classes_;
  // The methods each device class declares itself (its base's are asked of the base).
  std::map<std::string, std::map<std::string, Method>> own_methods_;
  // Names answered by the host, cached; lookups may come from several compiling threads.
  ExternalResolver external_;
  std::vector<std::string> lazy_functions_;
  mutable std::recursive_mutex external_mutex_;  // lookups recurse through decorators
  mutable std::map<std::string, Symbol> external_symbols_;
  mutable std::vector<std::unique_ptr<Constant>> external_constants_;
  mutable std::vector<std::unique_ptr<ast::Module>> external_modules_;
  mutable std::map<const ast::FunctionDef*, FunctionKind> external_kinds_;
};

}  // namespace tack::lang
