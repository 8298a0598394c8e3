// The five kernels of examples/kernels.py run by Tack, next to the hand-written OpenMP C++ of
// examples/reference.hpp compiled in this target at -O3 -march=native -ffp-contract=off, on data
// that does not fit in the caches; and a STREAM triad, this machine's memory bandwidth ceiling.
//
// Each pair runs on the same arrays (same allocation, alignment and pages), with Tack's thread
// count given to OpenMP too: once as two benchmarks of their own, and once paired (BM_pair_*),
// alternating calls, for a ratio that this machine's bandwidth drifts do not blur. Before the first
// timed run of a kernel, Tack's output is checked against the reference bit for bit (which also
// compiles the kernel and starts both thread pools).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "bench_common.hpp"
#include "reference.hpp"

namespace {

using bench::ptr;

// ---- Data sets, built on first use ----

// vector_add, saxpy and the triad: 2^25 floats per array, 128 MiB each (L3 is tens of MiB).
constexpr int64_t kStreamN = int64_t{1} << 25;
constexpr float kScale = 2.5f;

struct Streams {
  tack::Array x, y, out, want;
};

Streams& streams() {
  static Streams s = [] {
    Streams s;
    s.x = tack::empty({kStreamN});
    s.y = tack::empty({kStreamN});
    s.out = tack::zeros({kStreamN});
    s.want = tack::zeros({kStreamN});
    bench::fill_random(s.x, -1, 1, 1);
    bench::fill_random(s.y, -1, 1, 2);
    return s;
  }();
  return s;
}

// One Jacobi sweep over an 8192 x 8192 grid: 256 MiB in, 256 MiB out.
constexpr int64_t kStencilH = 8192, kStencilW = 8192;

struct Grid {
  tack::Array u, out, want;
};

Grid& grid() {
  static Grid g = [] {
    Grid g;
    g.u = tack::empty({kStencilH, kStencilW});
    g.out = tack::zeros({kStencilH, kStencilW});
    g.want = tack::zeros({kStencilH, kStencilW});
    bench::fill_random(g.u, 0, 1, 3);
    return g;
  }();
  return g;
}

// Mandelbrot: 2048 x 2048 pixels of [-2, 0.5] x [-1.25, 1.25], at most 256 iterations.
constexpr int64_t kMandelH = 2048, kMandelW = 2048;
constexpr int32_t kMandelIter = 256;
constexpr float kMandelX0 = -2.0f, kMandelY0 = -1.25f;
constexpr float kMandelDx = 2.5f / kMandelW, kMandelDy = 2.5f / kMandelH;

struct Image {
  tack::Array out, want;
};

Image& image() {
  static Image im = [] {
    Image im;
    im.out = tack::zeros({kMandelH, kMandelW}, tack::i32);
    im.want = tack::zeros({kMandelH, kMandelW}, tack::i32);
    return im;
  }();
  return im;
}

// All-pairs n-body step: n^2 interactions (compute-bound; the bodies fit in L2).
constexpr int64_t kBodies = 16384;
constexpr float kDt = 0.01f;

struct Bodies {
  tack::Array pos, vel, mass, new_pos, new_vel, want_pos, want_vel;
};

Bodies& bodies() {
  static Bodies b = [] {
    Bodies b;
    b.pos = tack::empty({kBodies, 3});
    b.vel = tack::empty({kBodies, 3});
    b.mass = tack::empty({kBodies});
    b.new_pos = tack::zeros({kBodies, 3});
    b.new_vel = tack::zeros({kBodies, 3});
    b.want_pos = tack::zeros({kBodies, 3});
    b.want_vel = tack::zeros({kBodies, 3});
    bench::fill_random(b.pos, -1, 1, 4);
    bench::fill_random(b.vel, -0.1f, 0.1f, 5);
    bench::fill_random(b.mass, 0.5f, 1.5f, 6);
    return b;
  }();
  return b;
}

// ---- The calls, Tack and hand-written ----

tack::Kernel& kernel(const char* name) {
  // One Kernel object per name for the life of the process, so its compiled variant stays loaded.
  static std::map<std::string, tack::Kernel> ks;
  auto it = ks.find(name);
  if (it == ks.end()) it = ks.emplace(name, bench::kernels().kernel(name)).first;
  return it->second;
}

void tack_vector_add() {
  Streams& s = streams();
  kernel("vector_add")(s.x, s.y, s.out);
}
void cpp_vector_add(float* out) {
  Streams& s = streams();
  reference::vector_add(ptr<float>(s.x), ptr<float>(s.y), out, kStreamN);
}

void tack_saxpy() {
  Streams& s = streams();
  kernel("saxpy")(kScale, s.x, s.y, s.out);
}
void cpp_saxpy(float* out) {
  Streams& s = streams();
  reference::saxpy(kScale, ptr<float>(s.x), ptr<float>(s.y), out, kStreamN);
}

void tack_stencil5() {
  Grid& g = grid();
  kernel("stencil5")(g.u, g.out);
}
void cpp_stencil5(float* out) {
  reference::stencil5(ptr<float>(grid().u), out, kStencilH, kStencilW);
}

void tack_mandelbrot() {
  kernel("mandelbrot")(image().out, kMandelX0, kMandelY0, kMandelDx, kMandelDy, kMandelIter);
}
void cpp_mandelbrot(int32_t* out) {
  reference::mandelbrot(out, kMandelH, kMandelW, kMandelX0, kMandelY0, kMandelDx, kMandelDy,
                        kMandelIter);
}

void tack_nbody() {
  Bodies& b = bodies();
  kernel("nbody_step")(b.pos, b.vel, b.mass, b.new_pos, b.new_vel, kDt);
}
void cpp_nbody(float* new_pos, float* new_vel) {
  Bodies& b = bodies();
  reference::nbody_step(ptr<float>(b.pos), ptr<float>(b.vel), ptr<float>(b.mass), new_pos, new_vel,
                        kDt, kBodies);
}

// STREAM's triad, a[i] = b[i] + q * c[i], written here as STREAM writes it.
void triad(float* a, const float* b, const float* c, float q, int64_t n) {
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i) a[i] = b[i] + q * c[i];
}

