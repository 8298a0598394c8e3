#include "codegen/llvm/value_ops.hpp"

#include <fmt/format.h>
#include <llvm/IR/Intrinsics.h>

#include "tack/error.hpp"

namespace tack::codegen {

using ir::Op;
using llvm::BasicBlock;
using llvm::Value;

llvm::Type* llvm_type(llvm::LLVMContext& ctx, DType t) {
  switch (t) {
    case DType::Bool:
      return llvm::Type::getInt1Ty(ctx);
    case DType::I8:
    case DType::U8:
      return llvm::Type::getInt8Ty(ctx);
    case DType::I16:
    case DType::U16:
      return llvm::Type::getInt16Ty(ctx);
    case DType::I32:
    case DType::U32:
      return llvm::Type::getInt32Ty(ctx);
    case DType::I64:
    case DType::U64:
      return llvm::Type::getInt64Ty(ctx);
    case DType::F32:
      return llvm::Type::getFloatTy(ctx);
    case DType::F64:
      return llvm::Type::getDoubleTy(ctx);
  }
  return nullptr;
}

llvm::Type* llvm_mem_type(llvm::LLVMContext& ctx, DType t) {
  return t == DType::Bool ? llvm::Type::getInt8Ty(ctx) : llvm_type(ctx, t);
}

llvm::Type* shaped(llvm::Type* scalar, const Value* shape) {
  if (auto* v = llvm::dyn_cast<llvm::FixedVectorType>(shape->getType()))
    return llvm::FixedVectorType::get(scalar, v->getNumElements());
  return scalar;
}

Value* ValueOps::intrinsic(llvm::Intrinsic::ID id, std::vector<llvm::Type*> types,
                           std::vector<Value*> args) {
  return b_.CreateCall(llvm::Intrinsic::getDeclaration(&m_, id, types), args);
}

Value* ValueOps::atomic(ir::AtomicOp a, DType dt, Value* ptr, const std::vector<Value*>& vals,
                        llvm::Instruction** inst) {
  bool f = is_float(dt);
  auto ordering = llvm::AtomicOrdering::Monotonic;
  llvm::MaybeAlign align(dtype_size(dt));
  if (a == ir::AtomicOp::Cas) {
    // Compare-and-swap compares bits: floats go through the integer of their width.
    llvm::Type* it = b_.getIntNTy(dtype_bits(dt));
    Value* expected = f ? b_.CreateBitCast(vals[0], it) : vals[0];
    Value* desired = f ? b_.CreateBitCast(vals[1], it) : vals[1];
    auto* cas = b_.CreateAtomicCmpXchg(ptr, expected, desired, align, ordering, ordering);
    *inst = cas;
    Value* old = b_.CreateExtractValue(cas, 0);
    return f ? b_.CreateBitCast(old, llvm_type(m_.getContext(), dt)) : old;
  }
  using B = llvm::AtomicRMWInst::BinOp;
  B op = B::Add;
  bool s = is_signed(dt);
  switch (a) {
    case ir::AtomicOp::Add:
      op = f ? B::FAdd : B::Add;
      break;
    case ir::AtomicOp::Sub:
      op = f ? B::FSub : B::Sub;
      break;
    case ir::AtomicOp::Min:
      op = f ? B::FMin : s ? B::Min : B::UMin;
      break;
    case ir::AtomicOp::Max:
      op = f ? B::FMax : s ? B::Max : B::UMax;
      break;
    case ir::AtomicOp::And:
      op = B::And;
      break;
    case ir::AtomicOp::Or:
      op = B::Or;
      break;
    case ir::AtomicOp::Xor:
      op = B::Xor;
      break;
    case ir::AtomicOp::Exchange:
      op = B::Xchg;
      break;
    case ir::AtomicOp::Cas:
      break;
  }
  auto* rmw = b_.CreateAtomicRMW(op, ptr, vals[0], align, ordering);
  *inst = rmw;
  return rmw;
}

void ValueOps::print(const ir::Stmt& s, const std::vector<Value*>& values) {
  std::string format;
  std::vector<Value*> args{nullptr};
  auto escaped = [](const std::string& text) {
    std::string out;
    for (char c : text) out += c == '%' ? std::string("%%") : std::string(1, c);
    return out;
  };
  for (size_t i = 0; i < s.labels.size(); ++i) {
    format += escaped(s.labels[i]);
    if (i == s.indices.size()) break;
    Value* v = values[i];
    DType t = s.indices[i]->type.dtype;
    if (t == DType::Bool) {
      format += "%s";
      args.push_back(
          b_.CreateSelect(v, b_.CreateGlobalStringPtr("True"), b_.CreateGlobalStringPtr("False")));
    } else if (is_float(t)) {
      format += t == DType::F32 ? "%.7g" : "%.15g";  // enough digits to tell values apart
      args.push_back(b_.CreateFPExt(v, b_.getDoubleTy()));
    } else {
      format += is_signed(t) ? "%lld" : "%llu";
      args.push_back(b_.CreateIntCast(v, b_.getInt64Ty(), is_signed(t)));
    }
  }
  args[0] = b_.CreateGlobalStringPtr(format);
  auto printf = m_.getOrInsertFunction(
      "printf", llvm::FunctionType::get(b_.getInt32Ty(), {b_.getPtrTy()}, true));
  b_.CreateCall(printf, args);
}

Value* ValueOps::per_lane(llvm::FunctionCallee f, const std::vector<Value*>& args) {
  auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(args[0]->getType());
  if (!vt) return b_.CreateCall(f, args);
  Value* out = llvm::PoisonValue::get(
      llvm::FixedVectorType::get(f.getFunctionType()->getReturnType(), vt->getNumElements()));
  for (unsigned l = 0; l < vt->getNumElements(); ++l) {
    std::vector<Value*> lane;
    for (Value* a : args) lane.push_back(b_.CreateExtractElement(a, l));
    out = b_.CreateInsertElement(out, b_.CreateCall(f, lane), l);
  }
  return out;
}

Value* ValueOps::libm(const char* name, DType t, const std::vector<Value*>& args) {
  std::string fn = t == DType::F32 ? std::string(name) + "f" : name;
  llvm::Type* ty = llvm_type(m_.getContext(), t);
  std::vector<llvm::Type*> params(args.size(), ty);
  auto callee = m_.getOrInsertFunction(fn, llvm::FunctionType::get(ty, params, false));
  if (auto* f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    f->setDoesNotThrow();
    f->setWillReturn();
  }
  return per_lane(callee, args);
}

Value* ValueOps::cast(Value* v, DType from, DType to) {
  if (from == to) return v;
  llvm::Type* t = shaped(llvm_type(m_.getContext(), to), v);
  if (to == DType::Bool) {
    return is_float(from) ? b_.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0))
                          : b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  }
  if (from == DType::Bool) return is_float(to) ? b_.CreateUIToFP(v, t) : b_.CreateZExt(v, t);
  if (is_float(from) && is_float(to)) return b_.CreateFPCast(v, t);
  if (is_float(to)) return is_signed(from) ? b_.CreateSIToFP(v, t) : b_.CreateUIToFP(v, t);
  if (is_float(from)) return float_to_int(v, t, is_signed(to));
  return b_.CreateIntCast(v, t, is_signed(from));
}

