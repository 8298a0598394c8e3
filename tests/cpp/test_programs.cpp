// The programs of examples/programs.py against plain C++, over several steps.
#include <random>

#include "test_support.hpp"

namespace tack {
namespace {

Module programs() {
  return Module::from_file(std::string(TACK_TEST_KERNELS_DIR) + "/../../examples/programs.py");
}

TEST(Programs, HeatDiffusion) {
  const int64_t h = 64, w = 80;
  std::vector<float> u(h * w, 0.0f);
  for (int64_t j = 0; j < w; ++j) u[j] = 100.0f;  // a hot top edge
  Array a = empty({h, w}), b = empty({h, w});
  copyto(a, u);
  Kernel step = programs().kernel("heat_step");
  std::vector<float> next(u.size());
  for (int s = 0; s < 50; ++s) {
    step(a, b, 0.2f);
    std::swap(a, b);
    for (int64_t i = 0; i < h; ++i)
      for (int64_t j = 0; j < w; ++j) {
        float c = u[i * w + j];
        if (i == 0 || j == 0 || i == h - 1 || j == w - 1) {
          next[i * w + j] = c;
        } else {
          float lap = u[(i - 1) * w + j] + u[(i + 1) * w + j] + u[i * w + j - 1] +
                      u[i * w + j + 1] - 4.0f * c;
          next[i * w + j] = c + 0.2f * lap;
        }
      }
    u.swap(next);
  }
  EXPECT_EQ(a.to_vector<float>(), u);
}

TEST(Programs, WaveEquation) {
  const int64_t n = 200;
  std::vector<double> prev(n, 0.0), cur(n, 0.0);
  for (int64_t i = 90; i < 110; ++i) prev[i] = cur[i] = std::sin(3.14159 * (i - 90) / 20.0);
  Array p = empty({n}, f64), c = empty({n}, f64), nx = empty({n}, f64);
  copyto(p, prev);
  copyto(c, cur);
  Kernel step = programs().kernel("wave_step");
  std::vector<double> next(n);
  for (int s = 0; s < 100; ++s) {
    step(p, c, nx, 0.25);
    Array t = p;
    p = c;
    c = nx;
    nx = t;
    for (int64_t i = 0; i < n; ++i)
      next[i] = i == 0 || i == n - 1
                    ? 0.0
                    : 2.0 * cur[i] - prev[i] + 0.25 * (cur[i - 1] - 2.0 * cur[i] + cur[i + 1]);
    prev.swap(cur);
    cur.swap(next);
  }
  EXPECT_EQ(c.to_vector<double>(), cur);
}

TEST(Programs, GameOfLife) {
  const int64_t h = 32, w = 40;
  std::mt19937 rng(3);
  std::vector<int32_t> board(h * w);
  for (auto& c : board) c = rng() % 3 == 0;
  Array a = empty({h, w}, i32), b = empty({h, w}, i32);
  copyto(a, board);
  Kernel step = programs().kernel("life_step");
  std::vector<int32_t> next(board.size());
  for (int s = 0; s < 30; ++s) {
    step(a, b);
    std::swap(a, b);
    for (int64_t i = 0; i < h; ++i)
      for (int64_t j = 0; j < w; ++j) {
        int n = 0;
        for (int di = -1; di <= 1; ++di)
          for (int dj = -1; dj <= 1; ++dj)
            if (di || dj) n += board[((i + di + h) % h) * w + (j + dj + w) % w];
        next[i * w + j] = n == 3 || (n == 2 && board[i * w + j] == 1);
      }
    board.swap(next);
  }
  EXPECT_EQ(a.to_vector<int32_t>(), board);
}

}  // namespace
}  // namespace tack
