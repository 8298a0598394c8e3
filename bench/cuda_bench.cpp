// The CUDA backend against the driver used directly, in one program on one device:
// - saxpy's bandwidth (12 bytes moved per element: x and y read, out written) as a fraction of a
//   device-to-device copy (cuMemcpyDtoDAsync) moving the same number of bytes (6 bytes per
//   element copied: read once, written once);
// - the cost of a Tack call on a 16-element array, against cuLaunchKernel of the same PTX
//   (compiled by the same NVRTC path, tack::cuda::compile_ptx) with the same arguments: queued
//   back to back (throughput), and one call then a wait (round trip).
// Prints one `name=value` line per measurement; exits 77 where CUDA is unavailable.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

#include "backends/cuda/cu_api.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "lang/parser.hpp"
#include "lang/resolve.hpp"
#include "sema/specialize.hpp"
#include "tack/tack.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// The best of `repeats` timings of `body` (which must finish its work before returning).
template <typename F>
double best_of(int repeats, F body) {
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    auto t = Clock::now();
    body();
    best = std::min(best, seconds_since(t));
  }
  return best;
}

void check(tack::cuda::CUresult r, const tack::cuda::CuApi& cu, const char* what) {
  if (r != tack::cuda::CUDA_SUCCESS)
    throw tack::DeviceError(fmt::format("cuda_bench: {} failed: {}", what, cu.error_name(r)));
}

}  // namespace

