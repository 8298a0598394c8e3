// The language's operations on LLVM values, shared by the scalar generator (llvm_codegen.cpp) and
// the widened one (gang_codegen.cpp). Every function takes scalars or vectors of lanes alike: the
// result has the shape of the operands (which the caller has made equal), so both paths compute
// each lane with the same instructions and give the same bits.
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <vector>

#include "ir/ir.hpp"

namespace tack::codegen {

// Registers hold bools as i1; memory holds them as bytes.
llvm::Type* llvm_type(llvm::LLVMContext& ctx, DType t);
llvm::Type* llvm_mem_type(llvm::LLVMContext& ctx, DType t);

// `scalar` in the shape of `shape`: the vector of as many lanes when `shape` is a vector.
llvm::Type* shaped(llvm::Type* scalar, const llvm::Value* shape);

class ValueOps {
 public:
  ValueOps(llvm::IRBuilder<>& b, llvm::Module& m) : b_(b), m_(m) {}

  // The operations of `e` (unary and binary arithmetic, comparisons, casts and builtin calls) on
  // operand values already computed and of one shape (the scalar generator's expr() and the
  // widened one's both come here). Nullptr for an operation that is not one of these.
  llvm::Value* apply(const ir::Expr& e, const std::vector<llvm::Value*>& operands);

  llvm::Value* cast(llvm::Value* v, DType from, DType to);
  llvm::Value* compare(ir::Op op, llvm::Value* a, llvm::Value* c, DType t);
  // A relaxed read-modify-write of one element (scalar operands); returns the old value and, in
  // *inst, the atomic instruction.
  llvm::Value* atomic(ir::AtomicOp op, DType dt, llvm::Value* ptr,
                      const std::vector<llvm::Value*>& vals, llvm::Instruction** inst);
  // One printf call for a print statement (scalar values), so that lines from different threads
  // do not interleave.
  void print(const ir::Stmt& s, const std::vector<llvm::Value*>& values);
  llvm::Value* intrinsic(llvm::Intrinsic::ID id, std::vector<llvm::Type*> types,
                         std::vector<llvm::Value*> args);

 private:
  llvm::Value* call(const ir::Expr& e, const std::vector<llvm::Value*>& a);
  // A scalar function applied lane by lane (the same function, so the same bits, on both paths).
  llvm::Value* per_lane(llvm::FunctionCallee f, const std::vector<llvm::Value*>& args);
  llvm::Value* libm(const char* name, DType t, const std::vector<llvm::Value*>& args);
  llvm::Value* float_to_int(llvm::Value* v, llvm::Type* to, bool is_signed_to);
  llvm::Value* int_floordiv_mod(ir::Op op, llvm::Value* a, llvm::Value* d, bool is_signed_type);
  llvm::Value* float_floordiv_mod(ir::Op op, llvm::Value* a, llvm::Value* w);
  llvm::Value* int_pow(llvm::Value* base, llvm::Value* e, bool is_signed_type);
  llvm::Value* shift(ir::Op op, llvm::Value* v, llvm::Value* amount, DType t, DType amount_type);

  llvm::IRBuilder<>& b_;
  llvm::Module& m_;
};

}  // namespace tack::codegen
