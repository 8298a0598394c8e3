// The demo: loads kernels.py, runs each kernel on the CPU, checks it against plain C++ and prints
// results and timings (the first call includes compiling, or loading from the disk cache).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "reference.hpp"
#include "tack/tack.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// Runs `call` once (first call) and then `reps` times; returns {first ms, steady ms per call}.
template <typename F>
std::pair<double, double> timed(F&& call, int reps) {
  auto t0 = Clock::now();
  call();
  double first = ms_since(t0);
  auto t1 = Clock::now();
  for (int i = 0; i < reps; ++i) call();
  return {first, ms_since(t1) / reps};
}

int failures = 0;

template <typename T>
void report(const char* name, std::pair<double, double> t, const std::vector<T>& got,
            const std::vector<T>& want, const std::string& sample) {
  bool ok = got == want;
  failures += !ok;
  std::printf("%-11s first call %8.2f ms, then %8.3f ms   %s   %s\n", name, t.first, t.second,
              ok ? "matches C++" : "MISMATCH", sample.c_str());
}

std::vector<float> random_floats(size_t n, float lo, float hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = argc > 1 ? argv[1] : TACK_DEMO_KERNELS;
  tack::set_default_device("cpu");
  tack::Module m = tack::Module::from_file(path);
  std::printf("Tack %s on %s, kernels from %s\n\n", tack::version(),
              tack::get_default_device().name().c_str(), path.c_str());

  {  // vector_add and saxpy over 16 M elements
    const int64_t n = 1 << 24;
    auto hx = random_floats(n, -1, 1, 1), hy = random_floats(n, -1, 1, 2);
    tack::Array x = tack::empty({n}), y = tack::empty({n}), out = tack::empty({n});
    tack::copyto(x, hx);
    tack::copyto(y, hy);
    std::vector<float> want(n);

    tack::Kernel vector_add = m.kernel("vector_add");
    auto t = timed([&] { vector_add(x, y, out); }, 20);
    reference::vector_add(hx.data(), hy.data(), want.data(), n);
    auto got = out.to_vector<float>();
    report("vector_add", t, got, want, "out[1] = " + std::to_string(got[1]));

    tack::Kernel saxpy = m.kernel("saxpy");
    t = timed([&] { saxpy(2.5f, x, y, out); }, 20);
    reference::saxpy(2.5f, hx.data(), hy.data(), want.data(), n);
    got = out.to_vector<float>();
    report("saxpy", t, got, want, "out[1] = " + std::to_string(got[1]));
  }
  {  // stencil5 on a 4096 x 4096 grid
    const int64_t h = 4096, w = 4096;
    auto hu = random_floats(h * w, 0, 1, 3);
    tack::Array u = tack::empty({h, w}), out = tack::zeros({h, w});
    tack::copyto(u, hu);
    std::vector<float> want(h * w, 0.0f);
    tack::Kernel stencil5 = m.kernel("stencil5");
    auto t = timed([&] { stencil5(u, out); }, 10);
    reference::stencil5(hu.data(), want.data(), h, w);
    auto got = out.to_vector<float>();
    report("stencil5", t, got, want, "out[1,1] = " + std::to_string(got[w + 1]));
  }
  {  // Mandelbrot, 1024 x 1024, 256 iterations
    const int64_t h = 1024, w = 1024;
    tack::Array out = tack::empty({h, w}, tack::i32);
    tack::Kernel mandelbrot = m.kernel("mandelbrot");
    const float x0 = -2.0f, y0 = -1.25f, dx = 2.5f / w, dy = 2.5f / h;
    auto t = timed([&] { mandelbrot(out, x0, y0, dx, dy, 256); }, 5);
    std::vector<int32_t> want(h * w);
    reference::mandelbrot(want.data(), h, w, x0, y0, dx, dy, 256);
    auto got = out.to_vector<int32_t>();
    long inside = std::count(got.begin(), got.end(), 256);
    report("mandelbrot", t, got, want, "points inside: " + std::to_string(inside));
  }
  {  // n-body, 4096 bodies
    const int64_t n = 4096;
    auto hp = random_floats(n * 3, -1, 1, 4), hv = random_floats(n * 3, -0.1f, 0.1f, 5);
    auto hm = random_floats(n, 0.5f, 1.5f, 6);
    tack::Array pos = tack::empty({n, 3}), vel = tack::empty({n, 3}), mass = tack::empty({n});
    tack::Array new_pos = tack::empty({n, 3}), new_vel = tack::empty({n, 3});
    tack::copyto(pos, hp);
    tack::copyto(vel, hv);
    tack::copyto(mass, hm);
    tack::Kernel nbody = m.kernel("nbody_step");
    auto t = timed([&] { nbody(pos, vel, mass, new_pos, new_vel, 0.01f); }, 3);
    std::vector<float> want_p(n * 3), want_v(n * 3);
    reference::nbody_step(hp.data(), hv.data(), hm.data(), want_p.data(), want_v.data(), 0.01f, n);
    auto got = new_pos.to_vector<float>();
    report("nbody_step", t, got, want_p, "x[0] = " + std::to_string(got[0]));
  }
  auto s = tack::cache_stats();
  std::printf("\ncompiled %llu variants, loaded %llu from the disk cache (%s)\n",
              static_cast<unsigned long long>(s.compiles),
              static_cast<unsigned long long>(s.disk_hits), tack::cache_dir().c_str());
  return failures == 0 ? 0 : 1;
}
