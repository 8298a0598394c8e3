#include "backends/opencl/opencl_backend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <set>
#include <unordered_map>
#include <vector>

#include "backends/gpu/address_map.hpp"
#include "backends/gpu/artifact.hpp"
#include "backends/gpu/gpu_backend.hpp"
#include "backends/opencl/cl_api.hpp"
#include "codegen/c_family/c_generator.hpp"
#include "tack/error.hpp"

namespace tack::opencl {
namespace {

// Addresses. A cl_mem is a handle, not an address, but the runtime adds byte offsets to a
// buffer's address (views) and compares address ranges (the no-alias check). So each allocation
// gets a range of its own in a made-up address space that is never dereferenced; an address
// resolves to (cl_mem, offset). Ranges are never reused, and a gap follows each one.
constexpr uintptr_t kFirstAddress = uintptr_t{1} << 44;
constexpr uintptr_t kPage = 4096;

struct Memory {
  cl_mem mem = nullptr;
  int device = 0;
  bool wrapped = false;  // CL_MEM_USE_HOST_PTR over memory Tack does not own
};

struct DeviceState : backends::GpuDevice {
  cl_platform_id platform = nullptr;
  cl_device_id id = nullptr;
  bool fp64 = false;
  bool int64_atomics = false;
  bool correctly_rounded_sqrt = false;
  size_t max_group = 1;
  size_t base_align = 128;  // bytes: where a sub-buffer may start
  // CL_DEVICE_IMAGE_SUPPORT, and the largest images (width, height[, depth]).
  bool images = false;
  size_t image2d_max[2] = {0, 0}, image3d_max[3] = {0, 0, 0};
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  // Wrapped host memory that launches used since the last synchronization (guarded by the
  // backend's mutex): read back into the host memory there.
  std::set<cl_mem> wrapped_in_use;
};

struct OpenClCode : backends::GpuCode {
  const ClApi* cl = nullptr;
  cl_program program = nullptr;
  cl_kernel kernel = nullptr;
  cl_kernel result = nullptr;  // `<entry>_result`, kernels with a `return` value
  std::mutex mutex;            // arguments are set on the kernel object, then queued
  ~OpenClCode() override {
    if (result) cl->ReleaseKernel(result);
    if (kernel) cl->ReleaseKernel(kernel);
    if (program) cl->ReleaseProgram(program);
  }
};

// A string that `get(size, value, size_ret)` (clGet*Info of one object and property) answers.
template <typename Get>
std::string info_string(Get get) {
  size_t n = 0;
  if (get(0, nullptr, &n) != CL_SUCCESS || n == 0) return "";
  std::string s(n, '\0');
  get(n, s.data(), nullptr);
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

std::string device_string(const ClApi& cl, cl_device_id d, cl_device_info what) {
  return info_string(
      [&](size_t n, void* v, size_t* r) { return cl.GetDeviceInfo(d, what, n, v, r); });
}

std::string platform_string(const ClApi& cl, cl_platform_id p, cl_platform_info what) {
  return info_string(
      [&](size_t n, void* v, size_t* r) { return cl.GetPlatformInfo(p, what, n, v, r); });
}

template <typename T>
T device_value(const ClApi& cl, cl_device_id d, cl_device_info what) {
  T v{};
  cl.GetDeviceInfo(d, what, sizeof v, &v, nullptr);
  return v;
}

// The artifact in the disk cache: the program binary, and the source to build when the binary
// is refused. "tack-opencl 1\n", then the binary's and the source's sizes (8 bytes each), then
// both.
constexpr char kArtifactMagic[] = "tack-opencl 1\n";

// The group size of kernels without workgroup primitives (threads past the count return).
constexpr uint32_t kDefaultGroup = 64;

class OpenClBackend final : public backends::GpuBackend {
 public:
  OpenClBackend(ClApi cl, std::vector<std::unique_ptr<DeviceState>> devices, BackendInfo info)
      : GpuBackend(std::move(info), gpu_devices(std::move(devices)), kNoGroupLimit), cl_(cl) {}

  // ---- memory ----

  void* allocate(int device, size_t bytes) override {
    DeviceState& d = started_as<DeviceState>(device);
    cl_int err = CL_SUCCESS;
    cl_mem mem =
        cl_.CreateBuffer(d.context, CL_MEM_READ_WRITE, std::max<size_t>(bytes, 64), nullptr, &err);
    if (!mem)
      throw DeviceError(fmt::format("OpenCL device {} cannot allocate {} bytes: {}", device, bytes,
                                    error_name(err)));
    return remember(bytes, Memory{mem, device, false});
  }

  void release(int device, void* ptr) override {
    release_textures(device, ptr);
    forget(ptr);
  }

  void* wrap(int device, void* ptr, size_t bytes) override {
    DeviceState& d = started_as<DeviceState>(device);
    cl_int err = CL_SUCCESS;
    cl_mem mem = cl_.CreateBuffer(d.context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR,
                                  std::max<size_t>(bytes, 1), ptr, &err);
    if (!mem)
      throw DeviceError(fmt::format("OpenCL device {} cannot use {} bytes of host memory at {}: {}",
                                    device, bytes, ptr, error_name(err)));
    return remember(bytes, Memory{mem, device, true});
  }

  void unwrap(int device, void* address) override { forget(address); }

  bool owns(const void* address) override {
    auto found = memory_.find(address);
    return found && !found->handle.wrapped && memory_.contains(address);
  }

  void copy_to_host(int device, void* dst, const void* src, size_t n) override {
    if (n == 0) return;
    auto [mem, offset] = resolve(src);
    check(cl_.EnqueueReadBuffer(queue(device), mem, CL_TRUE, offset, n, dst, 0, nullptr, nullptr),
          "reading a buffer");
  }
  void copy_from_host(int device, void* dst, const void* src, size_t n) override {
    if (n == 0) return;
    auto [mem, offset] = resolve(dst);
    // Blocking: the caller's host memory may go away when this returns.
    check(cl_.EnqueueWriteBuffer(queue(device), mem, CL_TRUE, offset, n, src, 0, nullptr, nullptr),
          "writing a buffer");
  }
  void copy_on_device(int device, void* dst, const void* src, size_t n) override {
    if (n == 0) return;
    auto [dmem, doff] = resolve(dst);
    auto [smem, soff] = resolve(src);
    check(cl_.EnqueueCopyBuffer(queue(device), smem, dmem, soff, doff, n, 0, nullptr, nullptr),
          "copying a buffer");
  }
  void fill(int device, void* dst, const void* pattern, size_t pattern_bytes,
            size_t count) override {
    if (count == 0) return;
    auto [mem, offset] = resolve(dst);
    check(cl_.EnqueueFillBuffer(queue(device), mem, pattern, pattern_bytes, offset,
                                pattern_bytes * count, 0, nullptr, nullptr),
          "filling a buffer");
  }

  // ---- code ----

  std::string cache_target(int device) override {
    const DeviceState& d = device_as<DeviceState>(device);
    return fmt::format("{}; build options {}", d.description, build_options(d));
  }

  std::string compile(const ir::Kernel& k, const detail::CompileOptions& o, int device) override {
    DeviceState& d = started_as<DeviceState>(device);
    std::string text = source(k, o);
    cl_program program = build_from_source(d, k, text);
    size_t size = 0;
    std::string binary;
    if (cl_.GetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) ==
            CL_SUCCESS &&
        size > 0) {
      binary.resize(size);
      unsigned char* where = reinterpret_cast<unsigned char*>(binary.data());
      if (cl_.GetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof where, &where, nullptr) !=
          CL_SUCCESS)
        binary.clear();
    }
    std::string artifact = backends::pack_pair(kArtifactMagic, binary, text);
    std::lock_guard lock(mutex_);
    just_built_[o.symbol_prefix] = program;  // load() takes it instead of building it again
    return artifact;
  }

