// The device registry and the default device.
#include <fmt/format.h>

#include <mutex>

#include "backends/node_local.hpp"
#include "backends/registry.hpp"
#include "runtime/internals.hpp"
#include "runtime/queue.hpp"
#include "tack/error.hpp"

namespace tack {
namespace detail {
namespace {

// A backend of backends::backend_table(), probed when first asked for: loading a driver costs
// time a process that never uses it should not pay. Even its declaration is asked for only when
// needed: a process on the CPU alone touches none of the GPU backends' code.
struct Slot {
  const backends::BackendEntry* entry = nullptr;
  std::once_flag declared_once, once;
  BackendInfo declared;  // what it declares before it is probed; under declared_once
  Probe probe;
};

struct Registry {
  std::vector<std::unique_ptr<Slot>> slots;  // in the order `tack info` lists them
  std::mutex mutex;
  Device default_device;
  Registry() {
    for (const backends::BackendEntry& e : backends::backend_table()) {
      slots.push_back(std::make_unique<Slot>());
      slots.back()->entry = &e;
    }
    default_device = probed(*slots.front()).backend->device(0);  // the CPU (registry.cpp)
  }
  const BackendInfo& declared(Slot& s) {
    std::call_once(s.declared_once, [&] { s.declared = s.entry->declared_info(); });
    return s.declared;
  }
  const Probe& probed(Slot& s) {
    std::call_once(s.once, [&] { s.probe = s.entry->probe(); });
    return s.probe;
  }
  Slot* find(const std::string& name) {
    for (auto& s : slots)
      if (name == s->entry->name) return s.get();
    return nullptr;
  }
};

Registry& registry() {
  static Registry* r = new Registry();  // leaked: arrays may be freed during static destruction
  return *r;
}

std::string unavailable_reason(const std::string& name) {
  return registry().probed(*registry().find(name)).reason;
}

// The index after "backend:" in a device name.
int parse_device_index(const std::string& spec, size_t colon) {
  try {
    size_t used = 0;
    const int index = std::stoi(spec.substr(colon + 1), &used);
    if (used != spec.size() - colon - 1 || index < 0) throw std::invalid_argument(spec);
    return index;
  } catch (const std::logic_error&) {
    throw ValueError(
        fmt::format("'{}' is not a device: write a backend name with an optional index or "
                    "'local', e.g. 'cpu', 'cuda:1' or 'cuda:local'",
                    spec));
  }
}

}  // namespace

Buffer::~Buffer() {
  if (!ptr) return;
  wait_before_free(backend, device);
  if (owned)
    backend->release(device, ptr);
  else
    backend->unwrap(device, ptr);
}

Backend* find_backend(const std::string& name) {
  Slot* s = registry().find(name);
  return s ? registry().probed(*s).backend.get() : nullptr;
}

std::vector<const BackendInfo*> declared_backends() {
  std::vector<const BackendInfo*> out;
  for (const auto& s : registry().slots) out.push_back(&registry().declared(*s));
  return out;
}

}  // namespace detail

const std::string& Device::type() const {
  return backend().name;
}
std::string Device::name() const {
  return fmt::format("{}:{}", type(), index_);
}
const BackendInfo& Device::backend() const {
  if (!backend_) return detail::registry().default_device.backend();
  return backend_->info();
}

Device device(const std::string& spec) {
  std::string name = spec;
  int index = 0;
  bool local = false;
  if (auto colon = spec.find(':'); colon != std::string::npos) {
    name = spec.substr(0, colon);
    local = spec.compare(colon + 1, std::string::npos, "local") == 0;
    if (!local) index = detail::parse_device_index(spec, colon);
  }
  if (!detail::registry().find(name)) {
    std::string names;
    for (const BackendInfo* b : detail::declared_backends())
      names += (names.empty() ? "" : ", ") + b->name;
    throw ValueError(fmt::format("'{}' is not a backend: use one of {}", name, names));
  }
  detail::Backend* b = detail::find_backend(name);
  if (!b) throw DeviceError(detail::unavailable_reason(name));
  // One device per process of the node: the node-local rank, round robin when a node runs more
  // processes than it has devices; 0 for a process no launcher started.
  if (local && b->device_count() > 0)
    index = detail::node_local_rank().value_or(0) % b->device_count();
  if (index >= b->device_count())
    throw DeviceError(fmt::format("there is no device {}: the {} backend has {} device{}", spec,
                                  name, b->device_count(), b->device_count() == 1 ? "" : "s"));
  return b->device(index);
}

Device local_device(const std::string& kind) {
  return device(kind + ":local");
}

std::optional<int> local_rank() {
  return detail::node_local_rank();
}

std::optional<int> local_size() {
  return detail::node_local_size();
}

std::vector<Device> devices() {
  std::vector<Device> out;
  for (const BackendInfo* declared : detail::declared_backends())
    if (detail::Backend* b = detail::find_backend(declared->name))
      for (int i = 0; i < b->device_count(); ++i) out.push_back(b->device(i));
  return out;
}

void set_default_device(const Device& d) {
  std::lock_guard lock(detail::registry().mutex);
  detail::registry().default_device = d;
}
void set_default_device(const std::string& name) {
  set_default_device(device(name));
}

Device get_default_device() {
  std::lock_guard lock(detail::registry().mutex);
  return detail::registry().default_device;
}

const BackendInfo& get_backend() {
  return get_default_device().backend();
}

std::vector<BackendStatus> backend_status() {
  std::vector<BackendStatus> out;
  for (const BackendInfo* declared : detail::declared_backends()) {
    BackendStatus s;
    s.name = declared->name;
    s.available = detail::find_backend(s.name) != nullptr;
    if (!s.available) s.reason = detail::unavailable_reason(s.name);
    out.push_back(s);
  }
  return out;
}

}  // namespace tack
