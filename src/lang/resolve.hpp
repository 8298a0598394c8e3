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
#include "tack/dtype.hpp"

namespace tack::lang {

// A `tack.constant(value, dtype=None)` declared at module level. Its value is folded when the
// module is loaded; constants are baked into the code at compilation.
struct Constant {
  std::string name;
  SourceLoc loc;
  bool is_float = false;
  bool is_bool = false;
  int64_t int_value = 0;
  uint64_t uint_value = 0;  // exact value of a non-negative integer (may exceed int64)
  double float_value = 0;
  std::optional<DType> dtype;  // given explicitly; otherwise the constant is weak like a literal
  // A vector constant, tack.constant((x, y, z)): its 2 to 4 components (scalars); the fields
  // above are unused then.
  std::vector<Constant> components;
};

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
  };
  Kind kind = Kind::Unknown;
  const Constant* constant = nullptr;
  const ast::FunctionDef* function = nullptr;
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
  const ast::FunctionDef* function(const std::string& name) const;
  FunctionKind kind_of(const ast::FunctionDef& f) const;
  // The file a function was written in: this module's, or the host's file for a function the
  // external resolver supplied.
  const SourceFile& source_of(const ast::FunctionDef& f) const;
  std::vector<std::string> kernel_names() const;
  std::vector<std::string> func_names() const;

 private:
  void resolve_imports();
  void resolve_globals();
  void resolve_functions();
  Constant fold_constant(const ast::GlobalAssign& g) const;
  FunctionKind decorator_kind(const ast::FunctionDef& f) const;
  std::vector<std::string> names_of(FunctionKind kind) const;

  ast::Module module_;
  std::map<std::string, Symbol> symbols_;
  std::map<std::string, std::unique_ptr<Constant>> constants_;
  std::map<const ast::FunctionDef*, FunctionKind> kinds_;
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
