#include "backends/cpu/cpu_backend.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>

#include "backends/cpu/cpu_compiler.hpp"
#include "backends/cpu/host_target.hpp"
#include "backends/cpu/kernel_loader.hpp"
#include "backends/cpu/thread_pool.hpp"
#include "backends/cpu/work_estimate.hpp"
#include "codegen/llvm/abi.hpp"
#include "tack/error.hpp"

namespace tack::cpu {
namespace {

constexpr size_t kAlignment = 64;

struct CpuCode : detail::LoadedCode {
  LoadedKernel fns;
  codegen::ArgLayout layout;
  bool has_loops = false;  // work per iteration varies with the launch (work_estimate.hpp)
  CpuCode(LoadedKernel f, const ir::Kernel& k) : fns(f), layout(k) {}
};

bool has_loop(const ir::Block& b) {
  for (const auto& s : b)
    if (s->kind == ir::Stmt::Kind::For || s->kind == ir::Stmt::Kind::While || has_loop(s->body) ||
        has_loop(s->orelse))
      return true;
  return false;
}

struct ChunkCall {
  ChunkFn fn;
  const uint64_t* slots;
};

void run_chunk(void* ctx, int64_t begin, int64_t end) {
  auto* c = static_cast<ChunkCall*>(ctx);
  c->fn(c->slots, begin, end);
}

class CpuBackend final : public detail::Backend {
 public:
  CpuBackend() : Backend(make_info()) {}

  static BackendInfo make_info() {
    BackendInfo i = declared_info();
    i.supported_dtypes = {std::begin(kAllDTypes), std::end(kAllDTypes)};
    i.supported_atomic_dtypes = i.supported_dtypes;
    i.supports_device_reductions = true;  // tack.algorithms: the host is the device
    i.supports_workgroups = false;
    i.max_workgroup_size = 1;
    i.asynchronous = false;
    return i;
  }

  int device_count() const override { return 1; }

  void* allocate(int, size_t bytes) override {
    size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
    void* p = std::aligned_alloc(kAlignment, rounded == 0 ? kAlignment : rounded);
    if (!p) throw DeviceError(fmt::format("the CPU cannot allocate {} bytes", bytes));
    return p;
  }
  void release(int, void* ptr) override { std::free(ptr); }
  void copy_to_host(int, void* dst, const void* src, size_t n) override {
    std::memmove(dst, src, n);
  }
  void copy_from_host(int, void* dst, const void* src, size_t n) override {
    std::memmove(dst, src, n);
  }
  void copy_on_device(int, void* dst, const void* src, size_t n) override {
    std::memmove(dst, src, n);
  }
  // The pattern once, then copies of what is written, doubling up to a block that stays in the
  // cache: a few large copies instead of one call per element.
  void fill(int, void* dst, const void* pattern, size_t pattern_bytes, size_t count) override {
    auto* d = static_cast<char*>(dst);
    const size_t total = pattern_bytes * count;
    if (total == 0) return;
    std::memcpy(d, pattern, pattern_bytes);
    size_t block = pattern_bytes;  // d[0, block) holds whole patterns
    for (size_t done = pattern_bytes; done < total;) {
      const size_t n = std::min(block, total - done);
      std::memcpy(d + done, d, n);
      done += n;
      if (block < (size_t{64} << 10)) block = done;
    }
  }

  // LLVM's version and what its description of the host follows from: everything about the target
  // that changes the code, known without loading LLVM. That is the CPU's signature, since equal
  // signatures get equal answers from LLVM (host_target.hpp): a process that finds its kernels in
  // the disk cache then reads neither LLVM's answer nor the record of it, which only a compile
  // needs. Where there is no signature (not x86-64), it is LLVM's answer itself.
  std::string cache_target(int) override {
    std::call_once(target_once_, [this] {
      std::string host = cpu_signature();
      if (host.empty()) {
        const HostTarget& t = host_target();
        host = fmt::format("{};{};{}", t.triple, t.cpu, t.features);
      }
      // Appended, not formatted: a new process's first call builds it (runtime/hex.hpp).
      target_ = std::string("llvm ") + TACK_LLVM_VERSION + "; " + host;
      target_ += simd_enabled() ? "; simd on" : "; simd off";
      target_ += loader_maps_read_only_objects() ? "; objects read-only" : "; objects relro";
    });
    return target_;
  }