// The f32 sum of 2^24 elements (issue 11): Tack's scalar reduction in the parallel loop
// (`s += x[i]`, in its fixed order) against OpenMP's `parallel for simd reduction(+)`, as
// bench/compare's C++ writes it (which may reorder the additions as it likes).
constexpr int64_t kSumN = int64_t{1} << 24;

tack::Array& sum_input() {
  static tack::Array x = [] {
    tack::Array a = tack::empty({kSumN});
    bench::fill_random(a, -1, 1, 3);
    return a;
  }();
  return x;
}

float tack_sum() {
  static tack::Kernel k = tack::Module::from_source(R"(import tack

@tack.kernel
def sum_reduce(x) -> tack.f32:
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i]
    return s
)",
                                                    "sum_reduce.py")
                              .kernel("sum_reduce");
  return static_cast<float>(k(sum_input()).value);
}

float cpp_sum() {
  const float* x = ptr<float>(sum_input());
  float s = 0.0f;
#pragma omp parallel for simd reduction(+ : s)
  for (int64_t i = 0; i < kSumN; ++i) s += x[i];
  return s;
}

// ---- Checks: Tack against the reference, bit for bit, once per kernel ----

// Runs `check` the first time a kernel's benchmark starts; its error (empty when fine) is kept.
template <typename F>
const std::string& checked(const char* name, F&& check) {
  static std::map<std::string, std::string> results;
  auto it = results.find(name);
  if (it == results.end()) it = results.emplace(name, check()).first;
  return it->second;
}

std::string mismatch(const char* what) {
  return std::string(what) + ": Tack's output differs from the hand-written C++";
}

