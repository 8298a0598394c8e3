// Passes over the typed IR. Each leaves the kernel valid for ir::verify.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "ir/ir.hpp"

namespace tack::ir {

// Debug mode: marks every load and store as checked, so each generator emits an index check that
// reports the kernel, array, index, shape and line instead of performing the access.
void insert_bounds_checks(Kernel& k);

// Whether a block collective (Op::Collective) occurs in `e`, or anywhere in `b`.
bool contains_collective(const Expr& e);
bool contains_collective(const Block& b);

// Folds operations on constants (integer arithmetic with wrapping, casts, comparisons, logic).
void fold_constants(Kernel& k);

// Integer semantics shared by constant folding and host evaluation, so that both agree with the
// generated code: values are two's-complement bits of the dtype's width, sign-extended to 64.
uint64_t wrap_to(DType t, uint64_t bits);
std::optional<uint64_t> fold_int_binary(Op op, DType t, uint64_t a, uint64_t b);

// The values a host expression may read at launch.
struct HostValues {
  std::function<uint64_t(int param)> scalar;          // integer parameter bits
  std::function<int64_t(int array, int dim)> extent;  // array dimension
};

// Evaluates a host expression (see is_host_expr) to a signed 64-bit integer.
int64_t eval_host(const Expr& e, const HostValues& values);

}  // namespace tack::ir
