// This process's counters of compilation and cache use (tack::cache_stats()).
#pragma once

#include <atomic>
#include <cstdint>

namespace tack::detail {

struct Stats {
  std::atomic<uint64_t> compiles{0}, memory_hits{0}, disk_hits{0}, disk_misses{0}, disk_corrupt{0},
      front_end_runs{0}, front_end_records{0};
};

inline Stats& stats() {
  static Stats s;
  return s;
}

void forget_compiled_variants();

}  // namespace tack::detail
