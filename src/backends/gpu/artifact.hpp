// What the GPU backends compile and cache: the generated source of a kernel, and artifacts of two
// parts (a binary and what to rebuild it from).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "codegen/c_family/c_generator.hpp"
#include "tack/error.hpp"

namespace tack::backends {

// The source of `k` for generator `target`. What the language rejects stays a CompileError; what
// the generator refuses for this target (f64 on Metal...) becomes a DeviceError naming the
// backend, raised before anything is compiled or launched.
inline std::string generated_source(const ir::Kernel& k, const std::string& target,
                                    std::string_view backend, const std::string& entry) {
  try {
    return codegen::generate_source(k, target, entry);
  } catch (const CompileError&) {
    throw;
  } catch (const Error& e) {
    throw DeviceError(fmt::format("the {} backend cannot run this kernel: {}", backend, e.what()));
  }
}

// An artifact of two parts (a binary and what to rebuild it from): `magic`, both sizes (8 bytes
// each, native order), then both parts.
inline std::string pack_pair(std::string_view magic, const std::string& first,
                             const std::string& second) {
  std::string out(magic);
  uint64_t sizes[2] = {first.size(), second.size()};
  out.append(reinterpret_cast<const char*>(sizes), sizeof sizes);
  return out + first + second;
}

// The two parts of a pack_pair artifact; false for anything else (another magic, a truncated or
// corrupt entry).
inline bool unpack_pair(std::string_view magic, const std::string& a, std::string& first,
                        std::string& second) {
  size_t head = magic.size();
  if (a.size() < head + 16 || a.compare(0, head, magic) != 0) return false;
  uint64_t sizes[2];
  std::memcpy(sizes, a.data() + head, sizeof sizes);
  if (sizes[0] > a.size() || sizes[1] > a.size() || a.size() != head + 16 + sizes[0] + sizes[1])
    return false;
  first = a.substr(head + 16, sizes[0]);
  second = a.substr(head + 16 + sizes[0]);
  return true;
}

}  // namespace tack::backends
