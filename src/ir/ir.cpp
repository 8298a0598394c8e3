#include "ir/ir.hpp"
#include "ir/builder.hpp"

#include <fmt/format.h>

namespace tack::ir {

std::string to_string(const Type& t) {
  switch (t.kind) {
    case Type::Kind::Void:
      return "void";
    case Type::Kind::Scalar:
      return std::string(dtype_name(t.dtype));
    case Type::Kind::Vector:
      return fmt::format("{}x{}", dtype_name(t.dtype), t.lanes);
    case Type::Kind::Matrix:
      return fmt::format("{}x{}x{}", dtype_name(t.dtype), t.rows, t.lanes);
    case Type::Kind::Array:
      return fmt::format("{}[{}]", dtype_name(t.dtype),
                         std::string(t.rank > 0 ? t.rank - 1 : 0, ','));
  }
  return "?";
}

const char* op_name(Op op) {
  switch (op) {
    case Op::Const:
      return "const";
    case Op::Local:
      return "local";
    case Op::Param:
      return "param";
    case Op::ArrayDim:
      return "dim";
    case Op::Load:
      return "load";
    case Op::Neg:
      return "neg";
    case Op::BitNot:
      return "bitnot";
    case Op::Not:
      return "not";
    case Op::Add:
      return "add";
    case Op::Sub:
      return "sub";
    case Op::Mul:
      return "mul";
    case Op::Div:
      return "div";
    case Op::FloorDiv:
      return "floordiv";
    case Op::Mod:
      return "mod";
    case Op::Pow:
      return "pow";
    case Op::Shl:
      return "shl";
    case Op::Shr:
      return "shr";
    case Op::BitAnd:
      return "and";
    case Op::BitOr:
      return "or";
    case Op::BitXor:
      return "xor";
    case Op::Min:
      return "min";
    case Op::Max:
      return "max";
    case Op::Lt:
      return "lt";
    case Op::Le:
      return "le";
    case Op::Gt:
      return "gt";
    case Op::Ge:
      return "ge";
    case Op::Eq:
      return "eq";
    case Op::Ne:
      return "ne";
    case Op::LogicalAnd:
      return "land";
    case Op::LogicalOr:
      return "lor";
    case Op::Select:
      return "select";
    case Op::Cast:
      return "cast";
    case Op::Call:
      return "call";
    case Op::Atomic:
      return "atomic";
    case Op::ThreadId:
      return "thread_id";
    case Op::GroupId:
      return "group_id";
    case Op::GroupSize:
      return "group_size";
    case Op::Collective:
      return "block";
    case Op::TextureSample:
      return "sample";
  }
  return "?";
}

const char* atomic_name(AtomicOp a) {
  static const char* const names[] = {"add", "sub", "min",      "max", "and",
                                      "or",  "xor", "exchange", "cas"};
  return names[static_cast<int>(a)];
}

const char* collective_name(Collective c) {
  static const char* const names[] = {"sum", "min", "max", "scan"};
  return names[static_cast<int>(c)];
}

const char* builtin_name(Builtin b) {
  static const char* const names[] = {"sqrt", "rsqrt", "sin",   "cos",   "tan",  "asin",  "acos",
                                      "atan", "atan2", "sinh",  "cosh",  "tanh", "exp",   "exp2",
                                      "log",  "log2",  "log10", "floor", "ceil", "trunc", "round",
                                      "abs",  "fma",   "isnan", "isinf"};
  return names[static_cast<int>(b)];
}

bool is_comparison(Op op) {
  return op >= Op::Lt && op <= Op::Ne;
}
bool is_binary_arith(Op op) {
  return op >= Op::Add && op <= Op::Max;
}

ExprPtr Expr::clone() const {
  auto e = std::make_unique<Expr>(op, type, loc);
  e->index = index;
  e->dim = dim;
  e->callee = callee;
  e->atomic = atomic;
  e->collective = collective;
  e->int_bits = int_bits;
  e->float_value = float_value;
  e->checked = checked;
  for (const auto& o : operands) e->operands.push_back(o->clone());
  return e;
}

// ---- builder ----

ExprPtr make_int(Type t, uint64_t bits, SourceLoc loc) {
  auto e = std::make_unique<Expr>(Op::Const, t, loc);
  // Keep the canonical two's-complement bits of the type's width, sign-extended to 64.
  int w = dtype_bits(t.dtype);
  if (t.dtype == DType::Bool) {
    bits = bits != 0;
  } else if (w < 64) {
    uint64_t mask = (uint64_t{1} << w) - 1;
    bits &= mask;
    if (is_signed(t.dtype) && (bits >> (w - 1)) & 1) bits |= ~mask;
  }
  e->int_bits = bits;
  return e;
}

ExprPtr make_float(Type t, double value, SourceLoc loc) {
  auto e = std::make_unique<Expr>(Op::Const, t, loc);
  e->float_value = t.dtype == DType::F32 ? static_cast<double>(static_cast<float>(value)) : value;
  return e;
}

ExprPtr make_bool(bool value, SourceLoc loc) {
  return make_int(Type::bool_(), value, loc);
}

ExprPtr make_local(int id, Type t, SourceLoc loc) {
  auto e = std::make_unique<Expr>(Op::Local, t, loc);
  e->index = id;
  return e;
}

ExprPtr make_param(int id, Type t, SourceLoc loc) {
  auto e = std::make_unique<Expr>(Op::Param, t, loc);
  e->index = id;
  return e;
}

ExprPtr make_array_dim(int array, int dim, SourceLoc loc) {
  auto e = std::make_unique<Expr>(Op::ArrayDim, Type::i64(), loc);
  e->index = array;
  e->dim = dim;
  return e;
}

ExprPtr make_load(int array, DType dtype, std::vector<ExprPtr> indices, SourceLoc loc) {
  auto e = std::make_unique<Expr>(Op::Load, Type::scalar(dtype), loc);
  e->index = array;
  e->operands = std::move(indices);
  return e;
}

ExprPtr make_unary(Op op, ExprPtr a, SourceLoc loc) {
  auto e = std::make_unique<Expr>(op, a->type, loc);
  e->operands.push_back(std::move(a));
  return e;
}

ExprPtr make_binary(Op op, ExprPtr a, ExprPtr b, SourceLoc loc) {
  Type t = is_comparison(op) ? Type::bool_() : a->type;
  auto e = std::make_unique<Expr>(op, t, loc);
  e->operands.push_back(std::move(a));
  e->operands.push_back(std::move(b));
  return e;
}

ExprPtr make_select(ExprPtr cond, ExprPtr a, ExprPtr b, SourceLoc loc) {
  auto e = std::make_unique<Expr>(Op::Select, a->type, loc);
  e->operands.push_back(std::move(cond));
  e->operands.push_back(std::move(a));
  e->operands.push_back(std::move(b));
  return e;
}

ExprPtr make_cast(ExprPtr a, Type t) {
  if (a->type == t) return a;
  SourceLoc loc = a->loc;
  auto e = std::make_unique<Expr>(Op::Cast, t, loc);
  e->operands.push_back(std::move(a));
  return e;
}

ExprPtr make_call(Builtin b, Type result, std::vector<ExprPtr> args, SourceLoc loc) {
  auto e = std::make_unique<Expr>(Op::Call, result, loc);
  e->callee = b;
  e->operands = std::move(args);
  return e;
}

StmtPtr make_assign(int local, ExprPtr value, SourceLoc loc) {
  auto s = std::make_unique<Stmt>(Stmt::Kind::Assign, loc);
  s->index = local;
  s->value = std::move(value);
  return s;
}

StmtPtr make_store(int array, std::vector<ExprPtr> indices, ExprPtr value, SourceLoc loc) {
  auto s = std::make_unique<Stmt>(Stmt::Kind::Store, loc);
  s->index = array;
  s->indices = std::move(indices);
  s->value = std::move(value);
  return s;
}

bool is_const(const Expr& e) {
  return e.op == Op::Const;
}

int64_t const_as_int(const Expr& e) {
  if (e.type.is_float()) return static_cast<int64_t>(e.float_value);
  return static_cast<int64_t>(e.int_bits);
}

}  // namespace tack::ir