  void synchronize(int device) override {
    DeviceState& d = device_as<DeviceState>(device);
    if (!d.queue) return;
    check(cl_.Finish(d.queue), "finishing queued work");
    // Wrapped host memory (CL_MEM_USE_HOST_PTR) that launches used is current on the host only
    // after a map: a device with memory of its own copies its data back then.
    std::set<cl_mem> used;
    {
      std::lock_guard lock(mutex_);
      used.swap(d.wrapped_in_use);
    }
    for (cl_mem mem : used) {
      size_t bytes = 0;
      check(cl_.GetMemObjectInfo(mem, CL_MEM_SIZE, sizeof bytes, &bytes, nullptr),
            "asking a buffer's size");
      cl_int err = CL_SUCCESS;
      void* p = cl_.EnqueueMapBuffer(d.queue, mem, CL_TRUE, CL_MAP_READ, 0, bytes, 0, nullptr,
                                     nullptr, &err);
      check(err, "mapping wrapped host memory");
      check(cl_.EnqueueUnmapMemObject(d.queue, mem, p, 0, nullptr, nullptr),
            "unmapping wrapped host memory");
      cl_.ReleaseMemObject(mem);  // retained by push_wrapped
    }
    if (!used.empty()) check(cl_.Finish(d.queue), "finishing queued work");
  }

