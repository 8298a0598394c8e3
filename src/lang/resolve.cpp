#include "lang/resolve.hpp"

#include <fmt/format.h>
#include <cmath>
#include <functional>
#include <numbers>

#include "lang/diagnostics.hpp"

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

Constant ResolvedModule::fold_constant(const ast::GlobalAssign& g) const {
  const SourceFile& src = *module_.source;
  const ast::Expr& call = *g.value;
  auto fail = [&](SourceLoc loc, const std::string& msg, const std::string& hint) {
    throw_compile_error(src, kModule, loc, msg, hint);
  };
  const std::string hint = "write NAME = tack.constant(3.5) or tack.constant(7, dtype=tack.i64)";
  if (call.args.size() != 1 || call.keywords.size() > 1)
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
        auto it = constants_.find(e.name);
        if (it == constants_.end())
          fail(e.loc, fmt::format("'{}' is not a constant declared above", e.name), hint);
        const Constant& c = *it->second;
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
    c.name = g.name;
    c.loc = g.loc;
    c.is_float = v.is_float;
    c.is_bool = v.is_bool;
    c.int_value = v.i;
    c.uint_value = v.big ? v.u : static_cast<uint64_t>(v.i);
    c.float_value = v.is_float ? v.f : v.as_double();
    return c;
  };
  const ast::Expr& value = *call.args[0];
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
  if (!call.keywords.empty()) {
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
           fmt::format("constant '{}' is a float but its dtype is {}", g.name, dtype_name(*dt)),
           "write an integer value or a float dtype");
  }
  return c;
}

void ResolvedModule::resolve_globals() {
  for (const ast::GlobalAssign& g : module_.globals) {
    const ast::Expr& v = *g.value;
    bool is_constant =
        v.kind == ast::Expr::Kind::Call && v.operand->kind == ast::Expr::Kind::Attribute &&
        v.operand->name == "constant" && v.operand->operand->kind == ast::Expr::Kind::Name &&
        lookup(v.operand->operand->name).kind == Symbol::Kind::TackModule;
    bool is_bare_constant = v.kind == ast::Expr::Kind::Call &&
                            v.operand->kind == ast::Expr::Kind::Name &&
                            lookup(v.operand->name).kind == Symbol::Kind::TackMember &&
                            lookup(v.operand->name).member == "constant";
    Symbol s;
    s.loc = g.loc;
    if (is_constant || is_bare_constant) {
      auto c = std::make_unique<Constant>(fold_constant(g));
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
      if (!e->args.empty() || !e->keywords.empty())
        throw_compile_error(source(), f.name, d.loc, "decorator arguments are not supported",
                            "write @tack.kernel or @tack.func");
      e = e->operand.get();
    }
    std::string member;
    if (e->kind == ast::Expr::Kind::Attribute && e->operand->kind == ast::Expr::Kind::Name &&
        lookup(e->operand->name).kind == Symbol::Kind::TackModule)
      member = e->name;
    else if (e->kind == ast::Expr::Kind::Name && lookup(e->name).kind == Symbol::Kind::TackMember)
      member = lookup(e->name).member;
    else
      continue;  // a decorator of another library: the function is not Tack's
    if (member == "kernel")
      kind = FunctionKind::Kernel;
    else if (member == "func")
      kind = FunctionKind::Func;
    else
      throw_compile_error(source(), f.name, d.loc,
                          fmt::format("tack.{} is not a decorator", member),
                          "write @tack.kernel for a kernel or @tack.func for a device function");
  }
  return kind;
}

void ResolvedModule::resolve_functions() {
  for (const auto& f : module_.functions) {
    FunctionKind kind = decorator_kind(*f);
    if (symbols_.count(f->name) && symbols_[f->name].kind == Symbol::Kind::Function)
      throw_compile_error(source(), f->name, f->loc,
                          fmt::format("'{}' is defined twice in this module", f->name),
                          "rename one of the two definitions");
    Symbol s;
    s.kind = Symbol::Kind::Function;
    s.function = f.get();
    s.loc = f->loc;
    symbols_[f->name] = s;
    kinds_[f.get()] = kind;
  }
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
    external_kinds_[f] = decorator_kind(*f);
  } else if (s.kind == Symbol::Kind::Constant || s.kind == Symbol::Kind::Function) {
    s.kind = Symbol::Kind::HostValue;
  }
  external_symbols_[name] = s;
  return s;
}

const ast::FunctionDef* ResolvedModule::function(const std::string& name) const {
  Symbol s = lookup(name);
  return s.kind == Symbol::Kind::Function ? s.function : nullptr;
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
  return out;
}

std::vector<std::string> ResolvedModule::kernel_names() const {
  return names_of(FunctionKind::Kernel);
}

std::vector<std::string> ResolvedModule::func_names() const {
  return names_of(FunctionKind::Func);
}

}  // namespace tack::lang
