#include "backends/gpu/gpu_backend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "backends/gpu/artifact.hpp"
#include "tack/error.hpp"

namespace tack::backends {
namespace {

// The arguments of the generated kernel for launch `a`, in the order of c_generator.hpp.
std::vector<KernelArg> kernel_args(const ir::Kernel& k, const detail::LaunchArgs& a) {
  using K = KernelArg::Kind;
  std::vector<KernelArg> out;
  for (size_t p = 0; p < k.params.size(); ++p) {
    const ir::Param& param = k.params[p];
    const int index = static_cast<int>(p);
    if (param.is_local_array()) continue;  // declared in the kernel; no launch passes it
    if (param.texture) {
      // The texels' address, which resolve_textures() replaces with the texture's handle.
      const int64_t* s = a.params[p].shape;  // (depth,) height, width
      TextureShape shape{param.type.rank, s[param.type.rank - 1], s[param.type.rank - 2],
                         param.type.rank == 3 ? s[0] : 1};
      out.push_back({K::Texture, reinterpret_cast<uintptr_t>(a.params[p].data), 8, index, shape});
    } else if (param.type.is_array()) {
      out.push_back({K::Address, reinterpret_cast<uintptr_t>(a.params[p].data), 8, index});
      for (int d = 0; d < param.type.rank; ++d)
        out.push_back({K::Value, static_cast<uint64_t>(a.params[p].shape[d]), 8, index});
    } else {
      out.push_back({K::Value, a.params[p].scalar,
                     static_cast<uint32_t>(dtype_size(param.type.dtype)), index});
    }
  }
  for (size_t d = 0; d < k.dims.size(); ++d)
    for (int64_t v : {a.start[d], a.step[d], a.count[d]})
      out.push_back({K::Value, static_cast<uint64_t>(v), 8, -1});
  out.push_back({K::Address, reinterpret_cast<uintptr_t>(a.debug_record), 8, -1});
  return out;
}

}  // namespace

std::string Dispatch::what() const {
  if (entry == Entry::Result) return "the entry that computes its return value";
  return fmt::format("the launch of {} group{} of {} threads", groups, groups == 1 ? "" : "s",
                     group);
}

ArgPointers::ArgPointers(const std::vector<KernelArg>& args) {
  for (const KernelArg& a : args) values_.push_back(a.bits);
  for (uint64_t& v : values_) pointers_.push_back(&v);
}

GpuBackend::GpuBackend(BackendInfo info, std::vector<std::unique_ptr<GpuDevice>> devices,
                       uint64_t max_groups)
    : Backend(std::move(info)), devices_(std::move(devices)), max_groups_(max_groups) {}

GpuDevice& GpuBackend::started(int device) {
  GpuDevice& d = *devices_.at(device);
  std::call_once(d.start_once, [&] { d.start_error = start(device, d); });
  if (!d.start_error.empty()) throw DeviceError(d.start_error);
  make_current(device, d);
  return d;
}

std::unique_ptr<detail::LoadedCode> GpuBackend::load(const std::string& artifact,
                                                     const ir::Kernel& k,
                                                     const detail::CompileOptions& o, int device,
                                                     const std::string& /*stored_at*/) {
  started(device);
  std::unique_ptr<GpuCode> code = load_module(artifact, k, o, device);
  auto entry = [&](const std::string& name, Entry which) {
    if (std::string why = find_entry(*code, name, which, device); !why.empty())
      throw DeviceError(fmt::format("kernel '{}': the compiled {} code has no entry '{}': {}",
                                    k.name, info().label, name, why));
  };
  entry(o.symbol_prefix, Entry::Main);
  if (k.result) entry(o.symbol_prefix + "_result", Entry::Result);
  return code;
}

void GpuBackend::launch(detail::LoadedCode& base, const ir::Kernel& k, const detail::LaunchArgs& a,
                        int device) {
  auto& code = static_cast<GpuCode&>(base);
  const GpuDevice& d = started(device);
  if (k.workgroup_size > code.max_group)
    throw DeviceError(fmt::format(
        "kernel '{}' runs in workgroups of {} threads, but its code on {} device {} ({}) allows "
        "at most {} threads per group: run it on another backend",
        k.name, k.workgroup_size, info().label, device, d.description, code.max_group));
  std::vector<KernelArg> args = kernel_args(k, a);
  resolve_textures(device, args);
  std::vector<Dispatch> dispatches;
  if (uint64_t total = launch_threads(k, a); total > 0) {
    // Threads past the total return at once: whole groups.
    uint32_t group =
        k.workgroup_size > 0 ? static_cast<uint32_t>(k.workgroup_size) : code.default_group;
    uint64_t groups = (total + group - 1) / group;
    if (groups > max_groups_)
      throw ValueError(fmt::format(
          "kernel '{}': {} iterations need {} groups of {} threads, more than {} launches at "
          "once ({})",
          k.name, total, groups, group, info().label, max_groups_));
    dispatches.push_back({Entry::Main, args, groups, group, k.workgroup_size > 0});
  }
  if (!k.result || !a.result) {
    enqueue(code, device, dispatches, k);
    return;
  }
  // One thread computes the value after the main entry has run, into 8 bytes of device memory
  // that the host reads once the device has finished.
  void* out = nullptr;
  try {
    out = allocate(device, 8);
  } catch (const DeviceError& e) {
    throw DeviceError(fmt::format("kernel '{}': no {} memory for its return value: {}", k.name,
                                  info().label, e.what()));
  }
  struct Release {
    GpuBackend& backend;
    int device;
    void* out;
    ~Release() { backend.release(device, out); }
  } release_out{*this, device, out};
  args.push_back({KernelArg::Kind::Address, reinterpret_cast<uintptr_t>(out), 8, -1});
  dispatches.push_back({Entry::Result, std::move(args), 1, 1, false});
  enqueue(code, device, dispatches, k);
  try {
    synchronize(device);
    copy_to_host(device, a.result, out, 8);
  } catch (const DeviceError& e) {
    throw DeviceError(
        fmt::format("kernel '{}': computing its return value failed: {}", k.name, e.what()));
  }
}

void GpuBackend::resolve_textures(int device, std::vector<KernelArg>& args) {
  std::lock_guard lock(textures_mutex_);
  for (KernelArg& a : args) {
    if (a.kind != KernelArg::Kind::Texture) continue;
    const void* texels = a.address();
    auto it = textures_.find({device, texels});
    if (it != textures_.end() && it->second.shape != a.texture) {
      destroy_texture(device, it->second.handle);
      textures_.erase(it);
      it = textures_.end();
    }
    if (it == textures_.end()) {
      TextureEntry e{create_texture(device, texels, a.texture), a.texture, false};
      it = textures_.emplace(std::make_pair(device, texels), e).first;
    } else if (it->second.stale) {
      refill_texture(device, it->second.handle, texels, a.texture);
      it->second.stale = false;
    }
    a.bits = it->second.handle;
  }
}

void GpuBackend::texels_changed(int device, const void* data) {
  std::lock_guard lock(textures_mutex_);
  if (auto it = textures_.find({device, data}); it != textures_.end()) it->second.stale = true;
}

void GpuBackend::release_textures(int device, const void* ptr) {
  std::lock_guard lock(textures_mutex_);
  if (auto it = textures_.find({device, ptr}); it != textures_.end()) {
    destroy_texture(device, it->second.handle);
    textures_.erase(it);
  }
}

uint64_t GpuBackend::create_texture(int, const void*, const TextureShape&) {
  throw DeviceError(fmt::format("{} has no hardware textures in this build", info().label));
}

void GpuBackend::refill_texture(int, uint64_t, const void*, const TextureShape&) {
  throw DeviceError(fmt::format("{} has no hardware textures in this build", info().label));
}

std::string GpuBackend::source(const ir::Kernel& k, const detail::CompileOptions& o) const {
  return generated_source(k, info().name, info().label, o.symbol_prefix);
}

void GpuBackend::fill_by_copies(int device, void* dst, const void* pattern, size_t pattern_bytes,
                                size_t count) {
  constexpr size_t kChunk = 1 << 16;  // elements per copy
  std::vector<unsigned char> block(std::min(count, kChunk) * pattern_bytes);
  for (size_t i = 0; i * pattern_bytes < block.size(); ++i)
    std::memcpy(block.data() + i * pattern_bytes, pattern, pattern_bytes);
  for (size_t done = 0; done < count; done += kChunk)
    copy_from_host(device, static_cast<unsigned char*>(dst) + done * pattern_bytes, block.data(),
                   std::min(kChunk, count - done) * pattern_bytes);
}

uint64_t launch_threads(const ir::Kernel& k, const detail::LaunchArgs& a) {
  uint64_t total = 1;
  for (int64_t c : a.count) total *= static_cast<uint64_t>(c > 0 ? c : 0);
  if (!k.reductions.empty()) total = ir::reduction_partials(static_cast<int64_t>(total));
  return total;
}

BackendInfo gpu_info(BackendInfo declared, bool fp64, std::set<DType> atomic_dtypes,
                     int max_group) {
  BackendInfo i = std::move(declared);
  for (DType t : kAllDTypes)
    if (t != DType::F64 || fp64) i.supported_dtypes.insert(t);
  i.supported_atomic_dtypes = std::move(atomic_dtypes);
  // tack.algorithms runs its reductions as the language's scalar reductions, which every GPU
  // target compiles.
  i.supports_device_reductions = true;
  i.supports_workgroups = true;
  i.max_workgroup_size = max_group;
  i.asynchronous = true;
  return i;
}

}  // namespace tack::backends