 private:
  // ---- the GPU layer's vendor calls ----

  std::string start(int device, backends::GpuDevice& base) override {
    auto& d = static_cast<DeviceState&>(base);
    cl_int err = CL_SUCCESS;
    d.context = cl_.CreateContext(nullptr, 1, &d.id, nullptr, nullptr, &err);
    if (d.context) d.queue = cl_.CreateCommandQueue(d.context, d.id, 0, &err);  // in order
    if (d.queue) return "";
    return fmt::format("OpenCL device {} ({}) has no context or queue: {}", device, d.description,
                       error_name(err));
  }

  std::unique_ptr<backends::GpuCode> load_module(const std::string& artifact, const ir::Kernel& k,
                                                 const detail::CompileOptions& o,
                                                 int device) override {
    DeviceState& d = device_as<DeviceState>(device);
    auto code = std::make_unique<OpenClCode>();
    code->cl = &cl_;
    code->default_group = kDefaultGroup;
    code->max_group = static_cast<int>(std::min<size_t>(d.max_group, INT_MAX));
    {
      std::lock_guard lock(mutex_);
      if (auto it = just_built_.find(o.symbol_prefix); it != just_built_.end()) {
        code->program = it->second;
        just_built_.erase(it);
      }
    }
    if (!code->program) {
      std::string binary, text;
      if (!backends::unpack_pair(kArtifactMagic, artifact, binary, text))
        throw DeviceError(
            fmt::format("kernel '{}': the cached OpenCL program is malformed", k.name));
      code->program = build_from_binary(d, binary);
      if (!code->program) code->program = build_from_source(d, k, text);  // the binary was refused
    }
    return code;
  }

  std::string find_entry(backends::GpuCode& base, const std::string& name, backends::Entry which,
                         int) override {
    auto& code = static_cast<OpenClCode&>(base);
    cl_int err = CL_SUCCESS;
    cl_kernel kernel = cl_.CreateKernel(code.program, name.c_str(), &err);
    (which == backends::Entry::Main ? code.kernel : code.result) = kernel;
    return kernel ? "" : error_name(err);
  }

