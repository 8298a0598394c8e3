// Index ranges a launch can check before anything runs. For each array access in the parallel
// loop whose index in a dimension is affine in loop variables with host-known ranges (the parallel
// loop's, and those of inner `for` loops with host-evaluable bounds), the analysis records the
// index as offset + sum(coef * var), with offset and coefficients as host expressions. The runtime
// evaluates them at each launch (runtime/launch_bounds.cpp) and refuses a launch in which such an
// access would fall outside its array. Only accesses that every iteration performs are recorded:
// one under an `if`, after a `break` or `continue`, in a loop that may break, or in one arm of a
// conditional expression may be guarded by the program itself and is left unchecked.
#pragma once

#include <vector>

#include "ir/ir.hpp"

namespace tack::ir {

// offset + sum of coef * var, in exact integer arithmetic. `var` indexes IndexProof::vars.
struct Linear {
  struct Term {
    int var = -1;
    ExprPtr coef;  // a host expression
  };
  ExprPtr offset;  // a host expression
  std::vector<Term> terms;

  Linear clone() const;
};

// An access index, and the subexpressions of narrower types whose values it converts to a wider
// one: the affine form equals the generated code's value only where none of them wraps, so an
// access whose `fits` fail at a launch is left unchecked there.
struct AffineIndex {
  Linear value;
  struct Fit {
    Linear value;
    DType type;
  };
  std::vector<Fit> fits;
};

// A loop variable whose values the host knows at launch.
struct RangedVar {
  int local = -1;
  int parallel_dim = -1;      // a dimension of the parallel loop (its bounds are Kernel::dims')
  ExprPtr start, stop, step;  // an inner `for`: host expressions of the variable's type
  DType type = DType::I64;
};

struct ProvenAccess {
  int array = -1;
  SourceLoc loc;
  bool is_store = false;
  std::vector<int> dims;             // the dimensions with an affine index...
  std::vector<AffineIndex> indices;  // ...and those indices
  std::vector<int> guards;           // inner loops (vars) that must run for the access to happen
};

struct IndexProof {
  std::vector<RangedVar> vars;
  std::vector<ProvenAccess> accesses;
};

IndexProof prove_index_ranges(const Kernel& k);

}  // namespace tack::ir
