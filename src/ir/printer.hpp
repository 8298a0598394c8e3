// Text form of the IR: for `tack emit`, for tests, and (canonical form) for cache keys.
#pragma once

#include <string>

#include "ir/ir.hpp"

namespace tack::ir {

struct PrintOptions {
  // Source positions of checked accesses change the code in debug mode, so the cache key includes
  // them then; elsewhere they would only make renumbered lines miss the cache.
  bool locations = false;
  // Each local's index after its name: inlining gives several locals one name (`%f.a` for each
  // call of `f`), and a cache key must tell two kernels apart that differ only in which one an
  // expression reads. Off for people, who read names.
  bool local_ids = false;
};

std::string print(const Kernel& k, PrintOptions options = {});
std::string print(const Expr& e, const Kernel& k);

}  // namespace tack::ir
