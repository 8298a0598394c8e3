// tack.random against an independent C++ implementation of its definition (SplitMix64 seeding,
// PCG32 steps, 24-bit floats, Box-Muller), and a Monte Carlo estimate of pi.
#include <bit>
#include <cmath>
#include <numbers>

#include "test_support.hpp"

namespace tack {
namespace {

uint64_t seed(uint64_t index, uint64_t stream) {
  uint64_t z = index * 0x9E3779B97F4A7C15ull + stream;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint32_t pcg32(uint64_t& state) {
  uint64_t old = state;
  state = old * 6364136223846793005ull + 1442695040888963407ull;
  uint32_t xorshifted = static_cast<uint32_t>(((old >> 18) ^ old) >> 27);
  uint32_t rot = static_cast<uint32_t>(old >> 59);
  return (xorshifted >> rot) | (xorshifted << ((-rot) & 31));
}

float uniform(uint64_t& state) {
  return static_cast<float>(pcg32(state) >> 8) * (1.0f / 16777216.0f);
}

Module random_kernels() {
  return Module::from_file(test::kernels_dir() + "/random.py");
}

TEST(Random, TheSameBitsAsTheDefinition) {
  const int64_t n = 5000;
  Array u = empty({n}), z = empty({n});
  random_kernels().kernel("draws")(u, z);
  auto U = u.to_vector<float>(), Z = z.to_vector<float>();
  for (int64_t i = 0; i < n; ++i) {
    uint64_t s = seed(static_cast<uint64_t>(i), 3);
    float want_u = uniform(s);
    float u1 = uniform(s), u2 = uniform(s);
    float want_z = std::sqrt(-2.0f * std::log(1.0f - u1)) *
                   std::cos(static_cast<float>(2 * std::numbers::pi) * u2);
    ASSERT_EQ(std::bit_cast<uint32_t>(U[i]), std::bit_cast<uint32_t>(want_u)) << i;
    ASSERT_EQ(std::bit_cast<uint32_t>(Z[i]), std::bit_cast<uint32_t>(want_z)) << i;
    ASSERT_TRUE(U[i] >= 0.0f && U[i] < 1.0f);
  }
}

TEST(Random, MonteCarloEstimateOfPi) {
  const int64_t threads = 4096;
  const int32_t samples = 256;
  Array hits = empty({threads}, i32);
  random_kernels().kernel("monte_carlo_pi")(samples, hits);
  double pi = 4.0 * hits.sum() / (static_cast<double>(threads) * samples);
  EXPECT_NEAR(pi, std::numbers::pi, 0.01);
  // And exactly what the definition gives.
  int64_t want = 0;
  for (int64_t i = 0; i < threads; ++i) {
    uint64_t s = seed(static_cast<uint64_t>(i), 7);
    for (int k = 0; k < samples; ++k) {
      float x = uniform(s), y = uniform(s);
      want += x * x + y * y < 1.0f;
    }
  }
  EXPECT_EQ(static_cast<int64_t>(hits.sum()), want);
}

TEST(Random, StateMustComeFromSeed) {
  auto e = test::compile_error(
      "import tack\n@tack.kernel\ndef k(x):\n    for i in range(1):\n        u, s = "
      "tack.random.uniform(5)\n",
      "f32[]");
  EXPECT_NE(e.message().find("the u64 that tack.random.seed() returns"), std::string::npos)
      << e.what();
  auto d = test::compile_error(
      "import tack\n@tack.kernel\ndef k(x):\n    for i in range(1):\n        s = "
      "tack.random.seed(i, 0)\n"
      "        x[i] = tack.random.uniform(s)\n",
      "f32[]");
  EXPECT_NE(d.hint().find("u, s = tack.random.uniform(s)"), std::string::npos) << d.what();
}

}  // namespace
}  // namespace tack
