// What stands behind each hardware texture's handle in a GPU backend (a CUDA or HIP array, a
// Metal texture), for refill_texture() and destroy_texture(), which launches and releases reach
// from any thread. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <utility>

namespace tack::backends {

template <typename Object>
class TextureObjects {
 public:
  void add(uint64_t handle, Object object) {
    std::lock_guard lock(mutex_);
    map_.insert_or_assign(handle, std::move(object));
  }

  // The object behind `handle`, which must be one add() was given.
  Object at(uint64_t handle) const {
    std::lock_guard lock(mutex_);
    return map_.at(handle);
  }

  // The object behind `handle`, which the map forgets; nothing when none was.
  std::optional<Object> take(uint64_t handle) {
    std::lock_guard lock(mutex_);
    auto it = map_.find(handle);
    if (it == map_.end()) return std::nullopt;
    Object object = std::move(it->second);
    map_.erase(it);
    return object;
  }

 private:
  mutable std::mutex mutex_;
  std::map<uint64_t, Object> map_;
};

}  // namespace tack::backends