const std::string& check_vector_add() {
  return checked("vector_add", [] {
    tack_vector_add();
    cpp_vector_add(ptr<float>(streams().want));
    return bench::same_bytes(streams().out, streams().want) ? "" : mismatch("vector_add");
  });
}
const std::string& check_saxpy() {
  return checked("saxpy", [] {
    tack_saxpy();
    cpp_saxpy(ptr<float>(streams().want));
    return bench::same_bytes(streams().out, streams().want) ? "" : mismatch("saxpy");
  });
}
const std::string& check_stencil5() {
  return checked("stencil5", [] {
    tack_stencil5();
    cpp_stencil5(ptr<float>(grid().want));
    return bench::same_bytes(grid().out, grid().want) ? "" : mismatch("stencil5");
  });
}
const std::string& check_mandelbrot() {
  return checked("mandelbrot", [] {
    tack_mandelbrot();
    cpp_mandelbrot(ptr<int32_t>(image().want));
    return bench::same_bytes(image().out, image().want) ? "" : mismatch("mandelbrot");
  });
}
const std::string& check_nbody() {
  return checked("nbody_step", [] {
    Bodies& b = bodies();
    tack_nbody();
    cpp_nbody(ptr<float>(b.want_pos), ptr<float>(b.want_vel));
    return bench::same_bytes(b.new_pos, b.want_pos) && bench::same_bytes(b.new_vel, b.want_vel)
               ? ""
               : mismatch("nbody_step");
  });
}

// The orders differ, so the sums agree to within their error bounds, not bit for bit.
const std::string& check_sum() {
  return checked("sum_reduce", [] {
    double exact = 0, mag = 0;
    const float* x = ptr<float>(sum_input());
    for (int64_t i = 0; i < kSumN; ++i) exact += x[i], mag += std::fabs(x[i]);
    double tol = 1e-6 * mag;
    float t = tack_sum(), c = cpp_sum();
    return std::fabs(t - exact) <= tol && std::fabs(c - exact) <= tol
               ? std::string()
               : "sum_reduce: Tack " + std::to_string(t) + ", OpenMP " + std::to_string(c) +
                     ", exact " + std::to_string(exact);
  });
}

// Runs `call` in the timed loop after the kernel's check passed (the check is the warm-up).
template <typename Check, typename Call>
void run(benchmark::State& state, Check&& check, Call&& call) {
  if (const std::string& err = check(); !err.empty()) {
    state.SkipWithError(err.c_str());
    return;
  }
  call();  // one more untimed run: caches, page tables and thread pools as in steady state
  for (auto _ : state) {
    call();
    benchmark::ClobberMemory();
  }
}