  std::string compile(const ir::Kernel& k, const detail::CompileOptions& o, int) override {
    return compile_kernel(k, llvm_options(o), host_target(), false).shared_object;
  }

  std::unique_ptr<detail::LoadedCode> load(const std::string& artifact, const ir::Kernel& k,
                                           const detail::CompileOptions& o, int,
                                           const std::string& stored_at) override {
    LoadedKernel fns = load_kernel(artifact, stored_at, o.symbol_prefix, k.result != nullptr);
    auto code = std::make_unique<CpuCode>(fns, k);
    code->has_loops = has_loop(k.body);
    code->has_streamed_stores = fns.has_streamed_stores;
    return code;
  }

  // Launches whose arrays take more than half the last-level cache (streams_past_caches).
  bool streams(const ir::Kernel& k, const detail::LaunchArgs& a) override {
    uint64_t array_bytes = 0;
    for (size_t p = 0; p < a.params.size(); ++p) {
      const ir::Param& param = k.params[p];
      if (param.is_local_array() || !param.type.is_array()) continue;
      uint64_t bytes = dtype_size(param.type.dtype);
      for (int d = 0; d < param.type.rank; ++d)
        bytes *= static_cast<uint64_t>(a.params[p].shape[d]);
      array_bytes += bytes;
    }
    return streams_past_caches(array_bytes);
  }

  void launch(detail::LoadedCode& base, const ir::Kernel& k, const detail::LaunchArgs& a,
              int) override {
    auto& code = static_cast<CpuCode&>(base);
    const codegen::ArgLayout& layout = code.layout;
    // Small kernels have few slots: keep them on the stack.
    uint64_t stack_slots[64];
    std::vector<uint64_t> heap_slots;
    uint64_t* slots = stack_slots;
    if (layout.slot_count > 64) {
      heap_slots.resize(layout.slot_count);
      slots = heap_slots.data();
    }
    int64_t inner = 1;
    for (size_t p = 0; p < a.params.size(); ++p) {
      int s = layout.param_slot[p];
      const auto& arg = a.params[p];
      if (k.params[p].is_local_array()) continue;  // on the chunk's stack; no slot
      if (k.params[p].type.is_array()) {
        slots[s] = reinterpret_cast<uint64_t>(arg.data);
        for (int d = 0; d < k.params[p].type.rank; ++d)
          slots[s + 1 + d] = static_cast<uint64_t>(arg.shape[d]);
      } else {
        slots[s] = arg.scalar;
      }
    }
    for (size_t d = 0; d < k.dims.size(); ++d) {
      int s = layout.loop_slot + 3 * static_cast<int>(d);
      slots[s] = static_cast<uint64_t>(a.start[d]);
      slots[s + 1] = static_cast<uint64_t>(a.step[d]);
      slots[s + 2] = static_cast<uint64_t>(a.count[d]);
      if (d > 0) inner *= a.count[d];
    }
    slots[layout.debug_slot] = reinterpret_cast<uint64_t>(a.debug_record);

    int64_t outer = a.count.empty() ? 0 : a.count[0];
    if (!k.reductions.empty()) {
      // The chunks run whole blocks of the reductions' fixed order (ir::Reduction), so the
      // thread count changes nothing in the result.
      outer =
          outer > 0 && inner > 0 ? ir::reduction_partials(outer * inner) / ir::kReductionLanes : 0;
      inner = ir::kReductionBlock;
    }
    if (outer > 0 && inner > 0) {
      // Threads pay off from about 2^15 units of work; below that the launch stays on the
      // caller's thread. A body with loops counts their steps.
      // (One outer iteration has nothing to split: its steps are not needed.)
      const int64_t steps = code.has_loops && outer > 1 ? steps_per_iteration(k, a) : 1;
      const int64_t per_outer = steps > INT64_MAX / inner ? INT64_MAX : inner * steps;
      int64_t min_chunk = std::max<int64_t>(1, (int64_t{1} << 15) / per_outer);
      if (outer <= min_chunk) {
        code.fns.chunk(slots, 0,
                       outer);  // without starting the pool in a process that never needs it
      } else {
        ChunkCall call{code.fns.chunk, slots};
        ThreadPool::global().parallel_for(outer, min_chunk, &run_chunk, &call);
      }
    }
    if (k.result && a.result) code.fns.result(slots, a.result);
  }

