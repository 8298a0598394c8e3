// Lowering expressions: names, literals, operators, subscripts, with the promotion rules.
#include <fmt/format.h>
#include <cmath>
#include <numbers>

#include "ir/verifier.hpp"
#include "lang/diagnostics.hpp"
#include "sema/lowerer.hpp"
#include "sema/type_rules.hpp"

namespace tack::sema {

using ir::Op;
using ir::Type;
using Weak = Value::Weak;

namespace {

std::string dt(DType t) {
  return std::string(dtype_name(t));
}

bool weak_negative(const Value& v) {
  return v.weak == Weak::Int && v.e->type.dtype == DType::I64 &&
         static_cast<int64_t>(v.e->int_bits) < 0;
}

// Python's floor division and modulo on doubles (CPython's float_divmod), used to fold literals
// exactly as the generated code computes them.
double py_floordiv(double a, double b) {
  if (b == 0) return a / b;
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1.0;
  if (div == 0) return std::copysign(0.0, a / b);
  double fl = std::floor(div);
  return div - fl > 0.5 ? fl + 1.0 : fl;
}

double py_mod(double a, double b) {
  double mod = std::fmod(a, b);
  if (mod != 0) {
    if ((b < 0) != (mod < 0)) mod += b;
  } else {
    mod = std::copysign(0.0, b);
  }
  return mod;
}

Op arith_op(ast::BinOp op) {
  switch (op) {
    case ast::BinOp::Add:
      return Op::Add;
    case ast::BinOp::Sub:
      return Op::Sub;
    case ast::BinOp::Mul:
      return Op::Mul;
    case ast::BinOp::Div:
      return Op::Div;
    case ast::BinOp::FloorDiv:
      return Op::FloorDiv;
    case ast::BinOp::Mod:
      return Op::Mod;
    case ast::BinOp::Pow:
      return Op::Pow;
    case ast::BinOp::Shl:
      return Op::Shl;
    case ast::BinOp::Shr:
      return Op::Shr;
    case ast::BinOp::BitAnd:
      return Op::BitAnd;
    case ast::BinOp::BitOr:
      return Op::BitOr;
    case ast::BinOp::BitXor:
      return Op::BitXor;
    case ast::BinOp::MatMul:
      break;
  }
  return Op::Add;
}

Op compare_op(ast::CmpOp op) {
  switch (op) {
    case ast::CmpOp::Lt:
      return Op::Lt;
    case ast::CmpOp::Le:
      return Op::Le;
    case ast::CmpOp::Gt:
      return Op::Gt;
    case ast::CmpOp::Ge:
      return Op::Ge;
    case ast::CmpOp::Eq:
      return Op::Eq;
    case ast::CmpOp::Ne:
      return Op::Ne;
  }
  return Op::Eq;
}

}  // namespace

const SourceFile& Lowerer::current_file() const {
  return inline_stack_.empty() ? module_.source() : *inline_stack_.back().file;
}

const std::string& Lowerer::current_name() const {
  return inline_stack_.empty() ? def_.name : inline_stack_.back().name;
}

void Lowerer::fail(SourceLoc loc, const std::string& message, const std::string& hint) const {
  throw_compile_error(current_file(), current_name(), loc, message, hint,
                      inline_stack_.empty() ? "kernel" : "function");
}

void Lowerer::fail_arg(SourceLoc loc, const std::string& message) const {
  throw TypeError(fmt::format("{}:{}:{}: in {} '{}': {}", current_file().name(), loc.line,
                              loc.col + current_file().column_offset(),
                              inline_stack_.empty() ? "kernel" : "function", current_name(),
                              message));
}

Value Lowerer::weak_int(int64_t v, SourceLoc loc) {
  return {ir::make_int(Type::i64(), static_cast<uint64_t>(v), loc), Weak::Int};
}

Value Lowerer::weak_uint(uint64_t v, SourceLoc loc) {
  if (v <= static_cast<uint64_t>(INT64_MAX)) return weak_int(static_cast<int64_t>(v), loc);
  return {ir::make_int(Type::scalar(DType::U64), v, loc), Weak::Int};
}

Value Lowerer::weak_float(double v, SourceLoc loc) {
  return {ir::make_float(Type::scalar(DType::F64), v, loc), Weak::Float};
}

Value Lowerer::constant(const lang::Constant& c, SourceLoc loc) {
  if (!c.components.empty()) {
    // A vector constant: its components share one type, the dtype given, else the kernel's
    // float type when any is a float, else the promoted integer type.
    std::vector<Value> parts;
    bool any_float = false;
    for (const lang::Constant& part : c.components) {
      parts.push_back(constant(part, loc));
      any_float |= parts.back().weak == Weak::Float || is_float(parts.back().dtype());
    }
    std::optional<DType> t = c.dtype;
    if (!t && any_float) t = float_type_;
    std::vector<ir::ExprPtr> comps;
    for (Value& p : parts) {
      comps.push_back(t ? ir::make_cast(std::move(p.e), Type::scalar(*t))
                        : materialize(std::move(p)));
      if (!t) t = comps.back()->type.dtype;
    }
    for (auto& e : comps) e = ir::make_cast(std::move(e), Type::scalar(*t));
    // The size is read before the vector is moved: argument evaluation order is unspecified,
    // and clang moves first (the fuzzer found a vector constant of 0 rows).
    int rows = static_cast<int>(comps.size());
    return Value::composite(std::move(comps), rows, 1);
  }
  if (c.is_bool) return {ir::make_bool(c.int_value != 0, loc), Weak::No};
  Value v = c.is_float ? weak_float(c.float_value, loc) : weak_uint(c.uint_value, loc);
  if (!c.is_float && c.int_value < 0) v = weak_int(c.int_value, loc);
  if (c.dtype) {
    if (v.weak == Weak::Int && is_integer(*c.dtype) &&
        !int_fits(*c.dtype, weak_negative(v), v.e->int_bits))
      fail(loc, fmt::format("constant '{}' does not fit its dtype {}", c.name, dt(*c.dtype)),
           "choose a wider dtype= in its tack.constant");
    return {ir::make_cast(materialize(std::move(v)), Type::scalar(*c.dtype)), Weak::No};
  }
  return v;
}

ir::ExprPtr Lowerer::materialize(Value v) {
  if (v.is_composite()) require_scalar(v, v.comps[0]->loc, "this place");
  if (v.weak == Weak::Float) return ir::make_cast(std::move(v.e), Type::scalar(float_type_));
  if (v.weak == Weak::Int) {
    DType t = literal_int_type(weak_negative(v), v.e->int_bits);
    return ir::make_cast(std::move(v.e), Type::scalar(t));
  }
  return std::move(v.e);
}

std::pair<ir::ExprPtr, ir::ExprPtr> Lowerer::unify(Value a, Value b, SourceLoc loc,
                                                   const char* what) {
  // A weak operand adopts the other's type when its value fits it; a weak float meeting an
  // integer gives the kernel's float type; otherwise both are concrete and promote.
  auto adopt = [&](Value& weak, const Value& strong) {
    DType s = strong.dtype();
    if (weak.weak == Weak::Int) {
      if (is_float(s))
        weak.e = ir::make_cast(std::move(weak.e), Type::scalar(s));
      else if (is_integer(s) && int_fits(s, weak_negative(weak), weak.e->int_bits))
        weak.e = ir::make_cast(std::move(weak.e), Type::scalar(s));
      else
        weak.e = materialize(std::move(weak));
    } else {
      weak.e = ir::make_cast(std::move(weak.e), Type::scalar(is_float(s) ? s : float_type_));
    }
    weak.weak = Weak::No;
  };
  if (a.is_weak() && b.is_weak()) {
    if (a.weak == Weak::Float || b.weak == Weak::Float) {
      a.e = ir::make_cast(std::move(a.e), Type::scalar(float_type_));
      b.e = ir::make_cast(std::move(b.e), Type::scalar(float_type_));
    } else {
      a.e = materialize(std::move(a));
      b.e = materialize(std::move(b));
    }
  } else if (a.is_weak()) {
    adopt(a, b);
  } else if (b.is_weak()) {
    adopt(b, a);
  }
  DType ta = a.e->type.dtype, tb = b.e->type.dtype;
  // Two bools stay bools (comparisons, conditionals); arithmetic widens them itself.
  if (ta == DType::Bool && tb == DType::Bool) return {std::move(a.e), std::move(b.e)};
  std::optional<DType> t = promote(ta, tb);
  if (!t)
    fail(loc,
         fmt::format("{} of {} and {} has no common type: no type holds both ranges", what, dt(ta),
                     dt(tb)),
         fmt::format("cast one operand explicitly, e.g. tack.i64(x) or tack.u64(x)"));
  return {ir::make_cast(std::move(a.e), Type::scalar(*t)),
          ir::make_cast(std::move(b.e), Type::scalar(*t))};
}

ir::ExprPtr Lowerer::truth(Value v, SourceLoc loc) {
  if (v.is_composite())
    fail(loc, fmt::format("{} has no single truth value", v.type_name()),
         "reduce the mask with any(mask) or all(mask)");
  ir::ExprPtr e = materialize(std::move(v));
  if (e->type.is_bool()) return e;
  if (!e->type.is_scalar()) fail(loc, "this value has no truth value", "compare it explicitly");
  ir::ExprPtr zero =
      e->type.is_float() ? ir::make_float(e->type, 0.0, loc) : ir::make_int(e->type, 0, loc);
  return ir::make_binary(Op::Ne, std::move(e), std::move(zero), loc);
}

ir::ExprPtr Lowerer::index_value(Value v, SourceLoc loc) {
  require_scalar(v, loc, "an array index");
  if (v.weak == Weak::Float || (!v.is_weak() && !v.e->type.is_int()))
    fail(loc,
         fmt::format("an array index must be an integer, not {}",
                     v.weak == Weak::Float ? "a float" : dt(v.dtype())),
         "convert it with int(...)");
  return ir::make_cast(v.is_weak() ? std::move(v.e) : std::move(v.e), Type::i64());
}

ir::ExprPtr Lowerer::array_extent(int array, int dim, SourceLoc loc) {
  const ir::Param& p = k_.params[array];
  // A local array's size is known at compilation (and is not a launch argument).
  if (p.is_local_array())
    return ir::make_int(Type::i64(), static_cast<uint64_t>(p.local_size), loc);
  return ir::make_array_dim(array, dim, loc);
}

int Lowerer::array_param(const ast::Expr& e) const {
  if (int slot; const ObjectType::Attribute* a = member(e, &slot))  // an object's: self.values
    return a->kind == ObjectType::Attribute::Kind::Value && a->type.kind == ArgType::Kind::Array
               ? slot
               : -1;
  if (e.kind != ast::Expr::Kind::Name || is_local(e.name)) return -1;
  auto it = params_.find(e.name);
  if (it == params_.end() || !k_.params[it->second].type.is_array()) return -1;
  return it->second;
}

std::vector<ir::ExprPtr> Lowerer::array_indices(int array, const ast::Expr& subscript) {
  std::vector<const ast::Expr*> idx = subscript_indices(subscript);
  const ir::Param& p = k_.params[array];
  if (idx.size() == 1 && p.type.rank > 1) {
    // A vector of integer indices, one per dimension: a[c] with c = ivec2(i, j).
    Value v = expr(*idx[0]);
    if (v.is_composite() && v.cols == 1 && v.rows == static_cast<int>(p.type.rank) &&
        is_integer(v.dtype())) {
      std::vector<ir::ExprPtr> out;
      for (auto& c : v.comps) out.push_back(ir::make_cast(std::move(c), Type::i64()));
      return out;
    }
  }
  if (idx.size() != p.type.rank) {
    std::string message = fmt::format(
        "array argument '{}' has {} dimension{} but is indexed with {} index{}", p.name,
        p.type.rank, p.type.rank == 1 ? "" : "s", idx.size(), idx.size() == 1 ? "" : "es");
    if (idx.size() + 1 == p.type.rank && array < static_cast<int>(leaf_types_.size()))
      message += leaf_types_[array]->lanes
                     ? "; read its vectors with one index fewer only where a vector is expected"
                     : "; one index fewer reads a vector only when the last dimension is 2, 3 "
                       "or 4";
    fail_arg(subscript.loc, message);
  }
  std::vector<ir::ExprPtr> out;
  for (const ast::Expr* i : idx) out.push_back(index_value(expr(*i), i->loc));
  return out;
}

Value Lowerer::binary(ast::BinOp op, Value a, Value b, SourceLoc loc) {
  if (a.is_composite() || b.is_composite())
    return composite_binary(op, std::move(a), std::move(b), loc);
  if (op == ast::BinOp::MatMul)
    fail(loc, "the @ operator multiplies matrices and vectors, not scalars",
         "write * for a product of scalars");
  const char* sp = ast::spelling(op);
  // Two literals fold now, at Python's precision, and stay weak.
  if (a.is_weak() && b.is_weak() && op != ast::BinOp::Div) {
    if (a.weak == Weak::Int && b.weak == Weak::Int && a.dtype() == DType::I64 &&
        b.dtype() == DType::I64) {
      int64_t x = static_cast<int64_t>(a.e->int_bits), y = static_cast<int64_t>(b.e->int_bits);
      int64_t r = 0;
      bool overflow = false;
      switch (op) {
        case ast::BinOp::Add:
          overflow = __builtin_add_overflow(x, y, &r);
          break;
        case ast::BinOp::Sub:
          overflow = __builtin_sub_overflow(x, y, &r);
          break;
        case ast::BinOp::Mul:
          overflow = __builtin_mul_overflow(x, y, &r);
          break;
        case ast::BinOp::FloorDiv:
        case ast::BinOp::Mod:
          if (y == 0) fail(loc, fmt::format("integer {} by zero in a constant expression", sp));
          r = op == ast::BinOp::FloorDiv ? x / y - ((x % y != 0) && ((x < 0) != (y < 0)))
                                         : x - y * (x / y - ((x % y != 0) && ((x < 0) != (y < 0))));
          break;
        case ast::BinOp::Pow:
          if (y < 0)
            fail(loc, "a negative integer exponent is an error", "write a float base: 2.0 ** -1");
          // 0, 1 and -1 never overflow, whatever the exponent; any other base does within 64
          // steps.
          if (x == 0 || x == 1) {
            r = y == 0 ? 1 : x;
          } else if (x == -1) {
            r = y % 2 ? -1 : 1;
          } else {
            r = 1;
            for (int64_t k = 0; k < y && !overflow; ++k)
              overflow = __builtin_mul_overflow(r, x, &r);
          }
          break;
        case ast::BinOp::Shl:
        case ast::BinOp::Shr:
          // Exact, as in Python: a left shift that leaves 64 bits is an error, like 2 ** 70.
          if (y < 0)
            fail(loc, fmt::format("a negative shift count ({}) is an error", y),
                 "shift by a count from 0 to 63");
          if (op == ast::BinOp::Shr)
            r = y >= 63 ? (x < 0 ? -1 : 0) : x >> y;
          else if (x == 0)
            r = 0;
          else if (y >= 63)
            overflow = !(y == 63 && x == -1), r = INT64_MIN;
          else
            overflow = __builtin_mul_overflow(x, int64_t{1} << y, &r);
          break;
        case ast::BinOp::BitAnd:
          r = x & y;
          break;
        case ast::BinOp::BitOr:
          r = x | y;
          break;
        case ast::BinOp::BitXor:
          r = x ^ y;
          break;
        default:
          break;
      }
      if (overflow)
        fail(loc, "this constant expression overflows 64 bits",
             "compute it with a typed value, e.g. tack.i64(x)");
      return weak_int(r, loc);
    }
    bool bitwise = op == ast::BinOp::BitAnd || op == ast::BinOp::BitOr || op == ast::BinOp::BitXor;
    if (!bitwise && a.weak != Weak::No && b.weak != Weak::No &&
        (a.weak == Weak::Float || b.weak == Weak::Float)) {
      auto as_double = [](const Value& v) {
        if (v.weak == Weak::Float) return v.e->float_value;
        return v.dtype() == DType::U64 ? static_cast<double>(v.e->int_bits)
                                       : static_cast<double>(static_cast<int64_t>(v.e->int_bits));
      };
      double x = as_double(a), y = as_double(b);
      switch (op) {
        case ast::BinOp::Add:
          return weak_float(x + y, loc);
        case ast::BinOp::Sub:
          return weak_float(x - y, loc);
        case ast::BinOp::Mul:
          return weak_float(x * y, loc);
        case ast::BinOp::FloorDiv:
          return weak_float(py_floordiv(x, y), loc);
        case ast::BinOp::Mod:
          return weak_float(py_mod(x, y), loc);
        case ast::BinOp::Pow:
          return weak_float(std::pow(x, y), loc);
        default:
          break;
      }
    }
  }
  switch (op) {
    case ast::BinOp::Shl:
    case ast::BinOp::Shr: {
      // Shifts keep the left operand's type.
      std::optional<std::pair<bool, uint64_t>> count;  // a constant count: (negative, bits)
      if (b.weak == Weak::Int)
        count = {b.dtype() != DType::U64 && static_cast<int64_t>(b.e->int_bits) < 0, b.e->int_bits};
      ir::ExprPtr l = materialize(std::move(a));
      ir::ExprPtr r = materialize(std::move(b));
      if (l->type.is_bool()) l = ir::make_cast(std::move(l), Type::scalar(DType::I32));
      if (r->type.is_bool()) r = ir::make_cast(std::move(r), Type::scalar(DType::I32));
      if (!l->type.is_int() || !r->type.is_int())
        fail(loc,
             fmt::format("the shift {} needs integers, not {} and {}", sp, dt(l->type.dtype),
                         dt(r->type.dtype)),
             "convert the operands with int(...)");
      // A constant count outside the width shifts every bit out: surely not what was meant.
      if (!count && r->op == Op::Const)
        count = {is_signed(r->type.dtype) && static_cast<int64_t>(r->int_bits) < 0, r->int_bits};
      if (count) {
        int width = dtype_bits(l->type.dtype);
        auto [negative, bits] = *count;
        if (negative || bits >= static_cast<uint64_t>(width))
          fail(loc,
               fmt::format("the shift count {} is outside 0 to {} for a value of type {}: every "
                           "bit would be shifted out",
                           negative ? fmt::format("{}", static_cast<int64_t>(bits))
                                    : fmt::format("{}", bits),
                           width - 1, dt(l->type.dtype)),
               fmt::format("shift by less than {}, or convert the value to a wider type first, "
                           "e.g. tack.i64(x) {} 40",
                           width, sp));
      }
      return {ir::make_binary(arith_op(op), std::move(l), std::move(r), loc)};
    }
    case ast::BinOp::BitAnd:
    case ast::BinOp::BitOr:
    case ast::BinOp::BitXor: {
      if (a.weak == Weak::Float || b.weak == Weak::Float ||
          (!a.is_weak() && a.e->type.is_float()) || (!b.is_weak() && b.e->type.is_float()))
        fail(loc, fmt::format("the bitwise operator {} needs integers or bools, not floats", sp),
             "convert with int(...) first");
      bool both_bool = !a.is_weak() && !b.is_weak() && a.e->type.is_bool() && b.e->type.is_bool();
      if (both_bool) return {ir::make_binary(arith_op(op), std::move(a.e), std::move(b.e), loc)};
      auto [l, r] = unify(std::move(a), std::move(b), loc, "the bitwise operation");
      if (l->type.is_float())
        fail(loc, fmt::format("the bitwise operator {} needs integers or bools, not floats", sp),
             "convert with int(...) first");
      return {ir::make_binary(arith_op(op), std::move(l), std::move(r), loc)};
    }
    case ast::BinOp::Div: {
      // True division: integers divide as the kernel's float type (7 / 2 == 3.5).
      auto [l, r] = unify(std::move(a), std::move(b), loc, "the division");
      if (!l->type.is_float()) {
        l = ir::make_cast(std::move(l), Type::scalar(float_type_));
        r = ir::make_cast(std::move(r), Type::scalar(float_type_));
      }
      return {ir::make_binary(Op::Div, std::move(l), std::move(r), loc)};
    }
    case ast::BinOp::Pow: {
      if (b.weak == Weak::Int && weak_negative(b) && (a.weak == Weak::Int || a.e->type.is_int()))
        fail(loc, "a negative integer exponent is an error on integers",
             "write a float base, e.g. 2.0 ** -1");
      // Integer powers are exact at the base's type (modulo 2^N).
      bool ints = (a.weak == Weak::Int || (!a.is_weak() && !a.e->type.is_float())) &&
                  (b.weak == Weak::Int || (!b.is_weak() && !b.e->type.is_float()));
      if (ints && !a.is_weak() && !b.is_weak()) {
        ir::ExprPtr base = std::move(a.e);
        if (base->type.is_bool()) base = ir::make_cast(std::move(base), Type::scalar(DType::I32));
        Type t = base->type;
        return {ir::make_binary(Op::Pow, std::move(base), ir::make_cast(std::move(b.e), t), loc)};
      }
      auto [l, r] = unify(std::move(a), std::move(b), loc, "the power");
      if (l->type.is_bool()) {
        l = ir::make_cast(std::move(l), Type::scalar(DType::I32));
        r = ir::make_cast(std::move(r), Type::scalar(DType::I32));
      }
      return {ir::make_binary(Op::Pow, std::move(l), std::move(r), loc)};
    }
    default: {
      auto [l, r] = unify(std::move(a), std::move(b), loc,
                          op == ast::BinOp::Add   ? "the addition"
                          : op == ast::BinOp::Sub ? "the subtraction"
                          : op == ast::BinOp::Mul ? "the multiplication"
                                                  : "the division");
      if (l->type.is_bool()) {  // True + True == 2
        l = ir::make_cast(std::move(l), Type::scalar(DType::I32));
        r = ir::make_cast(std::move(r), Type::scalar(DType::I32));
      }
      return {ir::make_binary(arith_op(op), std::move(l), std::move(r), loc)};
    }
  }
}

ir::ExprPtr Lowerer::convert_for_local(Value v, const ir::Local& local, SourceLoc loc) {
  if (v.is_composite())
    fail(loc,
         fmt::format("cannot assign {} to '{}', a local of type {}", v.type_name(), local.name,
                     dt(local.type.dtype)),
         "a local keeps the kind of its first assignment; use a new name for the vector");
  DType to = local.type.dtype;
  if (v.weak == Weak::Int && (is_float(to) || int_fits(to, weak_negative(v), v.e->int_bits)))
    return ir::make_cast(std::move(v.e), local.type);
  if (v.weak == Weak::Float && is_float(to)) return ir::make_cast(std::move(v.e), local.type);
  ir::ExprPtr e = materialize(std::move(v));
  if (widens_exactly(e->type.dtype, to)) return ir::make_cast(std::move(e), local.type);
  fail(loc,
       fmt::format("cannot assign {} to '{}', a local of type {}: the conversion is not exact",
                   dt(e->type.dtype), local.name, dt(to)),
       fmt::format("convert explicitly with tack.{}(...), or give '{}' the wider type at its "
                   "first assignment, e.g. {} = tack.{}(0)",
                   dt(to), local.name, local.name, dt(e->type.dtype)));
}

ir::ExprPtr Lowerer::convert_for_store(Value v, DType to, const std::string& array, SourceLoc loc) {
  if (v.is_composite()) {
    // Most often an argument has one dimension more than the kernel's indices: an array of shape
    // (n, 2) indexed x[i] reads a vec2.
    auto it = params_.find(array);
    int rank = it == params_.end() ? 0 : k_.params[it->second].type.rank;
    fail(loc,
         fmt::format(
             "cannot store {} into one element of '{}'{}: the value is a vector", v.type_name(),
             array,
             rank ? fmt::format(" (an array of {} dimension{})", rank, rank == 1 ? "" : "s") : ""),
         fmt::format("an array whose last dimension is 2, 3 or 4 indexed with one index fewer than "
                     "its dimensions gives a vector (x[i] of shape (n, {0}) is a {1}): if an "
                     "argument has more dimensions than the kernel indexes, pass the array the "
                     "kernel expects or index every dimension, e.g. x[i, 0]; to store the vector, "
                     "give '{2}' a last dimension of {0}",
                     v.rows * v.cols, v.type_name(), array));
  }
  if (v.weak == Weak::Int && is_integer(to) && !int_fits(to, weak_negative(v), v.e->int_bits))
    fail(loc, fmt::format("the value does not fit the dtype {} of array '{}'", dt(to), array),
         "store a value in range, or cast it explicitly");
  if (v.weak == Weak::Int && (is_float(to) || is_integer(to)))
    return ir::make_cast(std::move(v.e), Type::scalar(to));
  if (v.weak == Weak::Float && is_float(to)) return ir::make_cast(std::move(v.e), Type::scalar(to));
  ir::ExprPtr e = materialize(std::move(v));
  if (!stores_same_kind(e->type.dtype, to))
    fail(loc,
         fmt::format("cannot store {} into array '{}' of dtype {} without an explicit cast",
                     dt(e->type.dtype), array, dt(to)),
         fmt::format("write tack.{}(value) to convert (floats truncate toward zero), or compare "
                     "with != 0 for a bool",
                     dt(to)));
  return ir::make_cast(std::move(e), Type::scalar(to));
}

Value Lowerer::unary(ast::UnaryOp op, Value a, SourceLoc loc) {
  if (a.is_composite()) {
    if (op == ast::UnaryOp::Not)
      fail(loc, fmt::format("`not` needs a single truth value, not {}", a.type_name()),
           "reduce the mask first: not any(mask), or compare the other way round");
    return componentwise(values(std::move(a)), loc, "the operator",
                         [&](std::vector<Value> x) { return unary(op, std::move(x[0]), loc); });
  }
  switch (op) {
    case ast::UnaryOp::Not:
      return {ir::make_unary(Op::Not, truth(std::move(a), loc), loc)};
    case ast::UnaryOp::Pos:
    case ast::UnaryOp::Neg: {
      bool neg = op == ast::UnaryOp::Neg;
      if (a.weak == Weak::Float) return weak_float(neg ? -a.e->float_value : a.e->float_value, loc);
      if (a.weak == Weak::Int) {
        if (!neg) return a;
        if (a.dtype() == DType::U64) fail(loc, "this literal is out of range when negated");
        return weak_int(-static_cast<int64_t>(a.e->int_bits), loc);
      }
      if (a.e->type.is_bool()) a.e = ir::make_cast(std::move(a.e), Type::scalar(DType::I32));
      if (!neg) return a;
      return {ir::make_unary(Op::Neg, std::move(a.e), loc)};
    }
    case ast::UnaryOp::Invert: {
      if (a.weak == Weak::Int) return weak_int(~static_cast<int64_t>(a.e->int_bits), loc);
      ir::ExprPtr x = materialize(std::move(a));
      if (x->type.is_bool())
        fail(loc, "~ on a bool gives an integer in Python, which is rarely meant",
             "write `not x` for logical negation");
      if (!x->type.is_int())
        fail(loc, fmt::format("~ needs an integer, not {}", dt(x->type.dtype)),
             "convert with int(...) first");
      return {ir::make_unary(Op::BitNot, std::move(x), loc)};
    }
  }
  return a;
}

Lowerer::Nested::Nested(Lowerer& l, SourceLoc loc) : l_(l) {
  if (++l_.nesting_ > kMaxNesting) {
    --l_.nesting_;
    l_.fail(loc,
            fmt::format("the kernel nests too deeply: more than {} levels of statements, "
                        "expressions and inlined @tack.func bodies inside each other",
                        kMaxNesting),
            "compute parts of deep expressions into variables, and call fewer functions from "
            "inside other functions' expressions");
  }
}

Value Lowerer::expr(const ast::Expr& e) {
  Nested nested(*this, e.loc);
  Value v = expr_node(e);
  // Host expressions stay whole: the parallel loop's bounds are evaluated at launch.
  if (e.height % kSpillLevels == 0 && !atomics_seen_ && !v.is_composite() && !v.is_weak() &&
      !ir::is_host_expr(*v.e))
    v = reusable(std::move(v), e.loc);
  return v;
}

Value Lowerer::expr_node(const ast::Expr& e) {
  using K = ast::Expr::Kind;
  switch (e.kind) {
    case K::IntLit:
      return weak_uint(e.uint_value, e.loc);
    case K::FloatLit:
      return weak_float(e.float_value, e.loc);
    case K::BoolLit:
      return {ir::make_bool(e.bool_value, e.loc)};
    case K::StringLit:
      fail(e.loc, "strings are only allowed as docstrings and print labels", "remove the string");
    case K::Name: {
      if (auto it = locals_.find(e.name); it != locals_.end())
        return {ir::make_local(it->second, k_.locals[it->second].type, e.loc)};
      if (composites_.count(e.name)) return composite_local(e.name, e.loc);
      if (auto it = params_.find(e.name); it != params_.end()) {
        const ir::Param& p = k_.params[it->second];
        if (p.type.is_array() && !p.is_local_array())  // the call passed an array
          fail_arg(e.loc, fmt::format("argument '{}' is an array but is used as a scalar value; "
                                      "pass a number, or index it ({}[i])",
                                      e.name, e.name));
        if (p.type.is_array())
          fail(e.loc, fmt::format("array '{}' is used as a value", e.name),
               fmt::format("index it, e.g. {}[i], or read its size with {}.shape[0]", e.name,
                           e.name));
        return {ir::make_param(it->second, p.type, e.loc)};
      }
      if (auto it = object_names_.find(e.name); it != object_names_.end())
        fail(e.loc, fmt::format("{} is used as a value", describe_object(it->second)),
             fmt::format("read its attributes ({0}.name), call its methods ({0}.f(...)), or "
                         "pass it to a @tack.func",
                         e.name));
      lang::Symbol s = module().lookup(e.name);
      switch (s.kind) {
        case lang::Symbol::Kind::Constant:
          return constant(*s.constant, e.loc);
        case lang::Symbol::Kind::HostValue:
          fail(e.loc,
               fmt::format("'{}' is a module-level host value, which a kernel cannot capture",
                           e.name),
               fmt::format("declare it as a constant: {} = tack.constant(value), or pass it as "
                           "an argument",
                           e.name));
        case lang::Symbol::Kind::Function:
          fail(e.loc, fmt::format("function '{}' is used as a value", e.name), "call it instead");
        case lang::Symbol::Kind::Class:
          fail(e.loc, fmt::format("class '{}' is used as a value", e.name),
               "pass an object of it to the kernel and use that");
        case lang::Symbol::Kind::TackModule:
        case lang::Symbol::Kind::MathModule:
        case lang::Symbol::Kind::ForeignModule:
          fail(e.loc, fmt::format("module '{}' is used as a value", e.name),
               "use one of its members, e.g. math.pi");
        case lang::Symbol::Kind::TackMember:
          if (dtype_from_name(s.member))
            fail(e.loc, fmt::format("dtype '{}' is used as a value", e.name),
                 fmt::format("call it to convert: {}(x)", e.name));
          break;
        case lang::Symbol::Kind::Unknown:
          break;
      }
      fail(e.loc, fmt::format("name '{}' is not defined", e.name),
           "a kernel may not capture host values: assign it first, pass it as an argument, or "
           "declare it at module level with tack.constant(value)");
    }
    case K::Attribute: {
      if (int object = object_of(*e.operand); object >= 0)
        return object_attribute(object, e.name, e.loc);
      if (e.operand->kind == K::Name) {
        lang::Symbol s = module().lookup(e.operand->name);
        bool is_module_value = !is_local(e.operand->name) && !is_param(e.operand->name);
        if (is_module_value && (s.kind == lang::Symbol::Kind::MathModule ||
                                s.kind == lang::Symbol::Kind::TackModule)) {
          if (e.name == "pi") return weak_float(std::numbers::pi, e.loc);
          if (e.name == "e") return weak_float(std::numbers::e, e.loc);
          if (e.name == "tau") return weak_float(2 * std::numbers::pi, e.loc);
          if (e.name == "inf") return weak_float(INFINITY, e.loc);
          if (e.name == "nan") return weak_float(NAN, e.loc);
          fail(e.loc, fmt::format("{}.{} is not a value", e.operand->name, e.name),
               "call it, or use math.pi, math.e, math.tau or math.inf");
        }
        if (is_module_value && s.kind == lang::Symbol::Kind::ForeignModule)
          fail(e.loc, fmt::format("module '{}' cannot be used in a kernel", s.member),
               "use the math builtins: math.NAME, tack.NAME or the bare NAME");
        if (array_param(*e.operand) >= 0) {
          if (e.name == "shape")
            fail(e.loc, "an array's shape is read one dimension at a time",
                 fmt::format("write {}.shape[0]", e.operand->name));
          fail(e.loc, fmt::format("arrays have no attribute '{}' in kernels", e.name),
               fmt::format("use {}.shape[k] or len({})", e.operand->name, e.operand->name));
        }
        if (is_module_value && s.kind == lang::Symbol::Kind::Class)
          fail(e.loc,
               fmt::format("'{}' is a device class; a kernel reads '{}' through an object of it",
                           e.operand->name, e.name),
               fmt::format("pass an object and read obj.{}", e.name));
        if (!is_local(e.operand->name) && !is_param(e.operand->name))
          fail(e.loc, fmt::format("attribute '{}' is not supported here", e.name),
               "kernels read array elements, shapes and module constants");
      }
      Value base = expr(*e.operand);
      if (base.is_composite()) return swizzle(std::move(base), e.name, e.loc);
      fail(e.loc, fmt::format("{} has no attribute '{}'", base.type_name(), e.name),
           "only vectors have components (.x, .y, .z, .w)");
    }
    case K::Subscript: {
      if (int first; object_tuple(*e.operand, &first)) return tuple_item(e);
      // x.shape[k]
      if (e.operand->kind == K::Attribute && e.operand->name == "shape" &&
          object_of(*e.operand) < 0) {
        int a = array_param(*e.operand->operand);
        const ast::Expr& of = *e.operand->operand;
        if (int object = a < 0 ? object_of(of) : -1; object >= 0) {
          const ObjectType::Attribute* shape = objects_[object].type->find("shape");
          if (shape && shape->kind == ObjectType::Attribute::Kind::Unsupported)
            fail_unsupported(object, *shape, e.loc);
          fail(e.loc, fmt::format("{} has no shape", describe_object(object)),
               "read the shape of one of its arrays (obj.values.shape[0]), or call len(obj), "
               "which calls the class's __len__");
        }
        if (a < 0 && of.kind == K::Name && is_param(of.name) && !is_local(of.name))
          fail_arg(e.loc, fmt::format("argument '{}' is a scalar but its shape is read; only "
                                      "arrays have a shape: pass an array",
                                      of.name));
        if (a < 0)
          fail(e.loc, "only array arguments have a shape", "index the shape of an array argument");
        reject_texture(a, e.loc);
        if (e.args.size() != 1)
          fail(e.loc, "shape takes one index", fmt::format("write {}.shape[0]", k_.params[a].name));
        Value k = expr(*e.args[0]);
        if (k.weak != Weak::Int)
          fail(e.args[0]->loc, "the dimension in shape[k] must be an integer literal or constant",
               "write shape[0], shape[1], ...");
        int64_t d = static_cast<int64_t>(k.e->int_bits);
        int rank = k_.params[a].type.rank;
        if (d < 0) d += rank;
        if (d < 0 || d >= rank)
          fail_arg(e.loc, fmt::format("array argument '{}' has {} dimension{}; shape[{}] is out "
                                      "of range",
                                      k_.params[a].name, rank, rank == 1 ? "" : "s",
                                      static_cast<int64_t>(k.e->int_bits)));
        return {array_extent(a, static_cast<int>(d), e.loc)};
      }
      int a = array_param(*e.operand);
      if (a < 0) {
        if (int object = object_of(*e.operand); object >= 0) return object_subscript(object, e);
        if (e.operand->kind == K::Name && params_.count(e.operand->name) &&
            !is_local(e.operand->name))
          fail_arg(e.loc, fmt::format("argument '{}' is a scalar but is indexed like an array",
                                      e.operand->name));
        if (e.operand->kind == K::Name && !is_local(e.operand->name))
          fail(e.loc, "only array arguments can be indexed", "index an array argument: x[i]");
        Value base = expr(*e.operand);
        if (base.is_composite()) return component(std::move(base), e);
        fail(e.loc, fmt::format("{} cannot be indexed", base.type_name()),
             "index an array argument x[i], or a vector v[k]");
      }
      reject_texture(a, e.loc);
      if (is_vector_access(a, e)) return vector_load(a, e, nullptr, nullptr);
      auto idx = array_indices(a, e);
      return {ir::make_load(a, k_.params[a].type.dtype, std::move(idx), e.loc)};
    }
    case K::Call:
      return call(e);
    case K::Binary: {
      Value a = expr(*e.args[0]);
      Value b = expr(*e.args[1]);
      return binary(e.bin_op, std::move(a), std::move(b), e.loc);
    }
    case K::Unary:
      return unary(e.unary_op, expr(*e.args[0]), e.loc);
    case K::BoolOp: {
      ir::ExprPtr l = truth(expr(*e.args[0]), e.args[0]->loc);
      ir::ExprPtr r;
      ir::Block pre = lower_into([&] { r = truth(expr(*e.args[1]), e.args[1]->loc); });
      bool is_and = e.bool_op == ast::BoolOp::And;
      if (pre.empty())
        return {ir::make_binary(is_and ? Op::LogicalAnd : Op::LogicalOr, std::move(l), std::move(r),
                                e.loc)};
      // The right operand calls a device function: it may run only when the left one decides
      // nothing, so the short circuit becomes an if statement.
      if (!block_)
        fail(e.loc, "a device function cannot be called here", "call it inside the kernel's body");
      int t = temp(std::move(l), e.loc, *block_);
      auto node = std::make_unique<ir::Stmt>(ir::Stmt::Kind::If, e.loc);
      node->cond = ir::make_local(t, Type::bool_(), e.loc);
      if (!is_and) node->cond = ir::make_unary(Op::Not, std::move(node->cond), e.loc);
      node->body = std::move(pre);
      node->body.push_back(ir::make_assign(t, std::move(r), e.loc));
      block_->push_back(std::move(node));
      return {ir::make_local(t, Type::bool_(), e.loc)};
    }
    case K::Compare: {
      // a < b < c is (a < b) and (b < c) with b computed once: a middle operand that is not a
      // plain name or literal is kept in a temporary.
      std::vector<Value> operands;
      for (size_t i = 0; i < e.args.size(); ++i) {
        Value v = expr(*e.args[i]);
        if (v.is_composite() && e.cmp_ops.size() > 1)
          fail(e.loc, "a chained comparison of vectors is ambiguous",
               "compare pairs and combine the masks: all(a < b) and all(b < c)");
        if (v.is_composite() || (!operands.empty() && operands[0].is_composite())) {
          if (operands.empty()) {
            operands.push_back(std::move(v));
            continue;
          }
          return composite_compare(compare_op(e.cmp_ops[0]), std::move(operands[0]), std::move(v),
                                   e.loc);
        }
        bool middle = i > 0 && i + 1 < e.args.size();
        ir::Op op = v.e->op;
        if (middle && block_ && op != Op::Const && op != Op::Local && op != Op::Param) {
          int t = temp(std::move(v.e), e.args[i]->loc, *block_);
          v = {ir::make_local(t, k_.locals[t].type, e.args[i]->loc)};
        }
        operands.push_back(std::move(v));
      }
      ir::ExprPtr result;
      for (size_t i = 0; i < e.cmp_ops.size(); ++i) {
        Value a{i == 0 ? std::move(operands[i].e) : operands[i].e->clone(), operands[i].weak};
        Value b{
            i + 2 == operands.size() ? std::move(operands[i + 1].e) : operands[i + 1].e->clone(),
            operands[i + 1].weak};
        auto [l, r] = unify(std::move(a), std::move(b), e.loc, "the comparison");
        ir::ExprPtr c =
            ir::make_binary(compare_op(e.cmp_ops[i]), std::move(l), std::move(r), e.loc);
        result = result ? ir::make_binary(Op::LogicalAnd, std::move(result), std::move(c), e.loc)
                        : std::move(c);
      }
      return {std::move(result)};
    }
    case K::IfExp: {
      ir::ExprPtr c = truth(expr(*e.args[0]), e.args[0]->loc);
      Value then_v, else_v;
      ir::Block then_pre = lower_into([&] { then_v = expr(*e.args[1]); });
      ir::Block else_pre = lower_into([&] { else_v = expr(*e.args[2]); });
      if (then_v.is_composite() || else_v.is_composite()) {
        if (!then_pre.empty() || !else_pre.empty())
          fail(e.loc, "a conditional expression of vectors cannot call device functions",
               "write an if statement that assigns the vector");
        std::vector<Value> parts;
        parts.push_back(Value{std::move(c)});
        parts.push_back(std::move(then_v));
        parts.push_back(std::move(else_v));
        return componentwise(
            std::move(parts), e.loc, "the conditional expression", [&](std::vector<Value> x) {
              auto [a, b] =
                  unify(std::move(x[1]), std::move(x[2]), e.loc, "the conditional expression");
              return Value{ir::make_select(std::move(x[0].e), std::move(a), std::move(b), e.loc)};
            });
      }
      auto [a, b] =
          unify(std::move(then_v), std::move(else_v), e.loc, "the conditional expression");
      if (then_pre.empty() && else_pre.empty())
        return {ir::make_select(std::move(c), std::move(a), std::move(b), e.loc)};
      // An arm calls a device function: only the chosen arm may run.
      if (!block_)
        fail(e.loc, "a device function cannot be called here", "call it inside the kernel's body");
      int t = new_local(fmt::format("$t{}", temps_++), a->type);
      auto node = std::make_unique<ir::Stmt>(ir::Stmt::Kind::If, e.loc);
      node->cond = std::move(c);
      node->body = std::move(then_pre);
      node->body.push_back(ir::make_assign(t, std::move(a), e.loc));
      node->orelse = std::move(else_pre);
      node->orelse.push_back(ir::make_assign(t, std::move(b), e.loc));
      block_->push_back(std::move(node));
      return {ir::make_local(t, k_.locals[t].type, e.loc)};
    }
    case K::Tuple:
      fail(e.loc, "a tuple is only allowed on either side of an assignment",
           "assign its parts to separate names: a, b = x, y");
  }
  fail(e.loc, "unsupported expression");
}

}  // namespace tack::sema