// Tack and a baseline in alternation, each iteration timing one call of each (in turns, which one
// goes first): the ratio of the two sums is far less noisy than the ratio of two benchmarks run
// apart, since slow drifts of this machine's memory bandwidth (a VM shares it) hit both sides
// alike. Counters: tack_ms and base_ms per call, speed_ratio = base time / Tack time (> 1: Tack
// faster).
template <typename Check, typename Tack, typename Base>
void run_paired(benchmark::State& state, Check&& check, Tack&& tack_call, Base&& base_call) {
  if (const std::string& err = check(); !err.empty()) {
    state.SkipWithError(err.c_str());
    return;
  }
  using Clock = std::chrono::steady_clock;
  auto timed = [](auto& call) {
    auto t0 = Clock::now();
    call();
    benchmark::ClobberMemory();
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
  tack_call();
  base_call();
  double tack_s = 0, base_s = 0;
  bool tack_first = true;
  for (auto _ : state) {
    if (tack_first) {
      tack_s += timed(tack_call);
      base_s += timed(base_call);
    } else {
      base_s += timed(base_call);
      tack_s += timed(tack_call);
    }
    tack_first = !tack_first;
  }
  double n = static_cast<double>(state.iterations());
  state.counters["tack_ms"] = tack_s / n * 1e3;
  state.counters["base_ms"] = base_s / n * 1e3;
  state.counters["speed_ratio"] = base_s / tack_s;
}

// Bytes moved by one call, STREAM's way: every array read or written once (write-allocate reads
// are not counted, on either side).
constexpr int64_t kStreamBytes = 3 * kStreamN * int64_t{sizeof(float)};
constexpr int64_t kStencilBytes = 2 * kStencilH * kStencilW * int64_t{sizeof(float)};

// ---- Benchmarks ----

void BM_vector_add_tack(benchmark::State& state) {
  run(state, check_vector_add, tack_vector_add);
  state.SetBytesProcessed(state.iterations() * kStreamBytes);
}
void BM_vector_add_cpp(benchmark::State& state) {
  run(state, check_vector_add, [] { cpp_vector_add(ptr<float>(streams().out)); });
  state.SetBytesProcessed(state.iterations() * kStreamBytes);
}

void BM_saxpy_tack(benchmark::State& state) {
  run(state, check_saxpy, tack_saxpy);
  state.SetBytesProcessed(state.iterations() * kStreamBytes);
}
void BM_saxpy_cpp(benchmark::State& state) {
  run(state, check_saxpy, [] { cpp_saxpy(ptr<float>(streams().out)); });
  state.SetBytesProcessed(state.iterations() * kStreamBytes);
}

void BM_triad(benchmark::State& state) {
  Streams& s = streams();
  run(
      state, [] { return std::string(); },
      [&] { triad(ptr<float>(s.out), ptr<float>(s.x), ptr<float>(s.y), kScale, kStreamN); });
  state.SetBytesProcessed(state.iterations() * kStreamBytes);
}

void BM_stencil5_tack(benchmark::State& state) {
  run(state, check_stencil5, tack_stencil5);
  state.SetBytesProcessed(state.iterations() * kStencilBytes);
}
void BM_stencil5_cpp(benchmark::State& state) {
  run(state, check_stencil5, [] { cpp_stencil5(ptr<float>(grid().out)); });
  state.SetBytesProcessed(state.iterations() * kStencilBytes);
}

void BM_mandelbrot_tack(benchmark::State& state) {
  run(state, check_mandelbrot, tack_mandelbrot);
  state.SetItemsProcessed(state.iterations() * kMandelH * kMandelW);
}
void BM_mandelbrot_cpp(benchmark::State& state) {
  run(state, check_mandelbrot, [] { cpp_mandelbrot(ptr<int32_t>(image().out)); });
  state.SetItemsProcessed(state.iterations() * kMandelH * kMandelW);
}

void BM_nbody_tack(benchmark::State& state) {
  run(state, check_nbody, tack_nbody);
  state.SetItemsProcessed(state.iterations() * kBodies * kBodies);
}
void BM_nbody_cpp(benchmark::State& state) {
  run(state, check_nbody,
      [] { cpp_nbody(ptr<float>(bodies().new_pos), ptr<float>(bodies().new_vel)); });
  state.SetItemsProcessed(state.iterations() * kBodies * kBodies);
}

void BM_pair_vector_add(benchmark::State& state) {
  run_paired(state, check_vector_add, tack_vector_add,
             [] { cpp_vector_add(ptr<float>(streams().out)); });
}
void BM_pair_saxpy(benchmark::State& state) {
  run_paired(state, check_saxpy, tack_saxpy, [] { cpp_saxpy(ptr<float>(streams().out)); });
}
// Tack's saxpy against the triad: the same bytes, so speed_ratio is saxpy's share of the triad's
// bandwidth.
void BM_pair_saxpy_triad(benchmark::State& state) {
  Streams& s = streams();
  run_paired(state, check_saxpy, tack_saxpy,
             [&] { triad(ptr<float>(s.out), ptr<float>(s.x), ptr<float>(s.y), kScale, kStreamN); });
}
void BM_pair_stencil5(benchmark::State& state) {
  run_paired(state, check_stencil5, tack_stencil5, [] { cpp_stencil5(ptr<float>(grid().out)); });
}
void BM_pair_mandelbrot(benchmark::State& state) {
  run_paired(state, check_mandelbrot, tack_mandelbrot,
             [] { cpp_mandelbrot(ptr<int32_t>(image().out)); });
}
void BM_pair_nbody(benchmark::State& state) {
  run_paired(state, check_nbody, tack_nbody,
             [] { cpp_nbody(ptr<float>(bodies().new_pos), ptr<float>(bodies().new_vel)); });
}

constexpr int64_t kSumBytes = kSumN * int64_t{sizeof(float)};
void BM_sum_tack(benchmark::State& state) {
  run(state, check_sum, [] { benchmark::DoNotOptimize(tack_sum()); });
  state.SetBytesProcessed(state.iterations() * kSumBytes);
}
void BM_sum_cpp(benchmark::State& state) {
  run(state, check_sum, [] { benchmark::DoNotOptimize(cpp_sum()); });
  state.SetBytesProcessed(state.iterations() * kSumBytes);
}
void BM_pair_sum(benchmark::State& state) {
  run_paired(
      state, check_sum, [] { benchmark::DoNotOptimize(tack_sum()); },
      [] { benchmark::DoNotOptimize(cpp_sum()); });
}

#define TACK_BENCH(fn) BENCHMARK(fn)->UseRealTime()->Unit(benchmark::kMillisecond)

TACK_BENCH(BM_triad);
TACK_BENCH(BM_vector_add_tack);
TACK_BENCH(BM_vector_add_cpp);
TACK_BENCH(BM_saxpy_tack);
TACK_BENCH(BM_saxpy_cpp);
TACK_BENCH(BM_stencil5_tack);
TACK_BENCH(BM_stencil5_cpp);
TACK_BENCH(BM_mandelbrot_tack);
TACK_BENCH(BM_mandelbrot_cpp);
TACK_BENCH(BM_nbody_tack);
TACK_BENCH(BM_nbody_cpp);
TACK_BENCH(BM_pair_vector_add);
TACK_BENCH(BM_pair_saxpy);
TACK_BENCH(BM_pair_saxpy_triad);
TACK_BENCH(BM_pair_stencil5);
TACK_BENCH(BM_pair_mandelbrot);
TACK_BENCH(BM_pair_nbody);
TACK_BENCH(BM_sum_tack);
TACK_BENCH(BM_sum_cpp);
TACK_BENCH(BM_pair_sum);

}  // namespace

