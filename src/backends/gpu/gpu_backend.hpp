// What the five GPU backends (CUDA, HIP, Level Zero, Metal, OpenCL) do alike, written once above
// their vendor calls: devices started on first use, the entry lookup, the kernel's arguments
// flattened in the generated code's order (codegen/c_family/c_generator.hpp), the grid and its
// limits, the one-thread result entry and the read-back of its value, and the generated source.
//
// A GPU backend implements the contract's memory calls, compile() and cache_target(), and these
// vendor calls: start a device, load a module, find an entry, enqueue dispatches.
#pragma once

#include <climits>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "backends/backend.hpp"

namespace tack::backends {

// A GPU device; each backend derives its own (its handles, queues and limits).
struct GpuDevice {
  virtual ~GpuDevice() = default;
  std::string description;  // in messages: its name, architecture, driver
  std::once_flag start_once;
  std::string start_error;  // why it could not start, or ""
};

// Which entry of a module: the kernel, or `<entry>_result`, which computes its `return` value.
enum class Entry { Main, Result };

// A module loaded on one device; each backend derives its own (the module and its entries).
struct GpuCode : detail::LoadedCode {
  uint32_t default_group = 64;  // threads per group of a kernel without workgroups
  int max_group = INT_MAX;      // the most threads per group the main entry's code allows
};

// The extents of a hardware texture's f32 texels (depth 1 in 2-D), x fastest.
struct TextureShape {
  int dims = 0;
  int64_t width = 0, height = 0, depth = 1;
  friend bool operator==(const TextureShape&, const TextureShape&) = default;
};

// One argument of the generated kernel, in the order of c_generator.hpp: memory, by its address
// in the backend's space (0: none, as for a variant without a debug record), a value in the
// low `bytes` bytes of `bits`, or a hardware texture (ir::Param::texture): the handle that
// create_texture() returned, made of the texels the launch passed.
struct KernelArg {
  enum class Kind { Address, Value, Texture };
  Kind kind;
  uint64_t bits;
  uint32_t bytes;  // 8 for addresses, extents, loop bounds and handles; a scalar's dtype size
  int param;       // the IR parameter it passes (or its extent), -1 for the others
  TextureShape texture = {};  // Texture
  void* address() const { return reinterpret_cast<void*>(static_cast<uintptr_t>(bits)); }
};

// One launch of one entry: `groups` groups of `group` threads. `fixed_group`: the kernel needs
// exactly that group size (workgroups); otherwise a backend may let its runtime pick one.
struct Dispatch {
  Entry entry;
  std::vector<KernelArg> args;
  uint64_t groups;
  uint32_t group;
  bool fixed_group;
  // For messages: "the launch of 4 groups of 64 threads".
  std::string what() const;
};

// The arguments as cuLaunchKernel and hipModuleLaunchKernel take them: a pointer to each one's
// 8 bytes (a value in the low bytes).
class ArgPointers {
 public:
  explicit ArgPointers(const std::vector<KernelArg>& args);
  ArgPointers(const ArgPointers&) = delete;
  ArgPointers& operator=(const ArgPointers&) = delete;
  void** data() { return pointers_.data(); }

 private:
  std::vector<uint64_t> values_;
  std::vector<void*> pointers_;
};

class GpuBackend : public detail::Backend {
 public:
  int device_count() const final { return static_cast<int>(devices_.size()); }
  // Starts the device, loads the module (load_module) and finds its entries (find_entry).
  std::unique_ptr<detail::LoadedCode> load(const std::string& artifact, const ir::Kernel& k,
                                           const detail::CompileOptions& options, int device,
                                           const std::string& stored_at) final;
  // Checks the group size against the code, flattens the arguments, sizes the grid and queues
  // the main entry; for a `return` value also the result entry, then waits and reads the value.
  void launch(detail::LoadedCode& code, const ir::Kernel& k, const detail::LaunchArgs& args,
              int device) final;
  // The generated source, what compile() compiles.
  std::string emit(const ir::Kernel& k, const detail::CompileOptions& options, bool) final {
    return source(k, options);
  }
  // Marks the textures made of `data` stale: refilled before the next launch that samples them.
  void texels_changed(int device, const void* data) final;