// Truncates toward zero, saturating at the type's limits; NaN gives 0: the result of
// llvm.fptosi.sat / fptoui.sat, written as compares, selects and a plain conversion of a value in
// range, because LLVM 19 turns a vector of those intrinsics into one scalar conversion per lane
// on x86 (a gang's conversion cost 16 of them).
Value* ValueOps::float_to_int(Value* v, llvm::Type* to, bool is_signed_to) {
  llvm::Type* ft = v->getType();
  const llvm::fltSemantics& sem = ft->getScalarType()->getFltSemantics();
  const unsigned bits = to->getScalarSizeInBits();
  // The range's ends as floats: the lowest value (exact, a power of two or 0), the first value
  // past the highest (exact), and the largest float below it, which converts in range.
  const llvm::APFloat lowest =
      is_signed_to ? llvm::APFloat(std::ldexp(-1.0, bits - 1)) : llvm::APFloat(0.0);
  const llvm::APFloat past = llvm::APFloat(std::ldexp(1.0, is_signed_to ? bits - 1 : bits));
  auto in_type = [&](llvm::APFloat f) {
    bool lost = false;
    f.convert(sem, llvm::APFloat::rmNearestTiesToEven, &lost);
    return f;
  };
  llvm::APFloat below = in_type(past);
  below.next(/*nextDown=*/true);
  Value* lo = llvm::ConstantFP::get(ft, in_type(lowest));
  Value* hi = llvm::ConstantFP::get(ft, below);
  // Ordered compares: NaN takes the lowest value here and 0 below.
  Value* clamped = b_.CreateSelect(b_.CreateFCmpOGT(v, hi), hi, v);
  clamped = b_.CreateSelect(b_.CreateFCmpOGE(clamped, lo), clamped, lo);
  Value* r = is_signed_to ? b_.CreateFPToSI(clamped, to) : b_.CreateFPToUI(clamped, to);
  Value* max = llvm::ConstantInt::get(
      to, is_signed_to ? llvm::APInt::getSignedMaxValue(bits) : llvm::APInt::getMaxValue(bits));
  r = b_.CreateSelect(b_.CreateFCmpOGE(v, llvm::ConstantFP::get(ft, in_type(past))), max, r);
  if (is_signed_to)
    r = b_.CreateSelect(b_.CreateFCmpUNO(v, v), llvm::Constant::getNullValue(to), r);
  return r;
}

