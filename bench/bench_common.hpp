// What the benchmark programs share: the kernels file, one thread count for Tack and OpenMP, data.
#pragma once

#include <omp.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "backends/cpu/thread_pool.hpp"
#include "tack/tack.hpp"

namespace bench {

// examples/kernels.py, loaded once per process.
inline tack::Module& kernels() {
  static tack::Module m = tack::Module::from_file(TACK_BENCH_KERNELS);
  return m;
}

// Tack runs its parallel loops on a pool of one thread per physical core (TACK_CPU_THREADS
// overrides it); OpenMP gets the same count so that both sides use the same cores. Returns it.
inline int use_same_thread_count() {
  tack::set_default_device("cpu");
  int threads = tack::cpu::ThreadPool::global().size();
  omp_set_num_threads(threads);
  return threads;
}

// Deterministic pseudo-random floats in [lo, hi) (splitmix64), written in place: cheap enough for
// arrays of hundreds of megabytes, and the writes fault the pages in before any timing.
inline void fill_random(float* p, int64_t n, float lo, float hi, uint64_t seed) {
  uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
  for (int64_t i = 0; i < n; ++i) {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    float u = static_cast<float>(z >> 40) * (1.0f / 16777216.0f);  // 24 bits: exact in a float
    p[i] = lo + (hi - lo) * u;
  }
}

inline void fill_random(tack::Array& a, float lo, float hi, uint64_t seed) {
  fill_random(static_cast<float*>(a.data()), a.size(), lo, hi, seed);
}

template <typename T>
T* ptr(const tack::Array& a) {
  return static_cast<T*>(a.data());
}

// True when the two arrays hold the same bytes.
inline bool same_bytes(const tack::Array& a, const tack::Array& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

}  // namespace bench