  void enqueue(backends::GpuCode& base, int device, const std::vector<backends::Dispatch>& ds,
               const ir::Kernel& k) override {
    auto& code = static_cast<OpenClCode&>(base);
    cl_command_queue q = queue(device);
    std::lock_guard lock(code.mutex);
    std::vector<cl_mem> sub_buffers;  // views that start inside a buffer, released once queued
    struct ReleaseSubBuffers {
      const ClApi& cl;
      std::vector<cl_mem>& mems;
      ~ReleaseSubBuffers() {
        for (cl_mem m : mems) cl.ReleaseMemObject(m);
      }
    } release_sub_buffers{cl_, sub_buffers};
    // The cl_mem of each array, found once for all the dispatches of the launch.
    std::vector<cl_mem> array_mems(k.params.size(), nullptr);
    if (!ds.empty())
      for (const backends::KernelArg& a : ds.front().args)
        if (a.kind == backends::KernelArg::Kind::Address && a.param >= 0) {
          array_mems[a.param] =
              mem_for_kernel(k, k.params[a.param], a.address(), device, sub_buffers);
          push_wrapped(a.address(), device);
        }
    for (const backends::Dispatch& dispatch : ds) {
      cl_kernel kernel = dispatch.entry == backends::Entry::Main ? code.kernel : code.result;
      cl_uint slot = 0;
      for (const backends::KernelArg& a : dispatch.args) {
        cl_int err = CL_SUCCESS;
        if (a.kind == backends::KernelArg::Kind::Value) {
          err = cl_.SetKernelArg(kernel, slot, a.bytes, &a.bits);  // the low bytes
        } else if (a.kind == backends::KernelArg::Kind::Texture) {
          cl_mem image = reinterpret_cast<cl_mem>(static_cast<uintptr_t>(a.bits));
          err = cl_.SetKernelArg(kernel, slot, sizeof(cl_mem), &image);
        } else {
          cl_mem mem = a.param >= 0 ? array_mems[a.param]
                       : a.bits     ? resolve(a.address()).first
                                    : nullptr;
          err = cl_.SetKernelArg(kernel, slot, sizeof(cl_mem), mem ? &mem : nullptr);
        }
        if (err != CL_SUCCESS)
          throw DeviceError(fmt::format("kernel '{}': OpenCL refused argument {}: {}", k.name, slot,
                                        error_name(err)));
        ++slot;
      }
      size_t global = static_cast<size_t>(dispatch.groups * dispatch.group);
      size_t local = dispatch.group;
      cl_int err =
          cl_.EnqueueNDRangeKernel(q, kernel, 1, nullptr, &global,
                                   dispatch.fixed_group ? &local : nullptr, 0, nullptr, nullptr);
      if (err != CL_SUCCESS)
        throw DeviceError(fmt::format("kernel '{}': OpenCL could not queue {}: {}", k.name,
                                      dispatch.what(), error_name(err)));
    }
  }

  // ---- hardware textures: a CL_R / CL_FLOAT image per texture, copied from its buffer ----

  uint64_t create_texture(int device, const void* texels,
                          const backends::TextureShape& shape) override {
    DeviceState& d = started_as<DeviceState>(device);
    const size_t* max = shape.dims == 3 ? d.image3d_max : d.image2d_max;
    size_t extents[3] = {static_cast<size_t>(shape.width), static_cast<size_t>(shape.height),
                         static_cast<size_t>(shape.depth)};
    for (int i = 0; i < shape.dims; ++i)
      if (extents[i] > max[i])
        throw ValueError(fmt::format(
            "a {}-D texture of {}x{}{} texels is larger than OpenCL device {}'s images ({}x{}{}): "
            "make it with interp=\"linear_exact\" (sampled in software, any size)",
            shape.dims, shape.width, shape.height,
            shape.dims == 3 ? fmt::format("x{}", shape.depth) : "", device, max[0], max[1],
            shape.dims == 3 ? fmt::format("x{}", max[2]) : ""));
    cl_image_format format{CL_R, CL_FLOAT};
    cl_image_desc desc{};
    desc.image_type = shape.dims == 3 ? CL_MEM_OBJECT_IMAGE3D : CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = extents[0];
    desc.image_height = extents[1];
    desc.image_depth = shape.dims == 3 ? extents[2] : 1;
    cl_int err = CL_SUCCESS;
    cl_mem image = cl_.CreateImage(d.context, CL_MEM_READ_ONLY, &format, &desc, nullptr, &err);
    if (!image)
      throw DeviceError(fmt::format("OpenCL device {} cannot make a {}-D f32 image of {}x{}x{}: {}",
                                    device, shape.dims, shape.width, shape.height, shape.depth,
                                    error_name(err)));
    uint64_t handle = reinterpret_cast<uintptr_t>(image);
    try {
      refill_texture(device, handle, texels, shape);
    } catch (...) {
      cl_.ReleaseMemObject(image);
      throw;
    }
    return handle;
  }

  void refill_texture(int device, uint64_t handle, const void* texels,
                      const backends::TextureShape& shape) override {
    auto [mem, offset] = resolve(texels);
    size_t origin[3] = {0, 0, 0};
    size_t region[3] = {static_cast<size_t>(shape.width), static_cast<size_t>(shape.height),
                        static_cast<size_t>(shape.depth)};
    check(cl_.EnqueueCopyBufferToImage(queue(device), mem,
                                       reinterpret_cast<cl_mem>(static_cast<uintptr_t>(handle)),
                                       offset, origin, region, 0, nullptr, nullptr),
          "copying texels into an image");
  }

