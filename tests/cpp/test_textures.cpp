// Textures on every available backend against plain C++ that samples by the language's definition
// (docs/language.md, "Textures") with the same float operations in the same order: bit for bit
// in software (the CPU, interp LinearExact everywhere), and on a backend with hardware textures
// (OpenCL images on PoCL here) exactly at texel centres and within the documented bound
// elsewhere: |hardware - software| <= dims / 256 * (largest texel - smallest texel).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "test_support.hpp"

namespace tack {
namespace {

Module vectors() {
  return Module::from_file(std::string(TACK_TEST_KERNELS_DIR) + "/vectors.py");
}

std::vector<float> uniform(size_t n, float lo, float hi, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(gen);
  return v;
}

// The language's sampling of texels (depth, height, width), x fastest; `c` holds `dims`
// coordinates, x first. Along each axis x = c * size - 0.5, the texels floor(x) and floor(x) + 1
// clamped to the edges, blended a * (1 - t) + b * t along x, then y, then z.
float sample_reference(const std::vector<float>& texels, const std::array<int64_t, 3>& whd,
                       int dims, const float* c) {
  int64_t i0[3] = {0, 0, 0}, i1[3] = {0, 0, 0};
  float t[3] = {0, 0, 0};
  for (int a = 0; a < dims; ++a) {
    int64_t size = whd[a];
    float x = c[a] * static_cast<float>(size) - 0.5f;
    float fl = std::floor(x);
    t[a] = x - fl;
    int64_t base = static_cast<int64_t>(fl);
    i0[a] = std::clamp<int64_t>(base, 0, size - 1);
    i1[a] = std::clamp<int64_t>(base + 1, 0, size - 1);
  }
  auto at = [&](int64_t x, int64_t y, int64_t z) { return texels[(z * whd[1] + y) * whd[0] + x]; };
  auto along_x = [&](int64_t y, int64_t z) {
    return at(i0[0], y, z) * (1.0f - t[0]) + at(i1[0], y, z) * t[0];
  };
  auto along_y = [&](int64_t z) {
    return along_x(i0[1], z) * (1.0f - t[1]) + along_x(i1[1], z) * t[1];
  };
  if (dims == 2) return along_y(0);
  return along_y(i0[2]) * (1.0f - t[2]) + along_y(i1[2]) * t[2];
}

// The documented bound of hardware filtering against the software path.
float bound(const std::vector<float>& texels, int dims) {
  auto [lo, hi] = std::minmax_element(texels.begin(), texels.end());
  return static_cast<float>(dims) / 256.0f * (*hi - *lo);
}

bool hardware(const Device& d) {
  return d.backend().supports_hardware_textures;
}

struct Sampled {
  std::vector<float> got, want;
};

// sample3d or sample2d of a texture of `texels` at `n` coordinates.
Sampled sample(const Device& d, const std::vector<float>& texels, std::array<int64_t, 3> whd,
               int dims, const std::vector<float>& coords, Interp interp) {
  int64_t n = static_cast<int64_t>(coords.size()) / dims;
  Array source = empty({static_cast<int64_t>(texels.size())}, DType::F32, &d);
  copyto(source, texels);
  Texture tex =
      dims == 3 ? texture3d(source, whd, interp) : texture2d(source, {whd[0], whd[1]}, interp);
  Array c = empty({n, dims}, DType::F32, &d), out = empty({n}, DType::F32, &d);
  copyto(c, coords);
  vectors().kernel(dims == 3 ? "sample3d" : "sample2d")(tex, c, out);
  Sampled s{out.to_vector<float>(), {}};
  for (int64_t i = 0; i < n; ++i)
    s.want.push_back(sample_reference(texels, whd, dims, &coords[i * dims]));
  return s;
}

class TexturesOnEveryBackend : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    for (const BackendStatus& s : backend_status())
      if (s.name == GetParam() && !s.available) GTEST_SKIP() << s.reason;
    dev_ = device(GetParam());
  }
  Device dev_;
};

// Extents that are powers of two, so that the centres (i + 0.5) / size are exact floats.
TEST_P(TexturesOnEveryBackend, TexelCentresReadTheTexelItself) {
  std::array<int64_t, 3> whd = {8, 4, 2};
  std::vector<float> texels = uniform(8 * 4 * 2, -1, 1, 11), coords;
  for (int64_t z = 0; z < whd[2]; ++z)
    for (int64_t y = 0; y < whd[1]; ++y)
      for (int64_t x = 0; x < whd[0]; ++x) {
        coords.push_back((static_cast<float>(x) + 0.5f) / static_cast<float>(whd[0]));
        coords.push_back((static_cast<float>(y) + 0.5f) / static_cast<float>(whd[1]));
        coords.push_back((static_cast<float>(z) + 0.5f) / static_cast<float>(whd[2]));
      }
  for (Interp interp : {Interp::Linear, Interp::LinearExact}) {
    Sampled s = sample(dev_, texels, whd, 3, coords, interp);
    EXPECT_EQ(s.got, texels);
  }
  // And in 2-D.
  std::vector<float> flat = uniform(16 * 8, -3, 2, 15), centres;
  for (int64_t y = 0; y < 8; ++y)
    for (int64_t x = 0; x < 16; ++x) {
      centres.push_back((static_cast<float>(x) + 0.5f) / 16.0f);
      centres.push_back((static_cast<float>(y) + 0.5f) / 8.0f);
    }
  for (Interp interp : {Interp::Linear, Interp::LinearExact})
    EXPECT_EQ(sample(dev_, flat, {16, 8, 1}, 2, centres, interp).got, flat);
}

