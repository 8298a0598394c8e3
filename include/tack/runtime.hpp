// Process-wide controls: debug mode, synchronization, the kernel cache.
#pragma once

#include <cstdint>
#include <string>

namespace tack {

// The version of Tack, part of every cache key.
const char* version();

// Debug mode: variants compiled from now on check every array index (TACK_DEBUG=1 sets it at
// start-up). A violation raises IndexError naming the kernel, array, index, shape and line.
void set_debug(bool on);
bool debug();

// Waits for all queued work on every device; raises the first error queued work produced.
void sync();

struct CacheStats {
  uint64_t compiles = 0;      // variants compiled by this process
  uint64_t memory_hits = 0;   // calls served by an already loaded variant
  uint64_t disk_hits = 0;     // variants loaded from the disk cache
  uint64_t disk_misses = 0;   // disk lookups that found nothing usable
  uint64_t disk_writes = 0;   // entries written
  uint64_t disk_corrupt = 0;  // entries that failed their checks and were replaced
};
CacheStats cache_stats();
// The disk cache's directory (TACK_CACHE_DIR, else the user cache directory).
std::string cache_dir();
bool cache_enabled();
// Removes every entry on disk and forgets compiled variants in memory; returns entries removed.
size_t clear_cache();

}  // namespace tack
