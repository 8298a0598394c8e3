// Process-wide controls: version, debug mode, sync, the cache.
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "backends/backend.hpp"
#include "runtime/disk_cache.hpp"
#include "runtime/queue.hpp"
#include "runtime/stats.hpp"
#include "tack/runtime.hpp"

#ifndef TACK_VERSION
#error "TACK_VERSION must be defined by the build"
#endif

namespace tack {
namespace {

std::atomic<bool>& debug_flag() {
  static std::atomic<bool> flag = [] {
    const char* env = std::getenv("TACK_DEBUG");
    return env && *env && std::strcmp(env, "0") != 0;
  }();
  return flag;
}

}  // namespace

const char* version() {
  return TACK_VERSION;
}

void set_debug(bool on) {
  debug_flag() = on;
}
bool debug() {
  return debug_flag();
}

void sync() {
  detail::wait_for_all();
}

CacheStats cache_stats() {
  auto& s = detail::stats();
  DiskCacheStats disk = DiskCache::global().stats();
  CacheStats out;
  out.compiles = s.compiles;
  out.memory_hits = s.memory_hits;
  out.disk_hits = s.disk_hits;
  out.disk_misses = s.disk_misses;
  out.disk_writes = disk.writes;
  out.disk_corrupt = disk.corrupt + s.disk_corrupt;
  out.disk_write_failures = disk.write_failures;
  out.disk_refused = disk.refused;
  out.disk_evictions = disk.evictions;
  out.disk_lock_waits = disk.lock_waits;
  out.disk_lock_timeouts = disk.lock_timeouts;
  out.front_end_runs = s.front_end_runs;
  out.front_end_records = s.front_end_records;
  return out;
}

std::string cache_dir() {
  return DiskCache::global().dir();
}
bool cache_enabled() {
  return DiskCache::global().enabled();
}
std::string cache_disabled_reason() {
  return DiskCache::global().disabled_reason();
}

size_t clear_cache() {
  detail::forget_compiled_variants();
  return DiskCache::global().clear().entries;
}

}  // namespace tack