int main(int argc, char** argv) {
  // OpenMP's idle threads spin after each parallel region (libgomp's default, for milliseconds),
  // taking a core from whatever runs next: on this 2-core machine, from the Tack call that follows
  // a C++ call. Tack's own pool yields after 10 us and sleeps after 100 us. So that neither side
  // slows the other, OpenMP's threads sleep when idle unless OMP_WAIT_POLICY says otherwise;
  // libgomp reads it when it is loaded, hence the re-exec.
  if (!std::getenv("OMP_WAIT_POLICY")) {
    setenv("OMP_WAIT_POLICY", "passive", 1);
    execv("/proc/self/exe", argv);
    std::perror("tack_bench_kernels: re-exec with OMP_WAIT_POLICY=passive failed");
    return 1;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  int threads = bench::use_same_thread_count();
  benchmark::AddCustomContext("tack_version", tack::version());
  benchmark::AddCustomContext("tack_threads", std::to_string(threads));
  benchmark::AddCustomContext("omp_threads", std::to_string(omp_get_max_threads()));
  benchmark::AddCustomContext("omp_wait_policy", std::getenv("OMP_WAIT_POLICY"));
  benchmark::AddCustomContext("stream_elements", std::to_string(kStreamN));
  benchmark::AddCustomContext("stencil_grid",
                              std::to_string(kStencilH) + "x" + std::to_string(kStencilW));
  benchmark::AddCustomContext("mandelbrot", std::to_string(kMandelH) + "x" +
                                                std::to_string(kMandelW) + ", " +
                                                std::to_string(kMandelIter) + " iterations");
  benchmark::AddCustomContext("nbody_bodies", std::to_string(kBodies));
  benchmark::AddCustomContext("sum_elements", std::to_string(kSumN));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
