// The device registry and the default device.
#include <fmt/format.h>
#include <mutex>

#include "backends/cpu/cpu_backend.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/hip/hip_backend.hpp"
#include "backends/level_zero/level_zero_backend.hpp"
#include "backends/opencl/opencl_backend.hpp"
#ifdef TACK_HAVE_METAL
#include "backends/metal/metal_backend.hpp"
#endif
#include "runtime/backend.hpp"
#include "runtime/node_local.hpp"
#include "runtime/queue.hpp"
#include "tack/error.hpp"

namespace tack {
namespace detail {
namespace {

// Backends Tack knows, in the order `tack info` lists them. Those not built into this version
// say so, rather than failing obscurely.
const char* const kKnownBackends[] = {"cpu", "cuda", "hip", "level_zero", "metal", "opencl"};

struct Registry {
  std::unique_ptr<Backend> cpu = cpu::make_cpu_backend();
  std::mutex mutex;
  Device default_device = cpu->device(0);
  // GPU backends are probed when first asked for: loading a driver costs time a CPU-only
  // process should not pay.
  std::once_flag opencl_once, cuda_once, hip_once, level_zero_once;
  opencl::Probe opencl;
  cuda::Probe cuda;
  hip::Probe hip;
  level_zero::Probe level_zero;
#ifdef TACK_HAVE_METAL
  std::once_flag metal_once;
  metal::Probe metal;
#endif
};

Registry& registry() {
  static Registry* r = new Registry();  // leaked: arrays may be freed during static destruction
  return *r;
}

const opencl::Probe& opencl_probe() {
  Registry& r = registry();
  std::call_once(r.opencl_once, [&] { r.opencl = opencl::make_opencl_backend(); });
  return r.opencl;
}

const cuda::Probe& cuda_probe() {
  Registry& r = registry();
  std::call_once(r.cuda_once, [&] { r.cuda = cuda::make_cuda_backend(); });
  return r.cuda;
}

const hip::Probe& hip_probe() {
  Registry& r = registry();
  std::call_once(r.hip_once, [&] { r.hip = hip::make_hip_backend(); });
  return r.hip;
}

const level_zero::Probe& level_zero_probe() {
  Registry& r = registry();
  std::call_once(r.level_zero_once, [&] { r.level_zero = level_zero::make_level_zero_backend(); });
  return r.level_zero;
}

#ifdef TACK_HAVE_METAL
const metal::Probe& metal_probe() {
  Registry& r = registry();
  std::call_once(r.metal_once, [&] { r.metal = metal::make_metal_backend(); });
  return r.metal;
}
#endif

std::string unavailable_reason(const std::string& name) {
  if (name == "opencl") return opencl_probe().reason;
  if (name == "cuda") return cuda_probe().reason;
  if (name == "hip") return hip_probe().reason;
  if (name == "level_zero") return level_zero_probe().reason;
#ifdef TACK_HAVE_METAL
  if (name == "metal") return metal_probe().reason;
#else
  if (name == "metal")
    return "the Metal backend is built only on Apple platforms (macOS); this build is not one";
#endif
  return fmt::format(
      "the {} backend is not part of this build of Tack yet; the CPU backend "
      "('cpu') is",
      name);
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
  if (name == "cpu") return registry().cpu.get();
  if (name == "opencl") return opencl_probe().backend.get();
  if (name == "cuda") return cuda_probe().backend.get();
  if (name == "hip") return hip_probe().backend.get();
  if (name == "level_zero") return level_zero_probe().backend.get();
#ifdef TACK_HAVE_METAL
  if (name == "metal") return metal_probe().backend.get();
#endif
  return nullptr;
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
  bool known = false;
  for (const char* k : detail::kKnownBackends) known |= name == k;
  if (!known)
    throw ValueError(
        fmt::format("'{}' is not a backend: use one of cpu, cuda, hip, level_zero, "
                    "metal, opencl",
                    name));
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
  for (const char* k : detail::kKnownBackends)
    if (detail::Backend* b = detail::find_backend(k))
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
  for (const char* k : detail::kKnownBackends) {
    BackendStatus s;
    s.name = k;
    s.available = detail::find_backend(k) != nullptr;
    if (!s.available) s.reason = detail::unavailable_reason(k);
    out.push_back(s);
  }
  return out;
}

}  // namespace tack