  void synchronize(int) override {}

  std::string emit(const ir::Kernel& k, const detail::CompileOptions& o, bool optimized) override {
    CompiledKernel c = compile_kernel(k, llvm_options(o), host_target(), true);
    return fmt::format("; tack cpu chunk: {}\n{}", c.path, optimized ? c.ir_after : c.ir_before);
  }

 private:
  static codegen::LlvmOptions llvm_options(const detail::CompileOptions& o) {
    codegen::LlvmOptions l;
    l.symbol_prefix = o.symbol_prefix;
    l.no_alias = o.no_alias;
    l.stream_stores = o.streams;
    l.simd = simd_enabled();
    return l;
  }

  // Whether a launch whose arrays take `array_bytes` streams its stores past the caches (abi.hpp):
  // from half the last-level cache on, which the arrays would only flush through. Measured on a
  // Zen 4 guest (2 threads, a saxpy): streamed stores are as fast at 12 MiB of arrays, 1.6x as fast
  // at 24 MiB and above. TACK_CPU_STREAM_BYTES sets another threshold (0: every launch streams).
  // Arrays of 1 MiB or less never stream, without reading the cache's size (eight files in sysfs, a
  // sixth of a warm-cache first call) for a small launch.
  static bool streams_past_caches(uint64_t array_bytes) {
    static const int64_t chosen = []() -> int64_t {
      const char* v = std::getenv("TACK_CPU_STREAM_BYTES");
      return v && *v ? static_cast<int64_t>(std::strtoull(v, nullptr, 10)) : -1;
    }();
    if (chosen >= 0) return array_bytes > static_cast<uint64_t>(chosen);
    if (array_bytes <= (uint64_t{1} << 20)) return false;
    static const uint64_t threshold = [] {
      const uint64_t cache = last_level_cache_bytes();
      return cache > 0 ? cache / 2 : uint64_t{16} << 20;
    }();
    return array_bytes > threshold;
  }

  // The largest cache of CPU 0 as Linux describes it (sysfs), else as the C library does (which
  // reads cpuid, and gave 10 times the size on a virtual machine whose sysfs was right); 0 unknown.
  static uint64_t last_level_cache_bytes() {
    uint64_t largest = 0;
    for (int i = 0; i < 8; ++i) {
      std::ifstream in(fmt::format("/sys/devices/system/cpu/cpu0/cache/index{}/size", i));
      uint64_t size = 0;
      char unit = 0;
      if (!(in >> size)) continue;
      if (in >> unit) size <<= unit == 'K' ? 10 : unit == 'M' ? 20 : unit == 'G' ? 30 : 0;
      largest = std::max(largest, size);
    }
    if (largest > 0) return largest;
    const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return static_cast<uint64_t>(std::max({l3, l2, 0L}));
  }

  // TACK_CPU_SIMD=0 keeps every kernel on the scalar path (part of the cache key, above).
  static bool simd_enabled() {
    static const bool on = [] {
      const char* v = std::getenv("TACK_CPU_SIMD");
      return !(v && std::string(v) == "0");
    }();
    return on;
  }

  std::once_flag target_once_;
  std::string target_;
};

}  // namespace

BackendInfo declared_info() {
  return detail::declared("cpu", "the CPU", {"cpu"}, BackendInfo::Addresses::None, 1 /* kDLCPU */);
}

detail::Probe probe() {
  return {std::make_unique<CpuBackend>(), ""};
}

}  // namespace tack::cpu
