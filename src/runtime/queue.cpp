// Work queued on asynchronous devices, and the waits that surface its errors (see queue.hpp).
#include "runtime/queue.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "backends/backend.hpp"
#include "tack/error.hpp"

namespace tack::detail {
namespace {

struct Queued {
  std::string kernel;
  std::function<void()> after;
};

struct DeviceQueue {
  // Held for a whole wait, so that a second thread waiting on the same device returns only once
  // the work is done. Recursive: a check that runs after the wait may free memory, which waits.
  std::recursive_mutex wait_mutex;
  std::vector<Queued> queued;  // guarded by Queues::mutex
  std::exception_ptr kept;     // an error found by a wait that could not throw
};

struct Queues {
  std::mutex mutex;
  std::map<std::pair<Backend*, int>, std::unique_ptr<DeviceQueue>> devices;

  DeviceQueue& of(Backend* b, int device) {
    auto& q = devices[{b, device}];
    if (!q) q = std::make_unique<DeviceQueue>();
    return *q;
  }
};

Queues& queues() {
  static Queues* q = new Queues();  // leaked: arrays may be freed during static destruction
  return *q;
}

// The kernels of `work`, for a message: 'a', 'b' (3 launches).
std::string kernel_list(const std::vector<Queued>& work) {
  std::vector<std::string> names;
  for (const Queued& q : work)
    if (std::find(names.begin(), names.end(), q.kernel) == names.end()) names.push_back(q.kernel);
  std::string out;
  for (const std::string& n : names) out += fmt::format("{}'{}'", out.empty() ? "" : ", ", n);
  return fmt::format("{} ({} launch{})", out, work.size(), work.size() == 1 ? "" : "es");
}

// Waits, runs the checks, and returns the first error (the kept one first).
std::exception_ptr wait(Backend* backend, int device, DeviceQueue& q) {
  std::lock_guard wait_lock(q.wait_mutex);
  std::vector<Queued> work;
  std::exception_ptr first;
  {
    std::lock_guard lock(queues().mutex);
    work.swap(q.queued);
    std::swap(first, q.kept);
  }
  if (work.empty()) return first;
  try {
    backend->synchronize(device);
  } catch (const std::exception& e) {
    if (!first)
      first = std::make_exception_ptr(
          DeviceError(fmt::format("{}:{}: queued work failed: {}; kernels queued since the last "
                                  "synchronization: {}",
                                  backend->info().name, device, e.what(), kernel_list(work))));
  }
  // Every check runs, so that each releases what it holds; the first error wins.
  for (Queued& w : work) {
    if (!w.after) continue;
    try {
      w.after();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  return first;
}

DeviceQueue* find(Backend* backend, int device) {
  if (!backend->info().asynchronous) return nullptr;  // the CPU: nothing is ever queued
  std::lock_guard lock(queues().mutex);
  auto it = queues().devices.find({backend, device});
  if (it == queues().devices.end()) return nullptr;
  if (it->second->queued.empty() && !it->second->kept) return nullptr;
  return it->second.get();
}

}  // namespace

void note_queued(Backend* backend, int device, const std::string& kernel,
                 std::function<void()> after) {
  std::lock_guard lock(queues().mutex);
  queues().of(backend, device).queued.push_back({kernel, std::move(after)});
}

void wait_for_device(Backend* backend, int device) {
  DeviceQueue* q = find(backend, device);
  if (!q) return;
  if (std::exception_ptr e = wait(backend, device, *q)) std::rethrow_exception(e);
}

void wait_before_free(Backend* backend, int device) noexcept {
  DeviceQueue* q = find(backend, device);
  if (!q) return;
  std::exception_ptr e = wait(backend, device, *q);
  if (!e) return;
  std::lock_guard lock(queues().mutex);
  if (!q->kept) q->kept = e;
}

void wait_for_all() {
  std::vector<std::pair<Backend*, int>> keys;
  {
    std::lock_guard lock(queues().mutex);
    for (const auto& [key, q] : queues().devices) keys.push_back(key);
  }
  // Every device is waited for; the first error is raised after all of them.
  std::exception_ptr first;
  for (auto [backend, device] : keys) {
    try {
      wait_for_device(backend, device);
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace tack::detail
