// The hash of the compiler's own sources, generated at build time by cmake/source_id.cmake.
#pragma once

namespace tack::detail {

// Part of every disk-cache key: two builds of different sources never share an entry, even at
// the same version number (a development build, a patched package).
const char* source_id();

}  // namespace tack::detail
