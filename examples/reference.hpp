// Plain C++ versions of the kernels in kernels.py: the references the tests check Tack against,
// and, compiled with OpenMP at -O3 -march=native, the hand-written baselines of the benchmarks.
// They compute exactly what the kernels compute, in the same order and precision, so results
// compare bit for bit (neither side contracts multiplies and adds into FMAs).
#pragma once

#include <cmath>
#include <cstdint>

namespace reference {

inline void vector_add(const float* x, const float* y, float* out, int64_t n) {
#pragma omp parallel for simd
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] + y[i];
}

inline void saxpy(float a, const float* x, const float* y, float* out, int64_t n) {
#pragma omp parallel for simd
  for (int64_t i = 0; i < n; ++i) out[i] = a * x[i] + y[i];
}

inline void stencil5(const float* u, float* out, int64_t h, int64_t w) {
#pragma omp parallel for
  for (int64_t i = 1; i < h - 1; ++i)
#pragma omp simd
    for (int64_t j = 1; j < w - 1; ++j)
      out[i * w + j] =
          0.25f * (u[(i - 1) * w + j] + u[(i + 1) * w + j] + u[i * w + j - 1] + u[i * w + j + 1]);
}

inline void mandelbrot(int32_t* out, int64_t h, int64_t w, float x0, float y0, float dx, float dy,
                       int32_t max_iter) {
#pragma omp parallel for schedule(dynamic, 4)
  for (int64_t i = 0; i < h; ++i) {
    for (int64_t j = 0; j < w; ++j) {
      float cr = x0 + static_cast<float>(j) * dx;
      float ci = y0 + static_cast<float>(i) * dy;
      float zr = 0.0f, zi = 0.0f;
      int32_t n = 0;
      while (n < max_iter && zr * zr + zi * zi <= 4.0f) {
        float t = zr * zr - zi * zi + cr;
        zi = 2.0f * zr * zi + ci;
        zr = t;
        ++n;
      }
      out[i * w + j] = n;
    }
  }
}

inline void nbody_step(const float* pos, const float* vel, const float* mass, float* new_pos,
                       float* new_vel, float dt, int64_t n, float softening2 = 1e-4f) {
#pragma omp parallel for
  for (int64_t i = 0; i < n; ++i) {
    float xi = pos[i * 3], yi = pos[i * 3 + 1], zi = pos[i * 3 + 2];
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int64_t j = 0; j < n; ++j) {
      float dx = pos[j * 3] - xi, dy = pos[j * 3 + 1] - yi, dz = pos[j * 3 + 2] - zi;
      float r2 = dx * dx + dy * dy + dz * dz + softening2;
      float s = mass[j] / (r2 * std::sqrt(r2));
      ax += dx * s;
      ay += dy * s;
      az += dz * s;
    }
    float vx = vel[i * 3] + ax * dt, vy = vel[i * 3 + 1] + ay * dt, vz = vel[i * 3 + 2] + az * dt;
    new_vel[i * 3] = vx;
    new_vel[i * 3 + 1] = vy;
    new_vel[i * 3 + 2] = vz;
    new_pos[i * 3] = xi + vx * dt;
    new_pos[i * 3 + 1] = yi + vy * dt;
    new_pos[i * 3 + 2] = zi + vz * dt;
  }
}

}  // namespace reference
