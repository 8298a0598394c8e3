// Constructors for IR nodes that keep the invariants the verifier checks (operand types agree,
// comparisons give bool), so that producers cannot forget them.
#pragma once

#include "ir/ir.hpp"

namespace tack::ir {

ExprPtr make_int(Type t, uint64_t bits, SourceLoc loc = {});
ExprPtr make_float(Type t, double value, SourceLoc loc = {});
ExprPtr make_bool(bool value, SourceLoc loc = {});
ExprPtr make_local(int id, Type t, SourceLoc loc = {});
ExprPtr make_param(int id, Type t, SourceLoc loc = {});
ExprPtr make_array_dim(int array, int dim, SourceLoc loc = {});
ExprPtr make_load(int array, DType dtype, std::vector<ExprPtr> indices, SourceLoc loc);
// Unary and binary arithmetic: the result has the (first) operand's type; comparisons give bool.
ExprPtr make_unary(Op op, ExprPtr a, SourceLoc loc);
ExprPtr make_binary(Op op, ExprPtr a, ExprPtr b, SourceLoc loc);
ExprPtr make_select(ExprPtr cond, ExprPtr a, ExprPtr b, SourceLoc loc);
// Returns `a` unchanged when it already has type `t`.
ExprPtr make_cast(ExprPtr a, Type t);
ExprPtr make_call(Builtin b, Type result, std::vector<ExprPtr> args, SourceLoc loc);

StmtPtr make_assign(int local, ExprPtr value, SourceLoc loc);
StmtPtr make_store(int array, std::vector<ExprPtr> indices, ExprPtr value, SourceLoc loc);

// Whether an expression is a constant, and its value as a signed integer.
bool is_const(const Expr& e);
int64_t const_as_int(const Expr& e);

}  // namespace tack::ir
