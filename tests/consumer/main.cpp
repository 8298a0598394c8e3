// Built against an installed Tack (find_package(Tack), Tack::tack): loads a kernels file (Tack's
// examples/kernels.py), runs each of its five kernels on random data and checks the results against
// the plain C++ references of examples/reference.hpp, bit for bit. One line per kernel; the exit
// status is 0 when every kernel matches, 1 on a mismatch, 2 when Tack raised an error.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <random>
#include <string>
#include <vector>

#include <tack/tack.hpp>

#include "reference.hpp"

namespace {

int failures = 0;

std::vector<float> random_floats(size_t n, float lo, float hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

std::string show(float v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
  return buf;
}
std::string show(int32_t v) {
  return std::to_string(v);
}

// Compares the bytes, so that -0.0 against 0.0 or two NaNs count as what they are.
template <typename T>
bool same_bits(const std::vector<T>& got, const std::vector<T>& want, std::string* where) {
  if (got.size() != want.size()) {
    *where = std::to_string(got.size()) + " elements, expected " + std::to_string(want.size());
    return false;
  }
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0) {
      *where = "first difference at " + std::to_string(i) + ": " + show(got[i]) + ", expected " +
               show(want[i]);
      return false;
    }
  }
  return true;
}

void report(const char* kernel, const std::string& what, bool ok, const std::string& detail) {
  failures += ok ? 0 : 1;
  std::printf("%-11s %-26s %s%s%s\n", kernel, what.c_str(),
              ok ? "matches C++ bit for bit" : "MISMATCH", detail.empty() ? "" : ": ",
              detail.c_str());
}

template <typename T>
void check(const char* kernel, const std::string& what, const std::vector<T>& got,
           const std::vector<T>& want) {
  std::string where;
  bool ok = same_bits(got, want, &where);
  report(kernel, what, ok, where);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s KERNELS_FILE (Tack's examples/kernels.py)\n", argv[0]);
    return 2;
  }
  try {
    tack::set_default_device("cpu");
    tack::Module m = tack::Module::from_file(argv[1]);
    std::printf("Tack %s on %s, kernels from %s\n", tack::version(),
                tack::get_default_device().name().c_str(), argv[1]);

    {  // vector_add and saxpy
      const int64_t n = 10000;
      const auto hx = random_floats(n, -1, 1, 1), hy = random_floats(n, -1, 1, 2);
      tack::Array x = tack::empty({n}), y = tack::empty({n}), out = tack::empty({n});
      tack::copyto(x, hx);
      tack::copyto(y, hy);
      std::vector<float> want(n);

      m.kernel("vector_add")(x, y, out);
      reference::vector_add(hx.data(), hy.data(), want.data(), n);
      check("vector_add", std::to_string(n) + " elements", out.to_vector<float>(), want);

      m.kernel("saxpy")(2.5f, x, y, out);
      reference::saxpy(2.5f, hx.data(), hy.data(), want.data(), n);
      check("saxpy", std::to_string(n) + " elements", out.to_vector<float>(), want);
    }
    {  // stencil5: the interior is computed, the border stays zero on both sides
      const int64_t h = 48, w = 64;
      const auto hu = random_floats(h * w, 0, 1, 3);
      tack::Array u = tack::empty({h, w}), out = tack::zeros({h, w});
      tack::copyto(u, hu);
      m.kernel("stencil5")(u, out);
      std::vector<float> want(h * w, 0.0f);
      reference::stencil5(hu.data(), want.data(), h, w);
      check("stencil5", std::to_string(w) + "x" + std::to_string(h) + " grid",
            out.to_vector<float>(), want);
    }
    {  // mandelbrot
      const int64_t h = 60, w = 80;
      const int32_t max_iter = 100;
      const float x0 = -2.0f, y0 = -1.25f, dx = 2.5f / w, dy = 2.5f / h;
      tack::Array out = tack::empty({h, w}, tack::i32);
      m.kernel("mandelbrot")(out, x0, y0, dx, dy, max_iter);
      std::vector<int32_t> want(h * w);
      reference::mandelbrot(want.data(), h, w, x0, y0, dx, dy, max_iter);
      check("mandelbrot",
            std::to_string(w) + "x" + std::to_string(h) + ", " + std::to_string(max_iter) +
                " iterations",
            out.to_vector<int32_t>(), want);
    }
    {  // nbody_step: both outputs
      const int64_t n = 256;
      const float dt = 0.01f;
      const auto hp = random_floats(n * 3, -1, 1, 4), hv = random_floats(n * 3, -0.1f, 0.1f, 5);
      const auto hm = random_floats(n, 0.5f, 1.5f, 6);
      tack::Array pos = tack::empty({n, 3}), vel = tack::empty({n, 3}), mass = tack::empty({n});
      tack::Array new_pos = tack::empty({n, 3}), new_vel = tack::empty({n, 3});
      tack::copyto(pos, hp);
      tack::copyto(vel, hv);
      tack::copyto(mass, hm);
      m.kernel("nbody_step")(pos, vel, mass, new_pos, new_vel, dt);
      std::vector<float> want_p(n * 3), want_v(n * 3);
      reference::nbody_step(hp.data(), hv.data(), hm.data(), want_p.data(), want_v.data(), dt, n);
      std::string where_p, where_v;
      const bool ok_p = same_bits(new_pos.to_vector<float>(), want_p, &where_p);
      const bool ok_v = same_bits(new_vel.to_vector<float>(), want_v, &where_v);
      report("nbody_step", std::to_string(n) + " bodies", ok_p && ok_v,
             !ok_p ? "positions, " + where_p : !ok_v ? "velocities, " + where_v : "");
    }
    tack::sync();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "consumer: %s\n", e.what());
    return 2;
  }
  std::printf("%s\n", failures == 0 ? "all kernels match" : "MISMATCHES");
  return failures == 0 ? 0 : 1;
}