Value* ValueOps::int_floordiv_mod(Op op, Value* a, Value* d, bool is_signed_type) {
  auto* ty = a->getType();
  Value* zero = llvm::ConstantInt::get(ty, 0);
  Value* one = llvm::ConstantInt::get(ty, 1);
  Value* d_zero = b_.CreateICmpEQ(d, zero);
  if (!is_signed_type) {
    Value* safe = b_.CreateSelect(d_zero, one, d);
    Value* r = op == Op::FloorDiv ? b_.CreateUDiv(a, safe) : b_.CreateURem(a, safe);
    return b_.CreateSelect(d_zero, zero, r);
  }
  // x // 0 and x % 0 are 0; MIN // -1 wraps to MIN; neither may reach the hardware divider.
  Value* minus_one = llvm::ConstantInt::get(ty, -1, true);
  Value* d_m1 = b_.CreateICmpEQ(d, minus_one);
  Value* safe = b_.CreateSelect(b_.CreateOr(d_zero, d_m1), one, d);
  Value* q = b_.CreateSDiv(a, safe);
  Value* r = b_.CreateSRem(a, safe);
  // Python floors: adjust when the remainder is non-zero and its sign differs from the divisor.
  Value* adjust =
      b_.CreateAnd(b_.CreateICmpNE(r, zero), b_.CreateICmpSLT(b_.CreateXor(r, d), zero));
  Value* result;
  if (op == Op::FloorDiv) {
    q = b_.CreateSub(q, b_.CreateZExt(adjust, ty));
    result = b_.CreateSelect(d_m1, b_.CreateNeg(a), q);
  } else {
    result = b_.CreateSelect(adjust, b_.CreateAdd(r, d), r);
    result = b_.CreateSelect(d_m1, zero, result);
  }
  return b_.CreateSelect(d_zero, zero, result);
}

