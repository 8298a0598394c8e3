// Checks the IR's invariants. Run between passes: a failure is a bug in Tack, not in the kernel,
// and is reported as an internal error naming the kernel and the broken rule.
#pragma once

#include "ir/ir.hpp"

namespace tack::ir {

// Throws tack::Error("internal error: ...") when `k` breaks an invariant. `stage` names the pass
// that produced it.
void verify(const Kernel& k, const char* stage);

// Whether an expression can be evaluated on the host at launch: constants, scalar parameters,
// array dimensions, + - * // and casts of those.
bool is_host_expr(const Expr& e);

}  // namespace tack::ir