  void destroy_texture(int, uint64_t handle) override {
    // OpenCL keeps the image alive for commands still queued.
    cl_.ReleaseMemObject(reinterpret_cast<cl_mem>(static_cast<uintptr_t>(handle)));
  }

  // ---- devices ----

  cl_command_queue queue(int device) { return started_as<DeviceState>(device).queue; }

  void check(cl_int err, const char* what) const {
    if (err != CL_SUCCESS)
      throw DeviceError(fmt::format("OpenCL: {} failed: {}", what, error_name(err)));
  }

  // ---- addresses ----

  void* remember(size_t bytes, Memory m) {
    std::lock_guard lock(mutex_);
    uintptr_t address = next_address_;
    next_address_ += (bytes + kPage - 1) / kPage * kPage + kPage;
    memory_.add(reinterpret_cast<void*>(address), bytes, m);
    return reinterpret_cast<void*>(address);
  }

  void forget(void* address) {
    // OpenCL keeps the buffer alive for commands still queued.
    if (std::optional<Memory> m = memory_.remove(address)) cl_.ReleaseMemObject(m->mem);
  }

  std::pair<cl_mem, size_t> resolve(const void* address) {
    auto found = memory_.find(address);
    if (!found) throw DeviceError(fmt::format("{} is not an address of OpenCL memory", address));
    return {found->handle.mem, found->offset};
  }

  // Before a launch that uses wrapped host memory: the host's contents are the current ones, so a
  // map for writing that discards the device's copy, then an unmap, hands them to the device (no
  // copy where the device uses host memory directly, as PoCL does).
  void push_wrapped(const void* address, int device) {
    auto found = memory_.find(address);
    if (!found || !found->handle.wrapped || found->bytes == 0) return;
    cl_mem mem = found->handle.mem;
    {
      // Kept alive until the synchronization that reads it back, even if unwrapped before.
      std::lock_guard lock(mutex_);
      if (device_as<DeviceState>(device).wrapped_in_use.insert(mem).second)
        cl_.RetainMemObject(mem);
    }
    cl_command_queue q = queue(device);
    cl_int err = CL_SUCCESS;
    void* p = cl_.EnqueueMapBuffer(q, mem, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, 0, found->bytes,
                                   0, nullptr, nullptr, &err);
    check(err, "mapping wrapped host memory");
    check(cl_.EnqueueUnmapMemObject(q, mem, p, 0, nullptr, nullptr),
          "unmapping wrapped host memory");
  }