int main() {
  using namespace tack;
  using namespace tack::cuda;
  for (const BackendStatus& s : backend_status())
    if (s.name == "cuda" && !s.available) {
      std::fprintf(stderr, "cuda_bench: CUDA is unavailable: %s\n", s.reason.c_str());
      return 77;
    }
  try {
    Device gpu = device("cuda");
    set_default_device(gpu);
    Module kernels = Module::from_file(TACK_BENCH_KERNELS);
    Kernel saxpy = kernels.kernel("saxpy"), vector_add = kernels.kernel("vector_add");

    // The driver, used directly, in the same primary context as Tack's.
    CuApi cu;
    if (std::string why = cu.load(); !why.empty()) throw DeviceError(why);
    CUdevice dev = 0;
    CUcontext ctx = nullptr;
    CUstream stream = nullptr;
    check(cu.DeviceGet(&dev, 0), cu, "cuDeviceGet");
    check(cu.PrimaryCtxRetain(&ctx, dev), cu, "cuDevicePrimaryCtxRetain");
    check(cu.CtxSetCurrent(ctx), cu, "cuCtxSetCurrent");
    check(cu.StreamCreate(&stream, 0), cu, "cuStreamCreate");
    char name[256] = {};
    cu.DeviceGetName(name, sizeof name - 1, dev);
    int major = 0, minor = 0;
    cu.DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    cu.DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    std::printf("device=%s sm_%d%d\n", name, major, minor);

    // ---- bandwidth ----
    const int64_t n = int64_t{1} << 26;  // 64 Mi floats: 256 MiB per array
    Array x = full({n}, 1.5f), y = full({n}, 0.25f), out = zeros({n});
    saxpy(2.0f, x, y, out);  // compiled (or loaded from the disk cache) and warmed up
    tack::sync();
    if (out.item({n - 1}) != 2.0 * 1.5 + 0.25)
      throw ValueError("cuda_bench: saxpy computed a wrong value");
    const int reps = 20;
    double t_saxpy = best_of(5,
                             [&] {
                               for (int i = 0; i < reps; ++i) saxpy(2.0f, x, y, out);
                               tack::sync();
                             }) /
                     reps;
    // A copy of 6n bytes moves 12n bytes, as saxpy does.
    size_t copy_bytes = static_cast<size_t>(n) * 6;
    Array src = zeros({n * 2}), dst = zeros({n * 2});  // 8n bytes each, 6n of them copied
    auto d_src = reinterpret_cast<CUdeviceptr>(src.data());
    auto d_dst = reinterpret_cast<CUdeviceptr>(dst.data());
    tack::sync();
    check(cu.MemcpyDtoDAsync(d_dst, d_src, copy_bytes, stream), cu, "cuMemcpyDtoDAsync");
    check(cu.StreamSynchronize(stream), cu, "cuStreamSynchronize");
    double t_copy = best_of(5,
                            [&] {
                              for (int i = 0; i < reps; ++i)
                                check(cu.MemcpyDtoDAsync(d_dst, d_src, copy_bytes, stream), cu,
                                      "cuMemcpyDtoDAsync");
                              check(cu.StreamSynchronize(stream), cu, "cuStreamSynchronize");
                            }) /
                    reps;
    double moved = 12.0 * static_cast<double>(n);
    std::printf("saxpy_elements=%lld\n", static_cast<long long>(n));
    std::printf("saxpy_GBps=%.1f\n", moved / t_saxpy / 1e9);
    std::printf("dtod_copy_GBps=%.1f\n", moved / t_copy / 1e9);
    std::printf("saxpy_fraction_of_dtod_copy=%.3f\n", t_copy / t_saxpy);

    // ---- launch overhead ----
    const int64_t tiny_n = 16;
    Array a = full({tiny_n}, 1.0f), b = full({tiny_n}, 2.0f), c = zeros({tiny_n});
    vector_add(a, b, c);
    tack::sync();
    // The same PTX, through the driver: vector_add specialized as the call above specializes it.
    std::ostringstream text;
    text << std::ifstream(TACK_BENCH_KERNELS).rdbuf();
    auto module = std::make_shared<lang::ResolvedModule>(
        lang::parse_module(std::make_shared<const SourceFile>(TACK_BENCH_KERNELS, text.str())));
    ir::Kernel k = sema::specialize(*module, "vector_add",
                                    sema::parse_arg_types("f32[],f32[],f32[]"), {"CUDA", true});
    detail::CompileOptions o;
    o.symbol_prefix = "bench_vector_add";
    std::string ptx = compile_ptx(k, o, major * 10 + minor);
    CUmodule mod = nullptr;
    CUfunction fn = nullptr;
    check(cu.ModuleLoadData(&mod, ptx.c_str()), cu, "cuModuleLoadData");
    check(cu.ModuleGetFunction(&fn, mod, "bench_vector_add"), cu, "cuModuleGetFunction");
    CUdeviceptr pa = reinterpret_cast<CUdeviceptr>(a.data()),
                pb = reinterpret_cast<CUdeviceptr>(b.data()),
                pc = reinterpret_cast<CUdeviceptr>(c.data()), record = 0;
    int64_t extent = tiny_n, start = 0, step = 1, count = tiny_n;
    void* params[] = {&pa, &extent, &pb, &extent, &pc, &extent, &start, &step, &count, &record};
    auto bare_launch = [&] {
      check(cu.LaunchKernel(fn, 1, 1, 1, 256, 1, 1, 0, stream, params, nullptr), cu,
            "cuLaunchKernel");
    };
    const int calls = 20000;
    double tack_queued = best_of(3,
                                 [&] {
                                   for (int i = 0; i < calls; ++i) vector_add(a, b, c);
                                   tack::sync();
                                 }) /
                         calls;
    double bare_queued = best_of(3,
                                 [&] {
                                   for (int i = 0; i < calls; ++i) bare_launch();
                                   check(cu.StreamSynchronize(stream), cu, "cuStreamSynchronize");
                                 }) /
                         calls;
    const int round_trips = 2000;
    double tack_round = best_of(3,
                                [&] {
                                  for (int i = 0; i < round_trips; ++i) {
                                    vector_add(a, b, c);
                                    tack::sync();
                                  }
                                }) /
                        round_trips;
    double bare_round = best_of(3,
                                [&] {
                                  for (int i = 0; i < round_trips; ++i) {
                                    bare_launch();
                                    check(cu.StreamSynchronize(stream), cu, "cuStreamSynchronize");
                                  }
                                }) /
                        round_trips;
    std::vector<float> got = c.to_vector<float>();
    for (float v : got)
      if (v != 3.0f) throw ValueError("cuda_bench: vector_add computed a wrong value");
    std::printf("tack_call_queued_us=%.2f\n", tack_queued * 1e6);
    std::printf("bare_cuLaunchKernel_queued_us=%.2f\n", bare_queued * 1e6);
    std::printf("tack_call_and_sync_us=%.2f\n", tack_round * 1e6);
    std::printf("bare_cuLaunchKernel_and_sync_us=%.2f\n", bare_round * 1e6);
    cu.ModuleUnload(mod);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuda_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
