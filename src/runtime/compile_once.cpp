#include "runtime/compile_once.hpp"

#include "runtime/hex.hpp"

#include <fmt/format.h>

#include <mutex>
#include <unordered_map>

#include "ir/type.hpp"
#include "runtime/disk_cache.hpp"
#include "runtime/log.hpp"
#include "runtime/stats.hpp"
#include "tack/error.hpp"

namespace tack::detail {
namespace {

// The code of one key on one device, while some variant holds it. The mutex is held for the
// whole load or compile, so that a second thread waits for the first one's code.
struct Slot {
  std::mutex mutex;
  std::weak_ptr<LoadedCode> code;
};

class Slots {
 public:
  std::shared_ptr<Slot> get(const std::string& id) {
    std::lock_guard lock(mutex_);
    auto& slot = slots_[id];
    if (!slot) slot = std::make_shared<Slot>();
    std::shared_ptr<Slot> out = slot;
    // Forgets the keys no variant holds any more, each time the table has doubled.
    if (slots_.size() >= 2 * sweep_at_) {
      std::erase_if(slots_, [](const auto& kv) {
        std::unique_lock held(kv.second->mutex, std::try_to_lock);
        return held.owns_lock() && kv.second.use_count() == 1 && kv.second->code.expired();
      });
      sweep_at_ = std::max<size_t>(slots_.size(), 64);
    }
    return out;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<Slot>> slots_;
  size_t sweep_at_ = 64;
};

Slots& slots() {
  static auto* s = new Slots();  // leaked, like DiskCache::global()
  return *s;
}

// "kernel 'saxpy' (f32, f32[1d], f32[1d] out) on cpu:0", for the log.
std::string describe(const Backend& backend, int device, const ir::Kernel& k,
                     const CompileOptions& options) {
  std::string types;
  for (const ir::Param& p : k.params) {
    if (p.is_local_array()) continue;
    types += fmt::format("{}{}", types.empty() ? "" : ", ", ir::to_string(p.type));
  }
  return fmt::format("kernel '{}' ({}){} on {}:{}", k.name, types,
                     options.no_alias ? " no-alias" : "", backend.info().name, device);
}

// The code from the disk cache's entry, or null when there is none (`*found` false) or it does
// not load (`*corrupt` true).
std::unique_ptr<LoadedCode> load_entry(Backend& backend, int device, const ir::Kernel& k,
                                       const CompileOptions& options, const std::string& key,
                                       bool* found, bool* corrupt) {
  DiskCache& disk = DiskCache::global();
  const int64_t start = now_ns();
  const uint64_t corrupt_before = disk.stats().corrupt;
  std::string stored_at;
  auto artifact = disk.load(backend.info().name, key, /*counted=*/true, &stored_at);
  *found = artifact.has_value();
  *corrupt = disk.stats().corrupt != corrupt_before;
  if (!artifact) return nullptr;
  try {
    auto code = backend.load(*artifact, k, options, device, stored_at);
    stats().disk_hits++;
    // Described only when logged: a warm first call would format it for nothing.
    if (log_level() >= 1)
      log("disk cache hit: {}, loaded in {:.3f} ms", describe(backend, device, k, options),
          elapsed_ms(start));
    return code;
  } catch (const DeviceError&) {
    // An entry that passed its checksum but does not load is treated like a corrupt one; the
    // store after the compile replaces it.
    stats().disk_corrupt++;
    *corrupt = true;
    return nullptr;
  }
}

std::unique_ptr<LoadedCode> load_or_compile(Backend& backend, int device, const ir::Kernel& k,
                                            const CompileOptions& options, const std::string& key,
                                            std::string* origin) {
  bool found = false, corrupt = false;
  *origin = "disk cache";
  if (auto code = load_entry(backend, device, k, options, key, &found, &corrupt)) return code;
  DiskCache& disk = DiskCache::global();
  // Another process may be compiling this entry: wait for it, then load what it stored. Looked
  // up again even without a wait: the other process may have stored it and let go just before.
  // (An entry that was there but did not load is compiled again at once.)
  DiskCache::EntryLock lock = disk.lock(backend.info().name, key);
  if (!found) {
    bool corrupt_now = false;
    if (auto code = load_entry(backend, device, k, options, key, &found, &corrupt_now)) return code;
    corrupt = corrupt || corrupt_now;
  }
  stats().disk_misses++;
  if (log_level() >= 1) {
    std::string reason = corrupt           ? "corrupt entry, recompiled"
                         : !disk.enabled() ? "the cache is off: " + disk.disabled_reason()
                         : lock.waited()   ? "another process's compile did not store it"
                                           : "new key";
    log("disk cache miss: {} ({})", describe(backend, device, k, options), reason);
  }
  const int64_t start = now_ns();
  std::string artifact = backend.compile(k, options, device);
  stats().compiles++;
  log("compiled {} in {:.3f} ms", describe(backend, device, k, options), elapsed_ms(start));
  *origin = "compiled";
  disk.store(backend.info().name, key, artifact);
  return backend.load(artifact, k, options, device, "");
}

}  // namespace

std::shared_ptr<LoadedCode> shared_code(Backend& backend, int device, const ir::Kernel& k,
                                        const CompileOptions& options, const std::string& key,
                                        std::string* origin) {
  std::string id;  // appended, not formatted: a first call builds it (runtime/hex.hpp)
  append_hex(id, reinterpret_cast<uintptr_t>(&backend), 16);
  id += '\n' + std::to_string(device) + '\n' + key;
  std::shared_ptr<Slot> slot = slots().get(id);
  std::lock_guard lock(slot->mutex);
  std::string ignored;
  if (!origin) origin = &ignored;
  if (auto code = slot->code.lock()) {
    *origin = "shared with another kernel object";
    return code;
  }
  std::shared_ptr<LoadedCode> code = load_or_compile(backend, device, k, options, key, origin);
  slot->code = code;
  return code;
}

}  // namespace tack::detail