TEST_P(TexturesOnEveryBackend, HardwareIsWithinTheBoundAndExactIsBitForBit) {
  for (int dims : {2, 3}) {
    std::array<int64_t, 3> whd = {7, 6, dims == 3 ? 5 : 1};
    std::vector<float> texels = uniform(whd[0] * whd[1] * whd[2], -2, 3, 12 + dims);
    std::vector<float> coords = uniform(500 * dims, -0.2f, 1.2f, 13);  // clamped beyond [0, 1]
    Sampled exact = sample(dev_, texels, whd, dims, coords, Interp::LinearExact);
    EXPECT_EQ(exact.got, exact.want) << dims << "-D, interp LinearExact";
    Sampled s = sample(dev_, texels, whd, dims, coords, Interp::Linear);
    if (!hardware(dev_)) {
      EXPECT_EQ(s.got, s.want) << dims << "-D, sampled in software";
      continue;
    }
    float worst = 0;
    for (size_t i = 0; i < s.got.size(); ++i)
      worst = std::max(worst, std::fabs(s.got[i] - s.want[i]));
    auto [lo, hi] = std::minmax_element(texels.begin(), texels.end());
    EXPECT_LE(worst, bound(texels, dims)) << dims << "-D";
    // The measured difference, for docs/language.md.
    std::printf("%s %d-D hardware filtering: max |hw - sw| = %.3g of a texel range of %.3g\n",
                GetParam().c_str(), dims, worst, *hi - *lo);
  }
}

TEST_P(TexturesOnEveryBackend, UpdateRefreshesWhatKernelsSample) {
  std::vector<float> texels = uniform(12, 0, 1, 14);
  Array source = empty({12}, DType::F32, &dev_);
  copyto(source, texels);
  Texture tex = texture2d(source, {4, 3});
  std::vector<float> coords = {0.125f, 0.5f, 0.625f, 1.0f / 6.0f};
  Array c = empty({2, 2}, DType::F32, &dev_), out = empty({2}, DType::F32, &dev_);
  copyto(c, coords);
  vectors().kernel("sample2d")(tex, c, out);
  EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{texels[1 * 4 + 0], texels[0 * 4 + 2]}));
  source.fill(2.0);
  vectors().kernel("sample2d")(tex, c, out);  // a snapshot: unchanged until update()
  EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{texels[1 * 4 + 0], texels[0 * 4 + 2]}));
  tex.update();
  vectors().kernel("sample2d")(tex, c, out);
  EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{2.0f, 2.0f}));
}

TEST_P(TexturesOnEveryBackend, RayMarchingAVolume) {
  std::array<int64_t, 3> whd = {9, 8, 7};
  std::vector<float> density = uniform(9 * 8 * 7, 0, 1, 15);
  Array source = empty({9 * 8 * 7}, DType::F32, &dev_);
  copyto(source, density);
  const int64_t h = 12, w = 10;
  const int steps = 16;
  std::vector<float> want(h * w);
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x) {
      float acc = 0;
      for (int k = 0; k < steps; ++k) {
        float c[3] = {(static_cast<float>(x) + 0.5f) / static_cast<float>(w),
                      (static_cast<float>(y) + 0.5f) / static_cast<float>(h),
                      (static_cast<float>(k) + 0.5f) / static_cast<float>(steps)};
        acc += sample_reference(density, whd, 3, c);
      }
      want[y * w + x] = acc / static_cast<float>(steps);
    }
  for (Interp interp : {Interp::Linear, Interp::LinearExact}) {
    Texture volume = texture3d(source, whd, interp);
    Array image = empty({h, w}, DType::F32, &dev_);
    vectors().kernel("march_volume")(volume, image, steps);
    std::vector<float> got = image.to_vector<float>();
    if (interp == Interp::LinearExact || !hardware(dev_)) {
      EXPECT_EQ(got, want);
      continue;
    }
    // An average of samples each within the bound (and of the float rounding of the sum).
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i], want[i], bound(density, 3) + 1e-5f) << "pixel " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, TexturesOnEveryBackend,
                         testing::Values("cpu", "opencl", "cuda", "hip", "level_zero", "metal"),
                         [](const testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace tack
