// The log of what the runtime does (TACK_LOG, tack::set_log_level): one line on stderr per
// compile, disk-cache hit or miss, and launch.
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>

#include "tack/runtime.hpp"

namespace tack::detail {

// Writes "tack: <line>" on stderr, whole, even with several threads logging.
void log_write(std::string_view line);

template <typename... T>
void log(fmt::format_string<T...> format, T&&... args) {
  if (log_level() >= 1) log_write(fmt::format(format, std::forward<T>(args)...));
}

// Milliseconds since `start` (a steady_clock time point), for a log line.
double elapsed_ms(int64_t start_ns);
int64_t now_ns();

}  // namespace tack::detail
