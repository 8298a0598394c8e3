// Lowering calls: casts, len, and the math builtins.
#include <fmt/format.h>
#include <cmath>
#include <set>

#include "sema/lowerer.hpp"

namespace tack::sema {

using ir::Builtin;
using ir::Op;
using ir::Type;
using Weak = Value::Weak;

namespace {

const std::map<std::string, Builtin>& float_builtins() {
  static const std::map<std::string, Builtin> m = {
      {"sqrt", Builtin::Sqrt},   {"rsqrt", Builtin::Rsqrt}, {"sin", Builtin::Sin},
      {"cos", Builtin::Cos},     {"tan", Builtin::Tan},     {"asin", Builtin::Asin},
      {"acos", Builtin::Acos},   {"atan", Builtin::Atan},   {"sinh", Builtin::Sinh},
      {"cosh", Builtin::Cosh},   {"tanh", Builtin::Tanh},   {"exp", Builtin::Exp},
      {"exp2", Builtin::Exp2},   {"log", Builtin::Log},     {"log2", Builtin::Log2},
      {"log10", Builtin::Log10}, {"floor", Builtin::Floor}, {"ceil", Builtin::Ceil},
      {"trunc", Builtin::Trunc}, {"round", Builtin::Round},
  };
  return m;
}

}  // namespace

std::optional<DType> Lowerer::dtype_named(const ast::Expr& e) const {
  std::string name = builtin_name(e);
  if (name.empty() || name == "int" || name == "float") return std::nullopt;
  return dtype_from_name(name);
}

std::string Lowerer::builtin_name(const ast::Expr& callee) const {
  using K = ast::Expr::Kind;
  if (callee.kind == K::Name) {
    if (is_local(callee.name) || is_param(callee.name)) return "";
    lang::Symbol s = module().lookup(callee.name);
    if (s.kind == lang::Symbol::Kind::TackMember) return s.member;
    if (s.kind == lang::Symbol::Kind::Unknown) return callee.name;  // Python builtins: len, min...
    return "";
  }
  if (callee.kind == K::Attribute && callee.operand->kind == K::Name &&
      !is_local(callee.operand->name) && !is_param(callee.operand->name)) {
    lang::Symbol s = module().lookup(callee.operand->name);
    if (s.kind == lang::Symbol::Kind::TackModule || s.kind == lang::Symbol::Kind::MathModule)
      return callee.name;
  }
  // tack.math.NAME, and tack.random.NAME as "random.NAME"
  if (callee.kind == K::Attribute && callee.operand->kind == K::Attribute &&
      (callee.operand->name == "math" || callee.operand->name == "random") &&
      callee.operand->operand->kind == K::Name &&
      module().lookup(callee.operand->operand->name).kind == lang::Symbol::Kind::TackModule)
    return callee.operand->name == "random" ? "random." + callee.name : callee.name;
  // `from tack import random`, then random.NAME
  if (callee.kind == K::Attribute && callee.operand->kind == K::Name &&
      !is_local(callee.operand->name) && !is_param(callee.operand->name)) {
    lang::Symbol s = module().lookup(callee.operand->name);
    if (s.kind == lang::Symbol::Kind::TackMember && s.member == "random")
      return "random." + callee.name;
  }
  return "";
}

Value Lowerer::call(const ast::Expr& e) {
  SourceLoc loc = e.loc;
  std::string name = builtin_name(*e.operand);
  if (e.operand->kind == ast::Expr::Kind::Name && name.empty()) {
    lang::Symbol s = module().lookup(e.operand->name);
    if (s.kind == lang::Symbol::Kind::Function) {
      if (module().kind_of(*s.function) == lang::FunctionKind::Kernel)
        fail(loc, fmt::format("kernel '{}' cannot be called from a kernel", e.operand->name),
             "move the shared code into a @tack.func");
      if (module().kind_of(*s.function) != lang::FunctionKind::Func)
        fail(loc,
             fmt::format("'{}' is a host function; kernels call only @tack.func functions",
                         e.operand->name),
             "decorate it with @tack.func");
    }
    if (s.kind == lang::Symbol::Kind::Class)
      fail(loc,
           fmt::format("'{}' is a device class: kernels take its objects as arguments, and do not "
                       "make them",
                       e.operand->name),
           "make the object on the host and pass it to the kernel");
  }
  if (std::optional<Callee> f = callee(e)) return call_value(*f, call_args(e, *f), loc);
  if (name.empty() && e.operand->kind == ast::Expr::Kind::Attribute &&
      e.operand->name == "sample" && is_texture(array_param(*e.operand->operand)))
    return texture_sample(array_param(*e.operand->operand), e);
  if (name.empty() && e.operand->kind == ast::Expr::Kind::Attribute)
    (void)expr(*e.operand);  // reports what is wrong with the attribute (numpy.sin, x.foo...)
  if (name.empty())
    fail(loc, "this is not a function a kernel can call",
         "call a math builtin (sqrt, sin, ...), a dtype (tack.f32(x)), len or abs/min/max");
  if (!e.keywords.empty())
    fail(e.keywords[0].loc, fmt::format("{}() takes no keyword arguments", name),
         "pass the arguments by position");
  if (name == "len") {
    if (e.args.size() != 1) fail(loc, "len() takes one argument", "write len(x) for an array x");
    if (int object = object_of(*e.args[0]); object >= 0) return object_len(object, loc);
    if (int first; const ObjectType::Attribute* t = object_tuple(*e.args[0], &first))
      return weak_int(static_cast<int64_t>(t->elements.size()), loc);
    int a = array_param(*e.args[0]);
    const ast::Expr& of = *e.args[0];
    if (a < 0 && of.kind == ast::Expr::Kind::Name && is_param(of.name) && !is_local(of.name))
      fail_arg(of.loc, fmt::format("argument '{}' is a scalar but len() of it is taken; len() "
                                   "takes an array: pass an array",
                                   of.name));
    if (a < 0) fail(e.args[0]->loc, "len() takes an array argument", "write len(x) for an array x");
    reject_texture(a, e.args[0]->loc);
    return {array_extent(a, 0, loc)};
  }
  if (is_value_builtin(name)) {
    std::vector<Value> args;
    for (const auto& a : e.args) args.push_back(expr(*a));
    return apply_builtin(name, std::move(args), loc);
  }
  if (name.rfind("atomic_", 0) == 0) return atomic(name.substr(7), e);
  if (auto v = workgroup_call(name, e)) return std::move(*v);
  if (name.rfind("random.", 0) == 0) {
    std::vector<Value> values = random(name.substr(7), e);
    if (values.size() != 1)
      fail(loc, fmt::format("tack.{}() returns a value and the next state", name),
           fmt::format("unpack both: u, s = tack.{}(s)", name));
    return std::move(values[0]);
  }
  if (name == "range" || name == "ndrange")
    fail(loc, fmt::format("{}() is only allowed as the iterable of a for loop", name),
         "write for i in range(n):");
  if (name == "constant")
    fail(loc, "tack.constant is declared at module level, not inside a kernel",
         "write NAME = tack.constant(value) at the top of the file");
  if (name == "texture2d" || name == "texture3d")
    fail(loc, fmt::format("tack.{}() makes a texture on the host, not in a kernel", name),
         "make it before the call and pass it as an argument: tex = tack.texture3d(a, shape=(w, "
         "h, d)), then tex.sample(u, v, w) in the kernel");
  fail(loc, fmt::format("'{}' is not a function a kernel can call", name),
       "kernels call math builtins (sqrt, sin, exp, ...), dtypes as casts (tack.f32(x)), len, "
       "abs, min, max, pow");
}

bool Lowerer::is_value_builtin(const std::string& name) const {
  static const std::set<std::string> names = {
      "int",     "float",    "bool",  "abs",       "min",         "max",
      "pow",     "atan2",    "fma",   "isnan",     "isinf",       "select",
      "clamp",   "saturate", "mix",   "step",      "smoothstep",  "fract",
      "sign",    "dot",      "cross", "length",    "distance",    "normalize",
      "reflect", "any",      "all",   "transpose", "determinant", "inverse"};
  if (names.count(name) || float_builtins().count(name) || dtype_from_name(name)) return true;
  for (const char* family : {"vec", "dvec", "ivec", "uvec", "mat", "dmat"})
    for (char n : {'2', '3', '4'})
      if (name == std::string(family) + n) return true;
  return false;
}

Value Lowerer::apply_builtin(const std::string& name, std::vector<Value> args, SourceLoc loc) {
  if (auto v = vector_helper(name, args, loc)) return std::move(*v);
  // Arity: exact for most, two or more for min and max.
  static const std::map<std::string, size_t> arity = {{"atan2", 2},  {"fma", 3},       {"pow", 2},
                                                      {"select", 3}, {"clamp", 3},     {"mix", 3},
                                                      {"step", 2},   {"smoothstep", 3}};
  size_t want = 1;
  if (auto it = arity.find(name); it != arity.end()) want = it->second;
  if (name == "min" || name == "max") {
    if (args.size() < 2)
      fail(loc, fmt::format("{}() takes two or more arguments", name),
           "reductions over arrays are written as loops in kernels");
  } else if (args.size() != want) {
    fail(loc,
         fmt::format("{}() takes {} argument{}, not {}", name, want, want == 1 ? "" : "s",
                     args.size()),
         "pass the arguments by position");
  }
  bool composite = false;
  for (const Value& a : args) composite |= a.is_composite();
  if (!composite) return scalar_builtin(name, std::move(args), loc);
  return componentwise(std::move(args), loc, fmt::format("{}()", name), [&](std::vector<Value> x) {
    return scalar_builtin(name, std::move(x), loc);
  });
}

Value Lowerer::scalar_builtin(const std::string& name, std::vector<Value> args, SourceLoc loc) {
  auto float_arg = [&](Value v) -> ir::ExprPtr {
    if (v.weak != Weak::No) return ir::make_cast(std::move(v.e), Type::scalar(float_type_));
    if (!v.e->type.is_float()) return ir::make_cast(std::move(v.e), Type::scalar(float_type_));
    return std::move(v.e);
  };

  // Conversions.
  if (name == "int" || name == "float" || name == "bool" || dtype_from_name(name)) {
    Value v = std::move(args[0]);
    if (name == "bool") return {truth(std::move(v), loc)};
    DType to = name == "int" ? DType::I32 : name == "float" ? DType::F32 : *dtype_from_name(name);
    if (to == DType::Bool) return {truth(std::move(v), loc)};
    if (v.is_weak()) {
      if (v.weak == Weak::Float && is_integer(to) && !std::isfinite(v.e->float_value))
        fail(loc, "cannot convert an infinite or NaN literal to an integer");
      // A literal converts from its exact value: tack.f64(0.1) is the double nearest 0.1, not
      // an f32 widened, and tack.u8(300) wraps as any integer cast does.
      return {ir::make_cast(std::move(v.e), Type::scalar(to))};
    }
    return {ir::make_cast(materialize(std::move(v)), Type::scalar(to))};
  }
  if (auto it = float_builtins().find(name); it != float_builtins().end()) {
    ir::ExprPtr x = float_arg(std::move(args[0]));
    Type t = x->type;
    std::vector<ir::ExprPtr> operands;
    operands.push_back(std::move(x));
    return {ir::make_call(it->second, t, std::move(operands), loc)};
  }
  if (name == "atan2" || name == "fma") {
    std::vector<ir::ExprPtr> operands;
    for (Value& a : args) operands.push_back(float_arg(std::move(a)));
    // The widest float among the arguments; literals arrive as the kernel's float type.
    DType t = operands[0]->type.dtype;
    for (auto& a : operands)
      if (dtype_bits(a->type.dtype) > dtype_bits(t)) t = a->type.dtype;
    for (auto& a : operands) a = ir::make_cast(std::move(a), Type::scalar(t));
    return {ir::make_call(name == "fma" ? Builtin::Fma : Builtin::Atan2, Type::scalar(t),
                          std::move(operands), loc)};
  }
  if (name == "isnan" || name == "isinf") {
    ir::ExprPtr x = float_arg(std::move(args[0]));
    std::vector<ir::ExprPtr> operands;
    operands.push_back(std::move(x));
    return {ir::make_call(name == "isnan" ? Builtin::IsNan : Builtin::IsInf, Type::bool_(),
                          std::move(operands), loc)};
  }
  if (name == "abs") {
    Value v = std::move(args[0]);
    if (v.weak == Weak::Float) return weak_float(std::fabs(v.e->float_value), loc);
    if (v.weak == Weak::Int && v.dtype() == DType::I64) {
      int64_t x = static_cast<int64_t>(v.e->int_bits);
      if (x == INT64_MIN) fail(loc, "abs of this literal overflows 64 bits");
      return weak_int(x < 0 ? -x : x, loc);
    }
    ir::ExprPtr x = materialize(std::move(v));
    if (x->type.is_bool()) x = ir::make_cast(std::move(x), Type::scalar(DType::I32));
    if (is_unsigned(x->type.dtype)) return {std::move(x)};
    Type t = x->type;
    std::vector<ir::ExprPtr> operands;
    operands.push_back(std::move(x));
    return {ir::make_call(Builtin::Abs, t, std::move(operands), loc)};
  }
  if (name == "min" || name == "max") {
    Value acc = std::move(args[0]);
    for (size_t i = 1; i < args.size(); ++i) {
      auto [l, r] = unify(std::move(acc), std::move(args[i]), loc, name == "min" ? "min" : "max");
      if (l->type.is_bool()) {
        l = ir::make_cast(std::move(l), Type::scalar(DType::I32));
        r = ir::make_cast(std::move(r), Type::scalar(DType::I32));
      }
      acc = {ir::make_binary(name == "min" ? Op::Min : Op::Max, std::move(l), std::move(r), loc)};
    }
    return acc;
  }
  if (name == "pow") return binary(ast::BinOp::Pow, std::move(args[0]), std::move(args[1]), loc);
  if (auto v = glsl_helper(name, args, loc)) return std::move(*v);
  fail(loc, fmt::format("'{}' is not a function a kernel can call", name));
}

// The scalar GLSL helpers, written with the operators so that every backend computes them the same
// way (GLSL's own formulas: mix is x*(1-a)+y*a, smoothstep is t*t*(3-2t)).
std::optional<Value> Lowerer::glsl_helper(const std::string& name, std::vector<Value>& args,
                                          SourceLoc loc) {
  static const std::set<std::string> helpers = {"select", "clamp",      "saturate", "mix",
                                                "step",   "smoothstep", "fract",    "sign"};
  if (!helpers.count(name)) return std::nullopt;
  // An operand used more than once is computed once, into a temporary when statements can be
  // emitted here, else (loop bounds, results) duplicated: expressions have no effects there.
  auto keep = [&](Value v) { return reusable(std::move(v), loc); };
  auto copy = [](const Value& v) { return v.copy(); };
  auto lit = [&](double x) { return weak_float(x, loc); };
  auto as_float = [&](Value v) -> Value {
    if (v.weak == Weak::Int || (!v.is_weak() && !v.e->type.is_float()))
      return {ir::make_cast(materialize(std::move(v)), Type::scalar(float_type_))};
    return v;
  };
  auto minmax = [&](Op op, Value a, Value b) -> Value {
    auto [l, r] = unify(std::move(a), std::move(b), loc, name.c_str());
    return {ir::make_binary(op, std::move(l), std::move(r), loc)};
  };
  auto cmp = [&](Op op, Value a, Value b) {
    auto [l, r] = unify(std::move(a), std::move(b), loc, name.c_str());
    return ir::make_binary(op, std::move(l), std::move(r), loc);
  };
  auto choose = [&](ir::ExprPtr c, Value a, Value b) -> Value {
    auto [l, r] = unify(std::move(a), std::move(b), loc, name.c_str());
    return {ir::make_select(std::move(c), std::move(l), std::move(r), loc)};
  };
  auto arg = [&](size_t i) { return std::move(args[i]); };
  auto clamp01 = [&](Value x) {
    return minmax(Op::Min, minmax(Op::Max, std::move(x), lit(0.0)), lit(1.0));
  };

  if (name == "select") {  // tack.select(mask, a, b): a where mask is true
    ir::ExprPtr c = truth(arg(0), loc);
    return choose(std::move(c), arg(1), arg(2));
  }
  if (name == "clamp") {
    Value x = arg(0), lo = arg(1), hi = arg(2);
    return minmax(Op::Min, minmax(Op::Max, std::move(x), std::move(lo)), std::move(hi));
  }
  if (name == "saturate") return clamp01(as_float(arg(0)));
  if (name == "mix") {
    Value x = as_float(arg(0)), y = as_float(arg(1)), a = keep(as_float(arg(2)));
    Value one_minus = binary(ast::BinOp::Sub, lit(1.0), copy(a), loc);
    return binary(ast::BinOp::Add, binary(ast::BinOp::Mul, std::move(x), std::move(one_minus), loc),
                  binary(ast::BinOp::Mul, std::move(y), std::move(a), loc), loc);
  }
  if (name == "step") {  // 0.0 where x < edge, else 1.0
    Value edge = as_float(arg(0)), x = as_float(arg(1));
    ir::ExprPtr below = cmp(Op::Lt, std::move(x), std::move(edge));
    return choose(std::move(below), lit(0.0), lit(1.0));
  }
  if (name == "smoothstep") {
    Value e0 = keep(as_float(arg(0))), e1 = as_float(arg(1)), x = keep(as_float(arg(2)));
    Value t =
        keep(clamp01(binary(ast::BinOp::Div, binary(ast::BinOp::Sub, std::move(x), copy(e0), loc),
                            binary(ast::BinOp::Sub, std::move(e1), copy(e0), loc), loc)));
    Value three_minus =
        binary(ast::BinOp::Sub, lit(3.0), binary(ast::BinOp::Mul, lit(2.0), copy(t), loc), loc);
    return binary(ast::BinOp::Mul, binary(ast::BinOp::Mul, copy(t), copy(t), loc),
                  std::move(three_minus), loc);
  }
  if (name == "fract") {  // x - floor(x)
    Value x = keep(as_float(arg(0)));
    ir::ExprPtr fx = materialize(copy(x));
    Type t = fx->type;
    std::vector<ir::ExprPtr> args;
    args.push_back(std::move(fx));
    Value fl{ir::make_call(ir::Builtin::Floor, t, std::move(args), loc)};
    return binary(ast::BinOp::Sub, std::move(x), std::move(fl), loc);
  }
  // sign: 1 above zero, -1 below, else x itself (0, -0.0 and NaN stay as they are).
  Value x = keep(arg(0));
  if (!x.is_weak() && is_unsigned(x.dtype())) {
    Type t = x.e->type;
    ir::ExprPtr pos = cmp(Op::Gt, copy(x), weak_int(0, loc));
    return Value{
        ir::make_select(std::move(pos), ir::make_int(t, 1, loc), ir::make_int(t, 0, loc), loc)};
  }
  bool fl = x.weak == Weak::Float || (!x.is_weak() && x.e->type.is_float());
  Value one = fl ? lit(1.0) : weak_int(1, loc), minus_one = fl ? lit(-1.0) : weak_int(-1, loc);
  ir::ExprPtr pos = cmp(Op::Gt, copy(x), weak_int(0, loc));
  ir::ExprPtr neg = cmp(Op::Lt, copy(x), weak_int(0, loc));
  Value inner = choose(std::move(neg), std::move(minus_one), copy(x));
  return choose(std::move(pos), std::move(one), std::move(inner));
}

Value Lowerer::atomic(const std::string& op_name, const ast::Expr& e) {
  atomics_seen_ = true;
  static const std::map<std::string, ir::AtomicOp> ops = {
      {"add", ir::AtomicOp::Add}, {"sub", ir::AtomicOp::Sub},           {"min", ir::AtomicOp::Min},
      {"max", ir::AtomicOp::Max}, {"and", ir::AtomicOp::And},           {"or", ir::AtomicOp::Or},
      {"xor", ir::AtomicOp::Xor}, {"exchange", ir::AtomicOp::Exchange}, {"cas", ir::AtomicOp::Cas}};
  std::string name = "tack.atomic_" + op_name;
  auto it = ops.find(op_name);
  if (it == ops.end())
    fail(e.loc, fmt::format("'{}' is not an atomic operation", name),
         "use atomic_add, _sub, _min, _max, _and, _or, _xor, _exchange or _cas");
  ir::AtomicOp op = it->second;
  size_t want = op == ir::AtomicOp::Cas ? 4 : 3;
  if (e.args.size() != want || !e.keywords.empty())
    fail(e.loc, fmt::format("{}() takes {} arguments", name, want),
         op == ir::AtomicOp::Cas ? "write tack.atomic_cas(array, index, expected, desired)"
                                 : fmt::format("write {}(array, index, value)", name));
  int a = array_param(*e.args[0]);
  if (a < 0)
    fail(e.args[0]->loc, fmt::format("the first argument of {}() must be an array argument", name),
         "pass the array the kernel was given");
  reject_texture(a, e.args[0]->loc);
  if (phase_ != Phase::Loop)
    fail(e.loc, "atomics are only allowed inside the parallel loop",
         "move the atomic into the loop body");
  ir::Param& p = k_.params[a];
  DType dt = p.type.dtype;
  if (dt == DType::Bool || !target_.atomic_dtypes.count(dt))
    fail(e.loc,
         fmt::format("{} has no atomics on {} arrays", target_.backend_label, dtype_name(dt)),
         "use an array of a dtype with atomics (i32, u32, f32 on every backend)");
  bool bitwise = op == ir::AtomicOp::And || op == ir::AtomicOp::Or || op == ir::AtomicOp::Xor;
  if (bitwise && is_float(dt))
    fail(e.loc, fmt::format("{}() needs an integer array, not {}", name, dtype_name(dt)),
         "use atomic_add/_sub/_min/_max/_exchange/_cas on floats");
  // One index per dimension: a[i] takes i, a 2-D array takes (i, j).
  std::vector<ir::ExprPtr> idx;
  {
    const ast::Expr& index = *e.args[1];
    std::vector<const ast::Expr*> parts;
    if (index.kind == ast::Expr::Kind::Tuple)
      for (const auto& t : index.args) parts.push_back(t.get());
    else
      parts.push_back(&index);
    if (parts.size() != p.type.rank)
      fail_arg(index.loc,
               fmt::format("array argument '{}' has {} dimension{} but {}() gives {} index{}",
                           p.name, p.type.rank, p.type.rank == 1 ? "" : "s", name, parts.size(),
                           parts.size() == 1 ? "" : "es"));
    for (const ast::Expr* x : parts) idx.push_back(index_value(expr(*x), x->loc));
  }
  auto node = std::make_unique<ir::Expr>(ir::Op::Atomic, ir::Type::scalar(dt), e.loc);
  node->index = a;
  node->atomic = op;
  node->operands = std::move(idx);
  for (size_t i = 2; i < e.args.size(); ++i)
    node->operands.push_back(convert_for_store(expr(*e.args[i]), dt, p.name, e.args[i]->loc));
  p.written = true;
  return {std::move(node)};
}

}  // namespace tack::sema
