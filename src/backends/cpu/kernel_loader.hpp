// Loading a compiled kernel, the shared object of the compiler library (cpu_compiler.hpp), into the
// process with dlopen: the same path for a kernel just compiled and one from the disk cache.
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
// a prefix loaded before returns that first load. What dlopen maps is a sealed copy in memory of
// these very bytes, which the caller has checked (the disk cache verified their checksum after
// reading them through the checked directory), not a file someone could change in between.
// Loaded kernels stay loaded for the life of the process. Throws DeviceError when the object does
// not load (damaged, or missing a symbol).
LoadedKernel load_kernel(std::string_view shared_object, const std::string& prefix,
                         bool has_result);

}  // namespace tack::cpu
