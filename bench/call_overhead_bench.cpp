// The cost of calling a kernel that is already compiled and loaded, on arrays so small (16
// elements) that the work itself is a few nanoseconds: what remains is Tack's per-call overhead
// (argument classification, the variant lookup, the alias check, packing, the launch). Next to it,
// the same work as a bare C++ function call, serial and with examples/reference.hpp's OpenMP loop.
#include <benchmark/benchmark.h>

#include <cstdint>

#include "bench_common.hpp"
#include "reference.hpp"

namespace {

constexpr int64_t kN = 16;

struct Tiny {
  tack::Array x, y, out;
  tack::Kernel vector_add, saxpy;
};

Tiny& tiny() {
  static Tiny t = [] {
    Tiny t;
    t.x = tack::empty({kN});
    t.y = tack::empty({kN});
    t.out = tack::zeros({kN});
    bench::fill_random(t.x, -1, 1, 1);
    bench::fill_random(t.y, -1, 1, 2);
    t.vector_add = bench::kernels().kernel("vector_add");
    t.saxpy = bench::kernels().kernel("saxpy");
    // First calls: compile (or load from the disk cache) outside any timing.
    t.vector_add(t.x, t.y, t.out);
    t.saxpy(2.5f, t.x, t.y, t.out);
    return t;
  }();
  return t;
}

// The hand-written loop as a plain serial function, kept out of line so that a call is a call.
__attribute__((noinline)) void serial_vector_add(const float* x, const float* y, float* out,
                                                 int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] + y[i];
}

void BM_tack_vector_add_16(benchmark::State& state) {
  Tiny& t = tiny();
  for (auto _ : state) {
    t.vector_add(t.x, t.y, t.out);
    benchmark::ClobberMemory();
  }
}

void BM_tack_saxpy_16(benchmark::State& state) {
  Tiny& t = tiny();
  for (auto _ : state) {
    t.saxpy(2.5f, t.x, t.y, t.out);
    benchmark::ClobberMemory();
  }
}

void BM_cpp_serial_vector_add_16(benchmark::State& state) {
  Tiny& t = tiny();
  auto* x = bench::ptr<float>(t.x);
  auto* y = bench::ptr<float>(t.y);
  auto* out = bench::ptr<float>(t.out);
  for (auto _ : state) {
    serial_vector_add(x, y, out, kN);
    benchmark::ClobberMemory();
  }
}

// reference::vector_add is an OpenMP parallel loop: each call starts a parallel region.
void BM_cpp_openmp_vector_add_16(benchmark::State& state) {
  Tiny& t = tiny();
  auto* x = bench::ptr<float>(t.x);
  auto* y = bench::ptr<float>(t.y);
  auto* out = bench::ptr<float>(t.out);
  reference::vector_add(x, y, out, kN);
  for (auto _ : state) {
    reference::vector_add(x, y, out, kN);
    benchmark::ClobberMemory();
  }
}

BENCHMARK(BM_tack_vector_add_16)->UseRealTime();
BENCHMARK(BM_tack_saxpy_16)->UseRealTime();
BENCHMARK(BM_cpp_serial_vector_add_16)->UseRealTime();
BENCHMARK(BM_cpp_openmp_vector_add_16)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  int threads = bench::use_same_thread_count();
  benchmark::AddCustomContext("tack_version", tack::version());
  benchmark::AddCustomContext("tack_threads", std::to_string(threads));
  benchmark::AddCustomContext("omp_threads", std::to_string(omp_get_max_threads()));
  benchmark::AddCustomContext("elements", std::to_string(kN));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
