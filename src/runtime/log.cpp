#include "runtime/log.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace tack {
namespace {

// TACK_LOG=1 at start-up; unset, empty or 0: off.
int level_from_environment() {
  const char* v = std::getenv("TACK_LOG");
  if (!v || !*v) return 0;
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);
  if (end != v && *end == '\0') return n < 0 ? 0 : static_cast<int>(n);
  // Any other word (TACK_LOG=yes) turns the log on rather than being silently ignored.
  return 1;
}

std::atomic<int>& level() {
  static std::atomic<int> l{level_from_environment()};
  return l;
}

}  // namespace

void set_log_level(int l) {
  level().store(l < 0 ? 0 : l, std::memory_order_relaxed);
}

int log_level() {
  return level().load(std::memory_order_relaxed);
}

namespace detail {

void log_write(std::string_view line) {
  static std::mutex mu;
  std::lock_guard lock(mu);
  std::fprintf(stderr, "tack: %.*s\n", static_cast<int>(line.size()), line.data());
  std::fflush(stderr);
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double elapsed_ms(int64_t start_ns) {
  return static_cast<double>(now_ns() - start_ns) / 1e6;
}

}  // namespace detail
}  // namespace tack
