// One compile per variant: in a process, whatever the number of Kernel handles and threads that
// ask for it, and across the processes that share the disk cache.
#pragma once

#include <memory>
#include <string>

#include "backends/backend.hpp"

namespace tack::detail {

// The code of the variant `k` with `options`, whose cache key is `key`, loaded on `device`:
// shared with every variant of the same key on the same device in this process while one of them
// holds it; otherwise loaded from the disk cache, or compiled and stored there. A compile holds
// the disk cache's lock on the entry, so that other processes wait for it and load. `origin`, when
// given, is set to where the code came from ("compiled", "disk cache", or shared in-process).
std::shared_ptr<LoadedCode> shared_code(Backend& backend, int device, const ir::Kernel& k,
                                        const CompileOptions& options, const std::string& key,
                                        std::string* origin = nullptr);

}  // namespace tack::detail
