#include "lang/resolve.hpp"

#include <fmt/format.h>
#include <cmath>
#include <functional>
#include <numbers>

#include "lang/diagnostics.hpp"
#include "tack/error.hpp"

namespace tack::lang {
namespace {

constexpr const char* kModule = "<module>";

}  // namespace

ResolvedModule::ResolvedModule(ast::Module module, ExternalResolver external,
                               std::vector<std::string> lazy_functions)
    : module_(std::move(module)),
      external_(std::move(external)),
      lazy_functions_(std::move(lazy_functions)) {
  resolve_imports();
  resolve_globals();
  resolve_functions();
  resolve_classes();
}

void ResolvedModule::resolve_imports() {
  for (const ast::Import& imp : module_.imports) {
    if (!imp.is_from) {
      Symbol s;
      s.loc = imp.loc;
      s.kind = imp.module == "tack"   ? Symbol::Kind::TackModule
               : imp.module == "math" ? Symbol::Kind::MathModule
                                      : Symbol::Kind::ForeignModule;
      s.member = imp.module;
      // `import a.b` binds `a`; `import a.b as c` binds c.
      std::string bound =
          imp.alias.empty() ? imp.module.substr(0, imp.module.find('.')) : imp.alias;
      if (bound == "tack" && imp.module != "tack") s.kind = Symbol::Kind::TackModule;
      symbols_[bound] = s;
      continue;
    }
    for (const auto& [name, alias] : imp.names) {
      Symbol s;
      s.loc = imp.loc;
      if (imp.module == "tack" || imp.module == "tack.math") {
        s.kind = Symbol::Kind::TackMember;
        s.member = name;
      } else if (imp.module == "math") {
        s.kind = Symbol::Kind::TackMember;  // math.sqrt and tack.sqrt are the same builtin
        s.member = name;
      } else {
        s.kind = Symbol::Kind::ForeignModule;
        s.member = imp.module + "." + name;
      }
      symbols_[alias.empty() ? name : alias] = s;
    }
  }
}

namespace {

// The value of a constant expression while folding: an integer or a float.
struct Folded {
  bool is_float = false;
  bool is_bool = false;
  int64_t i = 0;
  uint64_t u = 0;
  bool big = false;  // above INT64_MAX, exact value in u
  double f = 0;
  double as_double() const { return is_float ? f : big ? static_cast<double>(u) : i; }
};

}  // namespace

Constant ResolvedModule::fold_constant(const std::string& name, SourceLoc loc,
                                       const ast::Expr& call, bool is_call,
                                       const std::string& context,
                                       const std::map<std::string, Constant>* scope) const {
  const SourceFile& src = *module_.source;
  auto fail = [&](SourceLoc loc, const std::string& msg, const std::string& hint) {
    throw_compile_error(src, context, loc, msg, hint, scope ? "class" : "kernel");
  };
  const std::string hint = scope ? "a class-level constant is a number: write NAME = 4, 2.5 or "
                                   "tack.constant(7, dtype=tack.i64)"
                                 : "write NAME = tack.constant(3.5) or tack.constant(7, "
                                   "dtype=tack.i64)";
  if (is_call && (call.args.size() != 1 || call.keywords.size() > 1))
    fail(call.loc, "tack.constant takes one value and an optional dtype=", hint);

  std::function<Folded(const ast::Expr&)> eval = [&](const ast::Expr& e) -> Folded {
    Folded r;
    switch (e.kind) {
      case ast::Expr::Kind::IntLit:
        r.i = e.int_value;
        r.u = e.uint_value;
        r.big = e.uint_value > static_cast<uint64_t>(INT64_MAX);
        return r;
      case ast::Expr::Kind::FloatLit:
        r.is_float = true;
        r.f = e.float_value;
        return r;
      case ast::Expr::Kind::BoolLit:
        r.is_bool = true;
        r.i = e.bool_value;
        return r;
      case ast::Expr::Kind::Name: {
        const Constant* found = nullptr;
        if (scope && scope->count(e.name)) found = &scope->at(e.name);
        if (auto it = constants_.find(e.name); !found && it != constants_.end())
          found = it->second.get();
        if (!found) fail(e.loc, fmt::format("'{}' is not a constant declared above", e.name), hint);
        const Constant& c = *found;
        if (!c.components.empty())
          fail(e.loc, fmt::format("'{}' is a vector constant, not a number", e.name),
               "build vector constants from numbers: tack.constant((1.0, 2.0))");
        r.is_float = c.is_float;
        r.is_bool = c.is_bool;
        r.i = c.int_value;
        r.u = c.uint_value;
        r.big = !c.is_float && c.uint_value > static_cast<uint64_t>(INT64_MAX);
        r.f = c.float_value;
        return r;
      }
      case ast::Expr::Kind::Attribute:
        if (e.operand->kind == ast::Expr::Kind::Name &&
            lookup(e.operand->name).kind == Symbol::Kind::MathModule) {
          r.is_float = true;
          if (e.name == "pi")
            r.f = std::numbers::pi;
          else if (e.name == "e")
            r.f = std::numbers::e;
          else if (e.name == "tau")
            r.f = 2 * std::numbers::pi;
          else if (e.name == "inf")
            r.f = INFINITY;
          else if (e.name == "nan")
            r.f = NAN;
          else
            fail(e.loc, fmt::format("math.{} is not a constant", e.name),
                 "use math.pi, math.e, math.tau or math.inf");
          return r;
        }
        break;
      case ast::Expr::Kind::Unary: {
        Folded a = eval(*e.args[0]);
        if (e.unary_op == ast::UnaryOp::Neg) {
          if (a.is_float)
            a.f = -a.f;
          else if (a.big)
            fail(e.loc, "constant out of range", hint);
          else
            a.i = -a.i;
          a.u = static_cast<uint64_t>(a.i);
          a.is_bool = false;
          return a;
        }
        if (e.unary_op == ast::UnaryOp::Pos) return a;
        break;
      }
      case ast::Expr::Kind::Binary: {
        Folded a = eval(*e.args[0]), b = eval(*e.args[1]);
        if (a.big || b.big)
          fail(e.loc, "arithmetic on constants above 2**63 is not supported", hint);
        bool fl = a.is_float || b.is_float || e.bin_op == ast::BinOp::Div;
        r.is_float = fl;
        double x = a.as_double(), y = b.as_double();
        switch (e.bin_op) {
          case ast::BinOp::Add:
            fl ? (void)(r.f = x + y) : (void)(r.i = a.i + b.i);
            break;
          case ast::BinOp::Sub:
            fl ? (void)(r.f = x - y) : (void)(r.i = a.i - b.i);
            break;
          case ast::BinOp::Mul:
            fl ? (void)(r.f = x * y) : (void)(r.i = a.i * b.i);
            break;
          case ast::BinOp::Div:
            r.f = x / y;
            break;
          case ast::BinOp::Pow:
            if (fl || b.i < 0) {
              r.is_float = true;
              r.f = std::pow(x, y);
            } else {
              r.i = 1;
              for (int64_t k = 0; k < b.i; ++k) r.i *= a.i;
            }
            break;
          default:
            fail(e.loc,
                 fmt::format("operator {} is not supported in tack.constant",
                             ast::spelling(e.bin_op)),
                 hint);
        }
        r.u = static_cast<uint64_t>(r.i);
        return r;
      }
      default:
        break;
    }
    fail(e.loc, "the value of a tack.constant must be a number, a constant or math.pi", hint);
    return r;  // not reached: fail throws
  };

  auto make = [&](const Folded& v) {
    Constant c;
    c.name = name;
    c.loc = loc;
    c.is_float = v.is_float;
    c.is_bool = v.is_bool;
    c.int_value = v.i;
    c.uint_value = v.big ? v.u : static_cast<uint64_t>(v.i);
    c.float_value = v.is_float ? v.f : v.as_double();
    return c;
  };
  const ast::Expr& value = is_call ? *call.args[0] : call;
  Constant c;
  if (value.kind == ast::Expr::Kind::Tuple) {
    // A vector constant: each component is folded on its own.
    if (value.args.size() < 2 || value.args.size() > 4)
      fail(value.loc, "a vector tack.constant has 2, 3 or 4 components",
           "write NAME = tack.constant((1.0, 0.0, 0.0))");
    c = make(Folded{});
    for (const auto& part : value.args) c.components.push_back(make(eval(*part)));
  } else {
    c = make(eval(value));
  }
  if (is_call && !call.keywords.empty()) {
    const ast::Keyword& kw = call.keywords[0];
    if (kw.name != "dtype")
      fail(kw.loc, fmt::format("tack.constant has no argument '{}'", kw.name), hint);
    std::string dname;
    if (kw.value->kind == ast::Expr::Kind::StringLit)
      dname = kw.value->string_value;
    else if (kw.value->kind == ast::Expr::Kind::Attribute)
      dname = kw.value->name;
    else if (kw.value->kind == ast::Expr::Kind::Name)
      dname = kw.value->name;
    auto dt = dtype_from_name(dname);
    if (!dt)
      fail(kw.value->loc, "dtype= must name a Tack dtype",
           "write dtype=tack.f32, tack.i64, ... or a string such as 'f32'");
    c.dtype = *dt;
    for (Constant& part : c.components) part.dtype = *dt;
    bool any_float = c.is_float;
    for (const Constant& part : c.components) any_float |= part.is_float;
    if (is_integer(*dt) && any_float)
      fail(call.loc,
           fmt::format("constant '{}' is a float but its dtype is {}", name, dtype_name(*dt)),
           "write an integer value or a float dtype");
  }
  return c;
}

std::string ResolvedModule::tack_member(const ast::Expr& e) const {
  if (e.kind == ast::Expr::Kind::Attribute && e.operand->kind == ast::Expr::Kind::Name &&
      lookup(e.operand->name).kind == Symbol::Kind::TackModule)
    return e.name;
  if (e.kind != ast::Expr::Kind::Name) return "";
  Symbol s = lookup(e.name);
  return s.kind == Symbol::Kind::TackMember ? s.member : "";
}

void ResolvedModule::resolve_globals() {
  for (const ast::GlobalAssign& g : module_.globals) {
    const ast::Expr& v = *g.value;
    Symbol s;
    s.loc = g.loc;
    if (v.kind == ast::Expr::Kind::Call && tack_member(*v.operand) == "constant") {
      auto c = std::make_unique<Constant>(fold_constant(g.name, g.loc, v, true, kModule));
      s.kind = Symbol::Kind::Constant;
      s.constant = c.get();
      constants_[g.name] = std::move(c);
    } else {
      s.kind = Symbol::Kind::HostValue;
    }
    symbols_[g.name] = s;
  }
}

FunctionKind ResolvedModule::decorator_kind(const ast::FunctionDef& f) const {
  FunctionKind kind = FunctionKind::Plain;
  for (const ast::Decorator& d : f.decorators) {
    const ast::Expr* e = d.expr.get();
    if (e->kind == ast::Expr::Kind::Call) {
      if (!tack_member(*e->operand).empty() && (!e->args.empty() || !e->keywords.empty()))
        throw_compile_error(source(), f.name, d.loc, "decorator arguments are not supported",
                            "write @tack.kernel or @tack.func");
      e = e->operand.get();
    }
    std::string member = tack_member(*e);
    if (member.empty()) continue;  // a decorator of another library: the function is not Tack's
    if (member == "kernel")
      kind = FunctionKind::Kernel;
    else if (member == "func")
      kind = FunctionKind::Func;
    else
      throw_compile_error(
          source(), f.name, d.loc, fmt::format("tack.{} is not a decorator of functions", member),
          member == "data_oriented" ? "@tack.data_oriented decorates a class"
                                    : "write @tack.kernel for a kernel or @tack.func for a device "
                                      "function");
  }
  return kind;
}

void ResolvedModule::check_annotations(const ast::FunctionDef& f) const {
  for (const ast::Param& p : f.params) {
    if (!p.annotation) continue;
    const ast::Expr& a = *p.annotation;
    if (a.kind == ast::Expr::Kind::Call && a.args.empty() && a.keywords.empty() &&
        tack_member(*a.operand) == "template")
      continue;
    throw_compile_error(source_of(f), f.name, a.loc,
                        fmt::format("parameter annotations are not supported ('{}')", p.name),
                        "remove the annotation: parameter types are inferred from the arguments "
                        "at each call (an object parameter may be annotated tack.template(), "
                        "which only documents it)");
  }
}

void ResolvedModule::resolve_functions() {
  for (const auto& f : module_.functions) {
    FunctionKind kind = decorator_kind(*f);
    if (symbols_.count(f->name) && symbols_[f->name].kind == Symbol::Kind::Function)
      throw_compile_error(source(), f->name, f->loc,
                          fmt::format("'{}' is defined twice in this module", f->name),
                          "rename one of the two definitions");
    if (kind != FunctionKind::Plain) check_annotations(*f);
    Symbol s;
    s.kind = Symbol::Kind::Function;
    s.function = f.get();
    s.loc = f->loc;
    symbols_[f->name] = s;
    kinds_[f.get()] = kind;
  }
}

namespace {

// Whether a class-level value is a number the compiler folds: literals, constants, math.pi, and
// arithmetic of them; a tuple of 2 to 4 of them is a vector constant.
bool is_number_expr(const ast::Expr& e, const std::function<bool(const std::string&)>& constant,
                    bool top = true) {
  using K = ast::Expr::Kind;
  switch (e.kind) {
    case K::IntLit:
    case K::FloatLit:
    case K::BoolLit:
    case K::Attribute:
      return true;
    case K::Name:
      return constant(e.name);
    case K::Unary:
    case K::Binary:
      for (const auto& a : e.args)
        if (!is_number_expr(*a, constant, false)) return false;
      return true;
    case K::Tuple:
      if (!top || e.args.size() < 2 || e.args.size() > 4) return false;
      for (const auto& a : e.args)
        if (!is_number_expr(*a, constant, false)) return false;
      return true;
    default:
      return false;
  }
}

// What a class-level value that is not a number is, for the error of a kernel that reads it.
std::string describe_value(const ast::Expr& e) {
  switch (e.kind) {
    case ast::Expr::Kind::StringLit:
      return "a str";
    case ast::Expr::Kind::Tuple:
      return "a tuple";
    case ast::Expr::Kind::Call:
      return "the result of a call";
    case ast::Expr::Kind::Name:
      return fmt::format("'{}', a host value", e.name);
    default:
      return "not a number the compiler can read";
  }
}

}  // namespace

void ResolvedModule::resolve_classes() {
  for (const auto& c : module_.classes) {
    if (auto it = symbols_.find(c->name);
        it != symbols_.end() &&
        (it->second.kind == Symbol::Kind::Function || it->second.kind == Symbol::Kind::Class))
      throw_compile_error(source(), c->name, c->loc,
                          fmt::format("'{}' is defined twice in this module", c->name),
                          "rename one of the two definitions", "class");
    bool device = false;
    for (const ast::Decorator& d : c->decorators) {
      const ast::Expr* e = d.expr.get();
      if (e->kind == ast::Expr::Kind::Call) e = e->operand.get();
      std::string member = tack_member(*e);
      if (member == "data_oriented" && e == d.expr.get())
        device = true;
      else if (!member.empty())
        throw_compile_error(source(), c->name, d.loc,
                            fmt::format("@tack.{}{} is not a class decorator", member,
                                        e == d.expr.get() ? "" : "(...)"),
                            "write @tack.data_oriented above a class whose objects kernels take",
                            "class");
    }
    Symbol s;
    s.loc = c->loc;
    s.kind = Symbol::Kind::HostValue;  // a host class: kernels cannot use it
    if (device) {
      resolve_class(*c);
      s.kind = Symbol::Kind::Class;
      s.device_class = classes_.at(c->name).get();
    }
    symbols_[c->name] = s;
  }
}

void ResolvedModule::resolve_class(const ast::ClassDef& c) {
  if (c.unparsed) std::rethrow_exception(c.unparsed);
  auto fail = [&](SourceLoc loc, const std::string& message, const std::string& hint) {
    throw_compile_error(source(), c.name, loc, message, hint, "class");
  };
  const DeviceClass* base = nullptr;
  for (const auto& b : c.bases) {
    if (b->kind == ast::Expr::Kind::Name && b->name == "object" &&
        lookup("object").kind == Symbol::Kind::Unknown)
      continue;
    Symbol s = b->kind == ast::Expr::Kind::Name ? lookup(b->name) : Symbol{};
    if (s.kind != Symbol::Kind::Class)
      fail(b->loc, fmt::format("the base of class '{}' is not a device class of this file", c.name),
           "derive from a @tack.data_oriented class defined above it in the same file");
    if (base)
      fail(b->loc, "a device class of a kernels file has one base class",
           "derive from one device class");
    base = s.device_class;
  }

  // Class-level attributes: numbers are constants, other values are kept with what they are;
  // a subclass overrides its base's.
  std::map<std::string, Constant> constants;
  std::map<std::string, std::string> others;
  std::vector<std::string> iterate;
  if (base) {
    constants = base->constants();
    others = base->other_attributes();
    iterate = base->iterate();
  }
  for (const ast::ClassDef::Attribute& a : c.attributes) {
    const ast::Expr& v = *a.value;
    if (a.name == "__tack_iterate__") {
      iterate.clear();
      std::vector<const ast::Expr*> items;
      if (v.kind == ast::Expr::Kind::Tuple)
        for (const auto& x : v.args) items.push_back(x.get());
      else
        items.push_back(&v);
      for (const ast::Expr* x : items)
        if (x->kind == ast::Expr::Kind::StringLit && !x->string_value.empty())
          iterate.push_back(x->string_value);
      if (iterate.size() != items.size() || items.empty() || items.size() > 3)
        fail(v.loc,
             "__tack_iterate__ names one to three attributes of the object, fastest first: the "
             "extents of the parallel loop over it",
             "write __tack_iterate__ = (\"n\",) or (\"nx\", \"ny\") or (\"nx\", \"ny\", "
             "\"nz\")");
      continue;
    }
    if (a.name.size() > 4 && a.name.rfind("__", 0) == 0 && a.name.ends_with("__"))
      continue;  // Python's own (__slots__, __doc__...)
    constants.erase(a.name);
    others.erase(a.name);
    if (v.kind == ast::Expr::Kind::Call && tack_member(*v.operand) == "constant")
      constants[a.name] = fold_constant(a.name, a.loc, v, true, c.name, &constants);
    else if (is_number_expr(v, [&](const std::string& n) {
               return constants.count(n) || constants_.count(n);
             }))
      constants[a.name] = fold_constant(a.name, a.loc, v, false, c.name, &constants);
    else
      others[a.name] = describe_value(v);
  }

  // Methods: @tack.func (with self, or @staticmethod without), @tack.kernel, and host code.
  std::map<std::string, Method>& own = own_methods_[c.name];
  for (const auto& m : c.methods) {
    if (own.count(m->name))
      throw_compile_error(source(), m->name, m->loc,
                          fmt::format("'{}' is defined twice in class '{}'", m->name, c.name),
                          "rename one of the two definitions");
    bool is_static = false;
    for (const ast::Decorator& d : m->decorators)
      if (d.expr->kind == ast::Expr::Kind::Name && d.expr->name == "staticmethod" &&
          lookup("staticmethod").kind == Symbol::Kind::Unknown)
        is_static = true;
    FunctionKind kind = decorator_kind(*m);
    Method method;
    if (kind != FunctionKind::Plain) {
      if (m->unparsed) std::rethrow_exception(m->unparsed);
      check_annotations(*m);
      method.def = m.get();
      method.module = this;
      kinds_[m.get()] = kind;
      if (kind == FunctionKind::Kernel) {
        method.kind = Method::Kind::Kernel;
        if (is_static)
          throw_compile_error(source(), m->name, m->loc,
                              "a kernel method is called on an object, not as a static method",
                              "remove @staticmethod, or make it a module-level @tack.kernel");
      } else {
        method.kind = is_static ? Method::Kind::Static : Method::Kind::Func;
      }
      if (!is_static && m->params.empty())
        throw_compile_error(source(), m->name, m->loc,
                            fmt::format("method '{}' of class '{}' has no parameter for its "
                                        "object",
                                        m->name, c.name),
                            fmt::format("write def {}(self, ...), or decorate it with "
                                        "@staticmethod",
                                        m->name));
    }
    own[m->name] = method;
  }
  classes_[c.name] = std::make_unique<DeviceClass>(
      c.name, std::move(iterate),
      [&own, base](const std::string& name) -> std::optional<Method> {
        if (auto it = own.find(name); it != own.end()) return it->second;
        return base ? base->method(name) : std::nullopt;
      },
      std::move(constants), std::move(others));
}

Symbol ResolvedModule::lookup(const std::string& name) const {
  auto it = symbols_.find(name);
  if (it != symbols_.end() || !external_) return it == symbols_.end() ? Symbol{} : it->second;
  std::lock_guard lock(external_mutex_);
  if (auto e = external_symbols_.find(name); e != external_symbols_.end()) return e->second;
  ExternalSymbol x = external_(name);
  Symbol s = x.symbol;
  if (s.kind == Symbol::Kind::Constant && x.constant) {
    external_constants_.push_back(std::make_unique<Constant>(*x.constant));
    s.constant = external_constants_.back().get();
  } else if (s.kind == Symbol::Kind::Function && x.function_module &&
             !x.function_module->functions.empty()) {
    const ast::FunctionDef* f = x.function_module->functions.front().get();
    s.function = f;
    external_modules_.push_back(std::move(x.function_module));
    // Found before its decorators are resolved: a decorator that names the function itself, or a
    // function whose decorators name this one, finds it instead of parsing it again without end,
    // as the whole parse finds it in symbols_ (fuzzer: "@e\ndef e():l" overflowed the stack).
    external_symbols_[name] = s;
    try {
      external_kinds_[f] = decorator_kind(*f);
      if (external_kinds_[f] != FunctionKind::Plain) check_annotations(*f);
    } catch (...) {
      external_symbols_.erase(name);  // asked again, it fails again
      external_kinds_.erase(f);
      throw;
    }
    return s;
  } else if (s.kind == Symbol::Kind::Constant || s.kind == Symbol::Kind::Function) {
    s.kind = Symbol::Kind::HostValue;
  }
  external_symbols_[name] = s;
  return s;
}

const ast::FunctionDef* ResolvedModule::function(const std::string& name) const {
  if (size_t dot = name.find('.'); dot != std::string::npos) {
    const DeviceClass* c = device_class(name.substr(0, dot));
    std::optional<Method> m = c ? c->method(name.substr(dot + 1)) : std::nullopt;
    return m ? m->def : nullptr;
  }
  Symbol s = lookup(name);
  return s.kind == Symbol::Kind::Function ? s.function : nullptr;
}

const DeviceClass* ResolvedModule::device_class(const std::string& name) const {
  auto it = classes_.find(name);
  return it == classes_.end() ? nullptr : it->second.get();
}

std::vector<std::string> ResolvedModule::class_names() const {
  std::vector<std::string> out;
  for (const auto& c : module_.classes)
    if (classes_.count(c->name)) out.push_back(c->name);
  return out;
}

const ast::FunctionDef& ResolvedModule::kernel(const std::string& name) const {
  const ast::FunctionDef* f = function(name);
  if (f && kind_of(*f) == FunctionKind::Kernel) return *f;
  std::string known;
  for (const auto& n : kernel_names()) known += (known.empty() ? "" : ", ") + n;
  throw TypeError(fmt::format("{} has no kernel named '{}' (its kernels: {})", source().name(),
                              name, known.empty() ? "none" : known));
}

FunctionKind ResolvedModule::kind_of(const ast::FunctionDef& f) const {
  auto it = kinds_.find(&f);
  if (it != kinds_.end()) return it->second;
  std::lock_guard lock(external_mutex_);
  auto e = external_kinds_.find(&f);
  return e == external_kinds_.end() ? FunctionKind::Plain : e->second;
}

const SourceFile& ResolvedModule::source_of(const ast::FunctionDef& f) const {
  std::lock_guard lock(external_mutex_);
  for (const auto& m : external_modules_)
    for (const auto& g : m->functions)
      if (g.get() == &f) return *m->source;
  return source();
}

std::vector<std::string> ResolvedModule::names_of(FunctionKind kind) const {
  std::vector<std::string> out;
  for (const auto& f : module_.functions)
    if (kind_of(*f) == kind) out.push_back(f->name);
  for (const std::string& name : lazy_functions_)
    if (const ast::FunctionDef* f = function(name); f && kind_of(*f) == kind) out.push_back(name);
  for (const auto& c : module_.classes)
    if (classes_.count(c->name))
      for (const auto& m : c->methods)
        if (kind_of(*m) == kind) out.push_back(c->name + "." + m->name);
  return out;
}

std::vector<std::string> ResolvedModule::kernel_names() const {
  return names_of(FunctionKind::Kernel);
}

std::vector<std::string> ResolvedModule::func_names() const {
  return names_of(FunctionKind::Func);
}

}  // namespace tack::lang
