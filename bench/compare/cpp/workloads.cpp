// The comparison's workloads in hand-written C++ with OpenMP: the limit each system is held to.
// Built by bench/compare/run into a shared library (-O3 -march=native -fopenmp -ffp-contract=off,
// like bench/'s baselines: no FMA contraction, no fast math, as Tack) and called through ctypes.
// saxpy, the stencil, Mandelbrot and the n-body step are examples/reference.hpp, the baselines of
// bench/RESULTS.md; the rest is written here in the same style.
#include <cstdint>

#include "reference.hpp"

namespace {
constexpr int64_t kTile = 32;
}

extern "C" {

void cmp_saxpy(float a, const float* x, const float* y, float* out, int64_t n) {
  reference::saxpy(a, x, y, out, n);
}

// The STREAM triad, as STREAM writes it.
void cmp_triad(float q, const float* b, const float* c, float* a, int64_t n) {
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i) a[i] = b[i] + q * c[i];
}

void cmp_stencil(const float* u, float* out, int64_t h, int64_t w) {
  reference::stencil5(u, out, h, w);
}

void cmp_mandelbrot(int32_t* out, int64_t h, int64_t w, float x0, float y0, float dx, float dy,
                    int32_t max_iter) {
  reference::mandelbrot(out, h, w, x0, y0, dx, dy, max_iter);
}

void cmp_nbody(const float* pos, const float* vel, const float* mass, float* new_pos,
               float* new_vel, float dt, int64_t n) {
  reference::nbody_step(pos, vel, mass, new_pos, new_vel, dt, n);
}

void cmp_matmul_naive(const float* A, const float* B, float* C, int64_t n, int64_t m, int64_t k) {
#pragma omp parallel for collapse(2)
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) {
      float s = 0.0f;
      for (int64_t p = 0; p < k; ++p) s += A[i * k + p] * B[p * m + j];
      C[i * m + j] = s;
    }
}

// One tile of C per iteration, accumulated in a local array in i-k-j order (sizes are multiples
// of the tile).
void cmp_matmul_tiled(const float* A, const float* B, float* C, int64_t n, int64_t m, int64_t k) {
#pragma omp parallel for collapse(2)
  for (int64_t bi = 0; bi < n / kTile; ++bi)
    for (int64_t bj = 0; bj < m / kTile; ++bj) {
      float acc[kTile * kTile] = {};
      for (int64_t kk = 0; kk < k; kk += kTile)
        for (int64_t i = 0; i < kTile; ++i)
          for (int64_t p = 0; p < kTile; ++p) {
            float a = A[(bi * kTile + i) * k + kk + p];
            const float* b = B + (kk + p) * m + bj * kTile;
#pragma omp simd
            for (int64_t j = 0; j < kTile; ++j) acc[i * kTile + j] += a * b[j];
          }
      for (int64_t i = 0; i < kTile; ++i)
        for (int64_t j = 0; j < kTile; ++j)
          C[(bi * kTile + i) * m + bj * kTile + j] = acc[i * kTile + j];
    }
}

// OpenMP's simd reduction may reorder the additions (vectorized partial sums): what a C++
// programmer writes for a sum.
float cmp_sum(const float* x, int64_t n) {
  float s = 0.0f;
#pragma omp parallel for simd reduction(+ : s)
  for (int64_t i = 0; i < n; ++i) s += x[i];
  return s;
}

void cmp_histogram(const float* values, int64_t n, int32_t bins, int32_t* counts) {
  for (int32_t b = 0; b < bins; ++b) counts[b] = 0;
#pragma omp parallel for
  for (int64_t i = 0; i < n; ++i) {
    auto b = static_cast<int32_t>(values[i] * static_cast<float>(bins));
    if (b >= 0 && b < bins) {
#pragma omp atomic
      counts[b] += 1;
    }
  }
}

void cmp_life(const uint8_t* g, uint8_t* out, int64_t h, int64_t w) {
#pragma omp parallel for
  for (int64_t i = 1; i < h - 1; ++i)
#pragma omp simd
    for (int64_t j = 1; j < w - 1; ++j) {
      const uint8_t* up = g + (i - 1) * w + j;
      const uint8_t* mid = g + i * w + j;
      const uint8_t* down = g + (i + 1) * w + j;
      int n = up[-1] + up[0] + up[1] + mid[-1] + mid[1] + down[-1] + down[0] + down[1];
      out[i * w + j] = static_cast<uint8_t>(n == 3 || (n == 2 && mid[0] == 1));
    }
}

}  // extern "C"