// CPython's float floor division and modulo.
Value* ValueOps::float_floordiv_mod(Op op, Value* a, Value* w) {
  auto* ty = a->getType();
  Value* zero = llvm::ConstantFP::get(ty, 0.0);
  Value* mod = b_.CreateFRem(a, w);
  Value* mod_nz = b_.CreateFCmpUNE(mod, zero);
  Value* signs_differ = b_.CreateXor(b_.CreateFCmpOLT(w, zero), b_.CreateFCmpOLT(mod, zero));
  Value* fix = b_.CreateAnd(mod_nz, signs_differ);
  if (op == Op::Mod) {
    Value* m = b_.CreateSelect(fix, b_.CreateFAdd(mod, w), mod);
    Value* signed_zero = intrinsic(llvm::Intrinsic::copysign, {ty}, {zero, w});
    return b_.CreateSelect(mod_nz, m, signed_zero);
  }
  Value* div = b_.CreateFDiv(b_.CreateFSub(a, mod), w);
  div = b_.CreateSelect(fix, b_.CreateFSub(div, llvm::ConstantFP::get(ty, 1.0)), div);
  Value* fl = intrinsic(llvm::Intrinsic::floor, {ty}, {div});
  Value* rounded =
      b_.CreateSelect(b_.CreateFCmpOGT(b_.CreateFSub(div, fl), llvm::ConstantFP::get(ty, 0.5)),
                      b_.CreateFAdd(fl, llvm::ConstantFP::get(ty, 1.0)), fl);
  Value* quotient_zero = intrinsic(llvm::Intrinsic::copysign, {ty}, {zero, b_.CreateFDiv(a, w)});
  Value* r = b_.CreateSelect(b_.CreateFCmpUNE(div, zero), rounded, quotient_zero);
  // x // 0.0 is what x / 0.0 is (inf or nan), as in NumPy.
  return b_.CreateSelect(b_.CreateFCmpOEQ(w, zero), b_.CreateFDiv(a, w), r);
}

// Exact integer power by squaring, modulo 2^N. A negative exponent gives the truncated real
// result: 1 for base 1, +-1 for base -1, 0 otherwise.
Value* ValueOps::int_pow(Value* base, Value* e, bool is_signed_type) {
  auto* ty = base->getType()->getScalarType();
  std::string name =
      fmt::format("tack.ipow.{}{}", is_signed_type ? "i" : "u", ty->getIntegerBitWidth());
  llvm::Function* f = m_.getFunction(name);
  if (!f) {
    auto saved = b_.saveIP();
    llvm::LLVMContext& ctx = m_.getContext();
    f = llvm::Function::Create(llvm::FunctionType::get(ty, {ty, ty}, false),
                               llvm::Function::InternalLinkage, name, m_);
    f->addFnAttr(llvm::Attribute::NoUnwind);
    auto* entry = BasicBlock::Create(ctx, "entry", f);
    auto* loop = BasicBlock::Create(ctx, "loop", f);
    auto* done = BasicBlock::Create(ctx, "done", f);
    auto* negative = BasicBlock::Create(ctx, "negative", f);
    Value* x = f->getArg(0);
    Value* n = f->getArg(1);
    b_.SetInsertPoint(entry);
    Value* zero = llvm::ConstantInt::get(ty, 0);
    Value* one = llvm::ConstantInt::get(ty, 1);
    if (is_signed_type)
      b_.CreateCondBr(b_.CreateICmpSLT(n, zero), negative, loop);
    else
      b_.CreateBr(loop);
    b_.SetInsertPoint(loop);
    auto* acc = b_.CreatePHI(ty, 2);
    auto* bb = b_.CreatePHI(ty, 2);
    auto* ee = b_.CreatePHI(ty, 2);
    acc->addIncoming(one, entry);
    bb->addIncoming(x, entry);
    ee->addIncoming(n, entry);
    Value* odd = b_.CreateICmpNE(b_.CreateAnd(ee, one), zero);
    Value* acc2 = b_.CreateSelect(odd, b_.CreateMul(acc, bb), acc);
    Value* b2 = b_.CreateMul(bb, bb);
    Value* e2 = b_.CreateLShr(ee, one);
    acc->addIncoming(acc2, loop);
    bb->addIncoming(b2, loop);
    ee->addIncoming(e2, loop);
    b_.CreateCondBr(b_.CreateICmpEQ(e2, zero), done, loop);
    b_.SetInsertPoint(done);
    auto* result = b_.CreatePHI(ty, 1);
    result->addIncoming(acc2, loop);
    // A zero exponent runs the loop once with an even exponent: the result stays 1.
    b_.CreateRet(result);
    b_.SetInsertPoint(negative);
    Value* minus_one = llvm::ConstantInt::get(ty, -1, true);
    Value* odd_n = b_.CreateICmpNE(b_.CreateAnd(n, one), zero);
    Value* r = b_.CreateSelect(b_.CreateICmpEQ(x, one), one,
                               b_.CreateSelect(b_.CreateICmpEQ(x, minus_one),
                                               b_.CreateSelect(odd_n, minus_one, one), zero));
    b_.CreateRet(r);
    b_.restoreIP(saved);
  }
  return per_lane(f, {base, e});
}

