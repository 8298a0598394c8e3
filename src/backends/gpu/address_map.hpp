// The allocations of a GPU backend by address: to answer owns(), and, where memory is a handle
// (a cl_mem, an MTLBuffer), to find the handle and the offset behind an address that a view or
// a launch argument holds. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>

namespace tack::backends {

template <typename Handle>
class AddressMap {
 public:
  struct Found {
    Handle handle;
    size_t bytes;   // of the whole allocation
    size_t offset;  // of the address in it
  };

  void add(const void* address, size_t bytes, Handle handle) {
    std::lock_guard lock(mutex_);
    map_.insert_or_assign(key(address), Entry{bytes, handle});
  }

  // The handle allocated at `address`, which the map forgets; nothing when none was.
  std::optional<Handle> remove(const void* address) {
    std::lock_guard lock(mutex_);
    auto it = map_.find(key(address));
    if (it == map_.end()) return std::nullopt;
    Handle h = it->second.handle;
    map_.erase(it);
    return h;
  }

  // The allocation `address` lies in, its end included (a view of no elements may start there).
  std::optional<Found> find(const void* address) const {
    std::lock_guard lock(mutex_);
    auto it = map_.upper_bound(key(address));
    if (it == map_.begin()) return std::nullopt;
    --it;
    size_t offset = key(address) - it->first;
    if (offset > it->second.bytes) return std::nullopt;
    return Found{it->second.handle, it->second.bytes, offset};
  }

  // Whether `address` is inside an allocation (a byte of it; an allocation of no bytes holds
  // its own address).
  bool contains(const void* address) const {
    std::optional<Found> f = find(address);
    return f && f->offset < (f->bytes > 0 ? f->bytes : 1);
  }

 private:
  struct Entry {
    size_t bytes;
    Handle handle;
  };
  static uintptr_t key(const void* address) { return reinterpret_cast<uintptr_t>(address); }

  mutable std::mutex mutex_;
  std::map<uintptr_t, Entry> map_;
};

}  // namespace tack::backends