 protected:
  // `max_groups`: the most groups one launch may have; kNoGroupLimit where the vendor's grid has
  // no limit of its own (the product of groups and a group size still fits 64 bits).
  static constexpr uint64_t kNoGroupLimit = UINT64_MAX / UINT32_MAX;
  GpuBackend(BackendInfo info, std::vector<std::unique_ptr<GpuDevice>> devices,
             uint64_t max_groups);

  // ---- vendor calls ----

  // Starts `device` (its context, queue...), once: "" or why it cannot start.
  virtual std::string start(int device, GpuDevice& d) { return ""; }
  // Before every use of a started device (CUDA's and HIP's current device are per thread).
  virtual void make_current(int device, GpuDevice& d) {}
  // The module of `artifact` on a started device. Throws DeviceError when the artifact is
  // malformed or refused.
  virtual std::unique_ptr<GpuCode> load_module(const std::string& artifact, const ir::Kernel& k,
                                               const detail::CompileOptions& options,
                                               int device) = 0;
  // Finds entry `name` of `code` and keeps it as `which` (the main entry also sets the code's
  // group sizes): "" when found, else why not.
  virtual std::string find_entry(GpuCode& code, const std::string& name, Entry which,
                                 int device) = 0;
  // Queues `dispatches` in order on `device`; throws DeviceError when one cannot be queued.
  virtual void enqueue(GpuCode& code, int device, const std::vector<Dispatch>& dispatches,
                       const ir::Kernel& k) = 0;

  // Hardware textures, for a backend that declares supports_hardware_textures: a texture (image)
  // of `shape` f32 texels, normalized coordinates, clamp-to-edge addressing and linear filtering
  // where the sampler lives in it, filled from the device memory at `texels` (queued in order
  // after the work before it); its handle as the kernel argument's 8 bytes. Throws DeviceError.
  virtual uint64_t create_texture(int device, const void* texels, const TextureShape& shape);
  // Copies the texels at `texels` into texture `handle` again, queued in order.
  virtual void refill_texture(int device, uint64_t handle, const void* texels,
                              const TextureShape& shape);
  // Releases a texture once the work queued before has run.
  virtual void destroy_texture(int device, uint64_t handle) {}

  // ---- for the backends ----

  // The device, started (once) and made current.
  GpuDevice& started(int device);
  template <typename D>
  D& started_as(int device) {
    return static_cast<D&>(started(device));
  }
  // The device, whether or not it has started.
  template <typename D>
  D& device_as(int device) const {
    return static_cast<D&>(*devices_.at(device));
  }
  // The generated source of `k` for this backend (DeviceError naming the backend when the
  // generator refuses it for this target).
  std::string source(const ir::Kernel& k, const detail::CompileOptions& options) const;
  // The backend's release() calls it first: destroys the textures made of the memory at `ptr`.
  void release_textures(int device, const void* ptr);
  // Fills `count` copies of a pattern with copies from the host, for the widths the vendor has
  // no memset of.
  void fill_by_copies(int device, void* dst, const void* pattern, size_t pattern_bytes,
                      size_t count);

  template <typename D>
  static std::vector<std::unique_ptr<GpuDevice>> gpu_devices(std::vector<std::unique_ptr<D>> v) {
    return {std::make_move_iterator(v.begin()), std::make_move_iterator(v.end())};
  }

 private:
  // The handles of the textures that launches passed, made once per texel memory and refilled
  // after texels_changed(); `textures_mutex_` guards the map.
  struct TextureEntry {
    uint64_t handle = 0;
    TextureShape shape;
    bool stale = false;
  };
  void resolve_textures(int device, std::vector<KernelArg>& args);

  std::vector<std::unique_ptr<GpuDevice>> devices_;
  uint64_t max_groups_;
  std::mutex textures_mutex_;
  std::map<std::pair<int, const void*>, TextureEntry> textures_;
};

// The threads a GPU backend launches for the main entry: one per iteration, or in a kernel with
// reductions one per lane of every block of ir::Reduction's order.
uint64_t launch_threads(const ir::Kernel& k, const detail::LaunchArgs& a);

// What a GPU backend declares: every dtype (f64 when `fp64`), the atomic dtypes, workgroups up to
// `max_group` threads, asynchronous launches, reductions on the host.
BackendInfo gpu_info(BackendInfo declared, bool fp64, std::set<DType> atomic_dtypes, int max_group);

}  // namespace tack::backends