Value* ValueOps::shift(Op op, Value* v, Value* amount, DType t, DType amount_type) {
  auto* ty = v->getType();
  unsigned width = ty->getScalarSizeInBits();
  // Amounts are read as unsigned: a negative or too-large amount shifts everything out.
  llvm::Type* i64 = shaped(b_.getInt64Ty(), v);
  Value* amt64 = b_.CreateIntCast(amount, i64, is_signed(amount_type));
  Value* too_big = b_.CreateICmpUGE(amt64, llvm::ConstantInt::get(i64, width));
  Value* amt = b_.CreateTrunc(b_.CreateSelect(too_big, llvm::ConstantInt::get(i64, 0), amt64), ty);
  if (op == Op::Shl)
    return b_.CreateSelect(too_big, llvm::ConstantInt::get(ty, 0), b_.CreateShl(v, amt));
  if (is_signed(t)) {
    Value* sign = b_.CreateAShr(v, llvm::ConstantInt::get(ty, width - 1));
    return b_.CreateSelect(too_big, sign, b_.CreateAShr(v, amt));
  }
  return b_.CreateSelect(too_big, llvm::ConstantInt::get(ty, 0), b_.CreateLShr(v, amt));
}

Value* ValueOps::compare(Op op, Value* a, Value* c, DType t) {
  if (is_float(t)) {
    switch (op) {
      case Op::Lt:
        return b_.CreateFCmpOLT(a, c);
      case Op::Le:
        return b_.CreateFCmpOLE(a, c);
      case Op::Gt:
        return b_.CreateFCmpOGT(a, c);
      case Op::Ge:
        return b_.CreateFCmpOGE(a, c);
      case Op::Eq:
        return b_.CreateFCmpOEQ(a, c);
      default:
        return b_.CreateFCmpUNE(a, c);
    }
  }
  bool s = is_signed(t);
  switch (op) {
    case Op::Lt:
      return s ? b_.CreateICmpSLT(a, c) : b_.CreateICmpULT(a, c);
    case Op::Le:
      return s ? b_.CreateICmpSLE(a, c) : b_.CreateICmpULE(a, c);
    case Op::Gt:
      return s ? b_.CreateICmpSGT(a, c) : b_.CreateICmpUGT(a, c);
    case Op::Ge:
      return s ? b_.CreateICmpSGE(a, c) : b_.CreateICmpUGE(a, c);
    case Op::Eq:
      return b_.CreateICmpEQ(a, c);
    default:
      return b_.CreateICmpNE(a, c);
  }
}

