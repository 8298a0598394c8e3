#include "ir/passes.hpp"

#include <optional>

#include "ir/builder.hpp"
#include "tack/error.hpp"

namespace tack::ir {
namespace {

template <typename F>
void for_each_expr(Expr& e, F& f) {
  for (auto& o : e.operands) for_each_expr(*o, f);
  f(e);
}

template <typename FE, typename FS>
void walk(Block& b, FE& fe, FS& fs) {
  for (auto& s : b) {
    for (Expr* e : {s->value.get(), s->cond.get(), s->start.get(), s->stop.get(), s->step.get()})
      if (e) for_each_expr(*e, fe);
    for (auto& i : s->indices) for_each_expr(*i, fe);
    fs(*s);
    walk(s->body, fe, fs);
    walk(s->orelse, fe, fs);
  }
}

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// Rewrites an expression tree bottom-up, replacing foldable nodes with constants.
void fold(ExprPtr& e) {
  for (auto& o : e->operands) fold(o);
  auto& ops = e->operands;
  auto all_const = [&] {
    for (auto& o : ops)
      if (!is_const(*o)) return false;
    return !ops.empty();
  };
  if (!all_const()) return;
  Type t = e->type;
  if (e->op == Op::Cast && ops[0]->type.is_int() && t.is_int()) {
    e = make_int(t, ops[0]->int_bits, e->loc);
  } else if (e->op == Op::Cast && ops[0]->type.is_int() && t.is_float()) {
    double v = is_unsigned(ops[0]->type.dtype) ? static_cast<double>(ops[0]->int_bits)
                                               : static_cast<double>(const_as_int(*ops[0]));
    e = make_float(t, v, e->loc);
  } else if (e->op == Op::Cast && ops[0]->type.is_float() && t.is_float()) {
    e = make_float(t, ops[0]->float_value, e->loc);
  } else if (ops.size() == 2 && ops[0]->type.is_int() && t.is_int()) {
    if (auto v = fold_int_binary(e->op, t.dtype, ops[0]->int_bits, ops[1]->int_bits))
      e = make_int(t, *v, e->loc);
  } else if (e->op == Op::Neg && t.is_int()) {
    e = make_int(t, 0 - ops[0]->int_bits, e->loc);
  } else if (e->op == Op::Not) {
    e = make_bool(!ops[0]->int_bits, e->loc);
  }
}

void fold_block(Block& b) {
  for (auto& s : b) {
    for (ExprPtr* e : {&s->value, &s->cond, &s->start, &s->stop, &s->step})
      if (*e) fold(*e);
    for (auto& i : s->indices) fold(i);
    fold_block(s->body);
    fold_block(s->orelse);
  }
}

}  // namespace

uint64_t wrap_to(DType t, uint64_t bits) {
  return make_int(Type::scalar(t), bits)->int_bits;
}

std::optional<uint64_t> fold_int_binary(Op op, DType t, uint64_t a, uint64_t b) {
  // Constants are kept sign-extended, so the 64-bit operation followed by wrap_to gives the
  // result at the type's width for + - * and bitwise ops. Division and shifts depend on the
  // signedness and width and are left to the generated code, except the common signed case.
  switch (op) {
    case Op::Add:
      return wrap_to(t, a + b);
    case Op::Sub:
      return wrap_to(t, a - b);
    case Op::Mul:
      return wrap_to(t, a * b);
    case Op::BitAnd:
      return a & b;
    case Op::BitOr:
      return a | b;
    case Op::BitXor:
      return a ^ b;
    case Op::FloorDiv:
      if (!is_signed(t) || b == 0 || (static_cast<int64_t>(b) == -1)) return std::nullopt;
      return wrap_to(
          t, static_cast<uint64_t>(floor_div(static_cast<int64_t>(a), static_cast<int64_t>(b))));
    default:
      return std::nullopt;
  }
}

bool contains_collective(const Expr& e) {
  if (e.op == Op::Collective) return true;
  for (const auto& o : e.operands)
    if (contains_collective(*o)) return true;
  return false;
}

bool contains_collective(const Block& b) {
  for (const auto& s : b) {
    for (const Expr* e :
         {s->value.get(), s->cond.get(), s->start.get(), s->stop.get(), s->step.get()})
      if (e && contains_collective(*e)) return true;
    for (const auto& i : s->indices)
      if (contains_collective(*i)) return true;
    if (contains_collective(s->body) || contains_collective(s->orelse)) return true;
  }
  return false;
}

void insert_bounds_checks(Kernel& k) {
  auto fe = [](Expr& e) {
    if (e.op == Op::Load || e.op == Op::Atomic) e.checked = true;
  };
  auto fs = [](Stmt& s) {
    if (s.kind == Stmt::Kind::Store) s.checked = true;
  };
  walk(k.prelude, fe, fs);
  walk(k.body, fe, fs);
  if (k.result) for_each_expr(*k.result, fe);
  k.debug = true;
}

void fold_constants(Kernel& k) {
  fold_block(k.prelude);
  fold_block(k.body);
  fold_block(k.epilogue);
  for (LoopDim& d : k.dims) {
    fold(d.start);
    fold(d.stop);
    fold(d.step);
  }
  if (k.result) fold(k.result);
}

int64_t eval_host(const Expr& e, const HostValues& values) {
  auto bits = [&](const Expr& x) -> uint64_t {
    switch (x.op) {
      case Op::Const:
        return x.int_bits;
      case Op::Param:
        return values.scalar(x.index);
      case Op::ArrayDim:
        return static_cast<uint64_t>(values.extent(x.index, x.dim));
      default:
        return static_cast<uint64_t>(eval_host(x, values));
    }
  };
  DType t = e.type.dtype;
  switch (e.op) {
    case Op::Const:
    case Op::Param:
    case Op::ArrayDim:
      return static_cast<int64_t>(wrap_to(t, bits(e)));
    case Op::Cast: {
      const Expr& src = *e.operands[0];
      uint64_t v = wrap_to(src.type.dtype, bits(src));
      if (is_unsigned(src.type.dtype) && dtype_bits(src.type.dtype) < 64)
        v &= (uint64_t{1} << dtype_bits(src.type.dtype)) - 1;
      return static_cast<int64_t>(wrap_to(t, v));
    }
    case Op::Neg:
      return static_cast<int64_t>(wrap_to(t, 0 - bits(*e.operands[0])));
    default: {
      uint64_t a = wrap_to(t, bits(*e.operands[0]));
      uint64_t b = wrap_to(t, bits(*e.operands[1]));
      if (e.op == Op::FloorDiv) {
        if (b == 0) return 0;  // the kernel language defines x // 0 as 0 for integers
        if (is_unsigned(t)) return static_cast<int64_t>(a / b);
        if (static_cast<int64_t>(b) == -1) return static_cast<int64_t>(wrap_to(t, 0 - a));
        return floor_div(static_cast<int64_t>(a), static_cast<int64_t>(b));
      }
      if (auto v = fold_int_binary(e.op, t, a, b)) return static_cast<int64_t>(*v);
      throw Error("internal error: not a host expression");
    }
  }
}

}  // namespace tack::ir