  // The cl_mem a kernel argument receives: the buffer itself, or a sub-buffer for a view that
  // starts inside it (OpenCL allows those at the device's base address alignment only).
  cl_mem mem_for_kernel(const ir::Kernel& k, const ir::Param& param, void* address, int device,
                        std::vector<cl_mem>& sub_buffers) {
    auto found = memory_.find(address);
    if (!found) throw DeviceError(fmt::format("{} is not an address of OpenCL memory", address));
    if (found->offset == 0) return found->handle.mem;
    size_t align = device_as<DeviceState>(device).base_align;
    if (found->offset % align != 0)
      throw ValueError(fmt::format(
          "kernel '{}': array '{}' is a view that starts {} bytes into its buffer; OpenCL passes "
          "views that start at multiples of {} bytes only: pass a copy (a.copy())",
          k.name, param.name, found->offset, align));
    cl_buffer_region region{found->offset, std::max<size_t>(found->bytes - found->offset, 1)};
    cl_int err = CL_SUCCESS;
    cl_mem sub = cl_.CreateSubBuffer(found->handle.mem, CL_MEM_READ_WRITE,
                                     CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    if (!sub)
      throw DeviceError(fmt::format("kernel '{}': no OpenCL sub-buffer for the view '{}': {}",
                                    k.name, param.name, error_name(err)));
    sub_buffers.push_back(sub);
    return sub;
  }

  // ---- programs ----

  static std::string build_options(const DeviceState& d) {
    // Exact arithmetic: no -cl-fast-relaxed-math or -cl-mad-enable (the source also turns
    // FP_CONTRACT off), and correctly rounded single-precision division and sqrt.
    return d.correctly_rounded_sqrt ? "-cl-fp32-correctly-rounded-divide-sqrt" : "";
  }

  cl_program build_from_source(DeviceState& d, const ir::Kernel& k, const std::string& text) {
    const char* chars = text.c_str();
    size_t length = text.size();
    cl_int err = CL_SUCCESS;
    cl_program program = cl_.CreateProgramWithSource(d.context, 1, &chars, &length, &err);
    if (!program)
      throw DeviceError(fmt::format("kernel '{}': OpenCL could not create a program: {}", k.name,
                                    error_name(err)));
    std::string options = build_options(d);
    err = cl_.BuildProgram(program, 1, &d.id, options.c_str(), nullptr, nullptr);
    if (err != CL_SUCCESS) {
      std::string log = build_log(d, program);
      cl_.ReleaseProgram(program);
      throw DeviceError(fmt::format(
          "kernel '{}': OpenCL could not build the generated program ({}); this is a bug in "
          "Tack's OpenCL C generator, please report it with `tack emit --backend opencl`. Build "
          "log:\n{}",
          k.name, error_name(err), log));
    }
    return program;
  }

  // A program from a cached binary, or null when the device refuses it.
  cl_program build_from_binary(DeviceState& d, const std::string& binary) {
    if (binary.empty()) return nullptr;
    const unsigned char* bytes = reinterpret_cast<const unsigned char*>(binary.data());
    size_t length = binary.size();
    cl_int status = CL_SUCCESS, err = CL_SUCCESS;
    cl_program program =
        cl_.CreateProgramWithBinary(d.context, 1, &d.id, &length, &bytes, &status, &err);
    if (!program) return nullptr;
    std::string options = build_options(d);
    if (status != CL_SUCCESS ||
        cl_.BuildProgram(program, 1, &d.id, options.c_str(), nullptr, nullptr) != CL_SUCCESS) {
      cl_.ReleaseProgram(program);
      return nullptr;
    }
    return program;
  }

  std::string build_log(DeviceState& d, cl_program program) {
    size_t n = 0;
    cl_.GetProgramBuildInfo(program, d.id, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
    std::string log(n, '\0');
    if (n) cl_.GetProgramBuildInfo(program, d.id, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    return log;
  }

  ClApi cl_;
  backends::AddressMap<Memory> memory_;
  std::mutex mutex_;  // guards next_address_, just_built_ and the devices' wrapped_in_use
  uintptr_t next_address_ = kFirstAddress;
  std::unordered_map<std::string, cl_program> just_built_;
};

std::unique_ptr<DeviceState> describe(const ClApi& cl, cl_platform_id p, cl_device_id id) {
  auto d = std::make_unique<DeviceState>();
  d->platform = p;
  d->id = id;
  std::string extensions = device_string(cl, id, CL_DEVICE_EXTENSIONS);
  auto has = [&](const char* ext) {
    return (" " + extensions + " ").find(fmt::format(" {} ", ext)) != std::string::npos;
  };
  d->fp64 = has("cl_khr_fp64") ||
            device_value<cl_device_fp_config>(cl, id, CL_DEVICE_DOUBLE_FP_CONFIG) != 0;
  d->int64_atomics = has("cl_khr_int64_base_atomics");
  d->correctly_rounded_sqrt =
      (device_value<cl_device_fp_config>(cl, id, CL_DEVICE_SINGLE_FP_CONFIG) &
       CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0;
  d->max_group = device_value<size_t>(cl, id, CL_DEVICE_MAX_WORK_GROUP_SIZE);
  cl_uint align_bits = device_value<cl_uint>(cl, id, CL_DEVICE_MEM_BASE_ADDR_ALIGN);
  if (align_bits >= 8) d->base_align = align_bits / 8;
  d->images = device_value<cl_bool>(cl, id, CL_DEVICE_IMAGE_SUPPORT) == CL_TRUE;
  d->image2d_max[0] = device_value<size_t>(cl, id, CL_DEVICE_IMAGE2D_MAX_WIDTH);
  d->image2d_max[1] = device_value<size_t>(cl, id, CL_DEVICE_IMAGE2D_MAX_HEIGHT);
  d->image3d_max[0] = device_value<size_t>(cl, id, CL_DEVICE_IMAGE3D_MAX_WIDTH);
  d->image3d_max[1] = device_value<size_t>(cl, id, CL_DEVICE_IMAGE3D_MAX_HEIGHT);
  d->image3d_max[2] = device_value<size_t>(cl, id, CL_DEVICE_IMAGE3D_MAX_DEPTH);
  d->description = fmt::format(
      "platform {} ({}); device {} ({}); driver {}; {}", platform_string(cl, p, CL_PLATFORM_NAME),
      platform_string(cl, p, CL_PLATFORM_VERSION), device_string(cl, id, CL_DEVICE_NAME),
      device_string(cl, id, CL_DEVICE_VERSION), device_string(cl, id, CL_DRIVER_VERSION),
      device_string(cl, id, CL_DEVICE_OPENCL_C_VERSION));
  return d;
}

// What every device can do: the backend declares one set of capabilities.
BackendInfo make_info(const std::vector<std::unique_ptr<DeviceState>>& devices) {
  bool fp64 = true, int64_atomics = true, images = true;
  size_t max_group = SIZE_MAX;
  for (const auto& d : devices) {
    images &= d->images;
    fp64 &= d->fp64;
    int64_atomics &= d->int64_atomics;
    max_group = std::min(max_group, d->max_group);
  }
  // 32-bit atomics are core OpenCL (floats through compare-and-swap); 64-bit ones need
  // cl_khr_int64_base_atomics.
  std::set<DType> atomics = {DType::I32, DType::U32, DType::F32};
  if (int64_atomics) {
    atomics.insert({DType::I64, DType::U64});
    if (fp64) atomics.insert(DType::F64);
  }
  BackendInfo i = backends::gpu_info(declared_info(), fp64, atomics,
                                     static_cast<int>(std::min<size_t>(max_group, 1 << 30)));
  // Images with linear filtering where every device has them; TACK_OPENCL_IMAGES=0 samples in
  // software instead (the same bits as the CPU for every texture).
  const char* env = std::getenv("TACK_OPENCL_IMAGES");
  i.supports_hardware_textures = images && !(env && std::string(env) == "0");
  return i;
}

}  // namespace

BackendInfo declared_info() {
  return detail::declared("opencl", "OpenCL", {"opencl"}, BackendInfo::Addresses::Tack);
}

detail::Probe probe() {
  ClApi cl;
  if (std::string why = cl.load(); !why.empty()) return {nullptr, why};
  cl_uint n = 0;
  cl_int err = cl.GetPlatformIDs(0, nullptr, &n);
  std::vector<cl_platform_id> platforms(n);
  if (err == CL_SUCCESS && n) err = cl.GetPlatformIDs(n, platforms.data(), nullptr);
  std::vector<std::unique_ptr<DeviceState>> devices;
  for (cl_platform_id p : platforms) {
    cl_uint count = 0;
    cl_device_type types = CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_CPU;
    if (cl.GetDeviceIDs(p, types, 0, nullptr, &count) != CL_SUCCESS || count == 0) continue;
    std::vector<cl_device_id> ids(count);
    if (cl.GetDeviceIDs(p, types, count, ids.data(), nullptr) != CL_SUCCESS) continue;
    for (cl_device_id id : ids) devices.push_back(describe(cl, p, id));
  }
  if (devices.empty())
    return {nullptr,
            fmt::format(
                "OpenCL has no GPU or CPU device here ({} platform{}{}): install a driver, e.g. "
                "pocl-opencl-icd (OpenCL on the CPU)",
                n, n == 1 ? "" : "s", err == CL_SUCCESS ? "" : ", " + error_name(err))};
  BackendInfo info = make_info(devices);
  return {std::make_unique<OpenClBackend>(cl, std::move(devices), std::move(info)), ""};
}

}  // namespace tack::opencl
