// Which values of a kernel differ between the lanes of a gang (gang_codegen.hpp), and whether the
// widened generator can run the kernel, and should (not where lanes would gather in a loop).
//
// A gang runs W consecutive iterations of the innermost parallel dimension, one per lane. Varying
// (one value per lane) are: the innermost loop variable, loads whose index is varying, atomics
// (each lane gets its own old value), and every
// local assigned from a varying value or under varying control. Uniform (one value for the gang)
// are constants, scalar parameters, extents, the outer loop variables and locals assigned only
// uniform values under uniform control. Control is varying inside an `if` with a varying
// condition, and in the whole body of a loop whose lanes may leave at different times: a `while`
// with a varying condition, a `for` with varying bounds, or a loop with a `break` or `continue`
// under a varying `if` (a `return` from a @tack.func arrives here as such a break). Locals are
// tracked flow-insensitively, to a fixed point.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "ir/ir.hpp"

namespace tack::codegen {

struct LaneAnalysis {
  std::vector<char> varying_local;          // by local id
  std::set<const ir::Stmt*> varying_loops;  // loops whose lanes may leave at different times
  // Why the kernel runs on the scalar path; empty when it is widened.
  std::string unsupported;

  bool varying(const ir::Expr& e) const;
  bool varying_loop(const ir::Stmt& s) const { return varying_loops.count(&s) > 0; }
};

LaneAnalysis analyze_lanes(const ir::Kernel& k);

}  // namespace tack::codegen
