// Loading a compiled kernel, the shared object of the compiler library (cpu_compiler.hpp), into the
// process with dlopen: from the disk cache's file where it lies, or from a sealed copy in memory.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tack::cpu {

using ChunkFn = void (*)(const uint64_t* slots, int64_t begin, int64_t end);
using ResultFn = void (*)(const uint64_t* slots, void* out);

struct LoadedKernel {
  ChunkFn chunk = nullptr;
  ResultFn result = nullptr;
  bool has_streamed_stores = false;  // the object defines <prefix>_streams (abi.hpp)
};

// Loads `shared_object` (whose symbols start with `prefix`, abi.hpp) and returns its entry points;
// a prefix loaded before returns that first load. The caller has checked these bytes (the disk
// cache verified their checksum after reading them through the checked directory), and what runs
// is them, not a file someone could change in between:
// - `stored_at` (may be empty) is the cache's file that begins with them. It is opened where it
//   lies; the code and read-only data mapped from it must be the checked bytes, and its entry
//   points must lie in that code. Like any shared library, the file must then not be edited in
//   place while the process runs (the cache only ever renames a new file over it, or removes it).
// - Otherwise, or when anything there differs or fails, a sealed copy in memory of the bytes is
//   opened.
// Loaded kernels stay loaded for the life of the process. Throws DeviceError when the object does
// not load (damaged, or missing a symbol).
LoadedKernel load_kernel(std::string_view shared_object, const std::string& stored_at,
                         const std::string& prefix, bool has_result);

}  // namespace tack::cpu
