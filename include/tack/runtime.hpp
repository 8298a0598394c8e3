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

// The log on stderr: at level 1 or more, one line per compile, disk-cache hit, disk-cache miss
// (with its reason) and launch, with timings. TACK_LOG=1 sets it at start-up; 0 turns it off.
void set_log_level(int level);
int log_level();

// Waits for all queued work on every device; raises the first error queued work produced.
void sync();

struct CacheStats {
  uint64_t compiles = 0;      // variants compiled by this process
  uint64_t memory_hits = 0;   // calls served by an already loaded variant
  uint64_t disk_hits = 0;     // variants loaded from the disk cache
  uint64_t disk_misses = 0;   // variants the disk cache had nothing usable for (then compiled)
  uint64_t disk_writes = 0;   // entries written
  uint64_t disk_corrupt = 0;  // entries unusable (damaged, not a file, too big, did not load)
  uint64_t disk_write_failures = 0;  // entries that could not be written (disk full, too big)
  uint64_t disk_refused = 0;  // entries or cache directories refused: another user could write them
  uint64_t disk_evictions = 0;      // entries removed to keep the cache under its size limit
  uint64_t disk_lock_waits = 0;     // first calls that waited for another process's compile
  uint64_t disk_lock_timeouts = 0;  // ... and stopped waiting, to compile here
  uint64_t front_end_runs = 0;      // variants parsed and specialized by the front end
  uint64_t front_end_records = 0;   // variants whose front end's work a disk-cache record spared
};
CacheStats cache_stats();
// The disk cache's directory (TACK_CACHE_DIR, else the user cache directory).
std::string cache_dir();
// Whether the disk cache is used: false with TACK_CACHE=0, or when its directory is unusable (it
// cannot be created, or another user could write it); cache_disabled_reason() says why.
bool cache_enabled();
std::string cache_disabled_reason();
// Removes every entry on disk and forgets compiled variants in memory; returns entries removed.
size_t clear_cache();

}  // namespace tack
