// Hexadecimal digits for the disk cache's keys and file names, which every new process builds at
// its first kernel call: std::to_chars, whose first use there costs a fraction of a microsecond,
// where fmt's first formatting of a number took several (its code's first pass).
#pragma once

#include <charconv>
#include <cstdint>
#include <string>

namespace tack::detail {

// Appends `value` in lowercase hexadecimal, zero-padded to `digits` (at most 16).
inline void append_hex(std::string& out, uint64_t value, int digits) {
  char buf[16];
  char* end = std::to_chars(buf, buf + sizeof buf, value, 16).ptr;
  const auto length = static_cast<int>(end - buf);
  if (length < digits) out.append(static_cast<size_t>(digits - length), '0');
  out.append(buf, static_cast<size_t>(length));
}

}  // namespace tack::detail
