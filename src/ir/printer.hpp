// Text form of the IR: for `tack emit`, for tests, and (canonical form) for cache keys.
#pragma once

#include <string>

#include "ir/ir.hpp"

namespace tack::ir {

struct PrintOptions {
  // Source positions of checked accesses change the code in debug mode, so the cache key includes
  // them then; elsewhere they would only make renumbered lines miss the cache.
  bool locations = false;
};

std::string print(const Kernel& k, PrintOptions options = {});
std::string print(const Expr& e, const Kernel& k);

}  // namespace tack::ir