Value* ValueOps::call(const ir::Expr& e, const std::vector<Value*>& a) {
  using ir::Builtin;
  DType t = e.operands[0]->type.dtype;
  llvm::Type* ty = a[0]->getType();
  switch (e.callee) {
    case Builtin::Sqrt:
      return intrinsic(llvm::Intrinsic::sqrt, {ty}, a);
    case Builtin::Rsqrt:
      return b_.CreateFDiv(llvm::ConstantFP::get(ty, 1.0),
                           intrinsic(llvm::Intrinsic::sqrt, {ty}, a));
    case Builtin::Sin:
      return libm("sin", t, a);
    case Builtin::Cos:
      return libm("cos", t, a);
    case Builtin::Tan:
      return libm("tan", t, a);
    case Builtin::Asin:
      return libm("asin", t, a);
    case Builtin::Acos:
      return libm("acos", t, a);
    case Builtin::Atan:
      return libm("atan", t, a);
    case Builtin::Atan2:
      return libm("atan2", t, a);
    case Builtin::Sinh:
      return libm("sinh", t, a);
    case Builtin::Cosh:
      return libm("cosh", t, a);
    case Builtin::Tanh:
      return libm("tanh", t, a);
    case Builtin::Exp:
      return libm("exp", t, a);
    case Builtin::Exp2:
      return libm("exp2", t, a);
    case Builtin::Log:
      return libm("log", t, a);
    case Builtin::Log2:
      return libm("log2", t, a);
    case Builtin::Log10:
      return libm("log10", t, a);
    case Builtin::Floor:
      return intrinsic(llvm::Intrinsic::floor, {ty}, a);
    case Builtin::Ceil:
      return intrinsic(llvm::Intrinsic::ceil, {ty}, a);
    case Builtin::Trunc:
      return intrinsic(llvm::Intrinsic::trunc, {ty}, a);
    case Builtin::Round:
      return intrinsic(llvm::Intrinsic::roundeven, {ty}, a);
    case Builtin::Abs:
      if (is_float(t)) return intrinsic(llvm::Intrinsic::fabs, {ty}, a);
      return intrinsic(llvm::Intrinsic::abs, {ty}, {a[0], b_.getFalse()});
    case Builtin::Fma:
      return intrinsic(llvm::Intrinsic::fma, {ty}, a);
    case Builtin::IsNan:
      return b_.CreateFCmpUNO(a[0], a[0]);
    case Builtin::IsInf:
      return b_.CreateFCmpOEQ(intrinsic(llvm::Intrinsic::fabs, {ty}, a),
                              llvm::ConstantFP::getInfinity(ty));
  }
  return nullptr;
}

Value* ValueOps::apply(const ir::Expr& e, const std::vector<Value*>& a) {
  DType t = e.type.dtype;
  bool f = is_float(t);
  switch (e.op) {
    case Op::Call:
      return call(e, a);
    case Op::Cast:
      return cast(a[0], e.operands[0]->type.dtype, t);
    case Op::Not:
    case Op::BitNot:
      return b_.CreateNot(a[0]);
    case Op::Neg:
      return f ? b_.CreateFNeg(a[0]) : b_.CreateNeg(a[0]);
    default:
      break;
  }
  if (a.size() != 2) return nullptr;
  if (ir::is_comparison(e.op)) return compare(e.op, a[0], a[1], e.operands[0]->type.dtype);
  llvm::Type* ty = a[0]->getType();
  switch (e.op) {
    case Op::Add:
      return f ? b_.CreateFAdd(a[0], a[1]) : b_.CreateAdd(a[0], a[1]);
    case Op::Sub:
      return f ? b_.CreateFSub(a[0], a[1]) : b_.CreateSub(a[0], a[1]);
    case Op::Mul:
      return f ? b_.CreateFMul(a[0], a[1]) : b_.CreateMul(a[0], a[1]);
    case Op::Div:
      return b_.CreateFDiv(a[0], a[1]);
    case Op::FloorDiv:
    case Op::Mod:
      return f ? float_floordiv_mod(e.op, a[0], a[1])
               : int_floordiv_mod(e.op, a[0], a[1], is_signed(t));
    case Op::Pow:
      return f ? intrinsic(llvm::Intrinsic::pow, {ty}, {a[0], a[1]})
               : int_pow(a[0], a[1], is_signed(t));
    case Op::Shl:
    case Op::Shr:
      return shift(e.op, a[0], a[1], t, e.operands[1]->type.dtype);
    case Op::BitAnd:
      return b_.CreateAnd(a[0], a[1]);
    case Op::BitOr:
      return b_.CreateOr(a[0], a[1]);
    case Op::BitXor:
      return b_.CreateXor(a[0], a[1]);
    case Op::Min:
      if (f) return intrinsic(llvm::Intrinsic::minimum, {ty}, {a[0], a[1]});
      return intrinsic(is_signed(t) ? llvm::Intrinsic::smin : llvm::Intrinsic::umin, {ty},
                       {a[0], a[1]});
    case Op::Max:
      if (f) return intrinsic(llvm::Intrinsic::maximum, {ty}, {a[0], a[1]});
      return intrinsic(is_signed(t) ? llvm::Intrinsic::smax : llvm::Intrinsic::umax, {ty},
                       {a[0], a[1]});
    default:
      return nullptr;
  }
}

}  // namespace tack::codegen
