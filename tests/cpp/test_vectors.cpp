// Vectors and matrices (tests/kernels/vectors.py) against plain C++ that performs the same float
// operations in the same order, so the results must match bit for bit.
#include <cmath>
#include <random>

#include "test_support.hpp"

namespace tack {
namespace {

Module vectors() {
  return Module::from_file(std::string(TACK_TEST_KERNELS_DIR) + "/vectors.py");
}

using V3 = std::array<float, 3>;

float dot(const V3& a, const V3& b) {
  return (a[0] * b[0] + a[1] * b[1]) + a[2] * b[2];
}

std::vector<float> random_floats(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> d;
  std::vector<float> v(n);
  for (float& x : v) x = d(gen);
  return v;
}

V3 at(const std::vector<float>& v, int64_t i) {
  return {v[3 * i], v[3 * i + 1], v[3 * i + 2]};
}

TEST(Vectors, GeometryHelpersMatchPlainCpp) {
  const int64_t n = 513;
  std::vector<float> a = random_floats(3 * n, 1), b = random_floats(3 * n, 2);
  Array va = empty({n, 3}), vb = empty({n, 3});
  copyto(va, a);
  copyto(vb, b);
  Array d = empty({n}), c = empty({n, 3}), len = empty({n}), dist = empty({n}), nrm = empty({n, 3}),
        refl = empty({n, 3});
  vectors().kernel("geometry")(va, vb, d, c, len, dist, nrm, refl);
  std::vector<float> want_d(n), want_c(3 * n), want_len(n), want_dist(n), want_nrm(3 * n),
      want_refl(3 * n);
  for (int64_t i = 0; i < n; ++i) {
    V3 u = at(a, i), v = at(b, i);
    want_d[i] = dot(u, v);
    V3 cr = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
    float l = std::sqrt(dot(u, u));
    V3 diff = {u[0] - v[0], u[1] - v[1], u[2] - v[2]};
    float lv = std::sqrt(dot(v, v));
    V3 nv = {v[0] / lv, v[1] / lv, v[2] / lv};
    float s = 2.0f * dot(nv, u);
    want_len[i] = l;
    want_dist[i] = std::sqrt(dot(diff, diff));
    for (int k = 0; k < 3; ++k) {
      want_c[3 * i + k] = cr[k];
      want_nrm[3 * i + k] = u[k] / l;
      want_refl[3 * i + k] = u[k] - s * nv[k];
    }
  }
  EXPECT_EQ(d.to_vector<float>(), want_d);
  EXPECT_EQ(c.to_vector<float>(), want_c);
  EXPECT_EQ(len.to_vector<float>(), want_len);
  EXPECT_EQ(dist.to_vector<float>(), want_dist);
  EXPECT_EQ(nrm.to_vector<float>(), want_nrm);
  EXPECT_EQ(refl.to_vector<float>(), want_refl);
}

TEST(Vectors, MatrixVectorProductsAndTwoByTwoDeterminant) {
  const int64_t n = 101;
  std::vector<float> m = random_floats(9 * n, 3), v = random_floats(3 * n, 4);
  Array am = empty({n, 3, 3}), av = empty({n, 3});
  copyto(am, m);
  copyto(av, v);
  Array mv = empty({n, 3}), vm = empty({n, 3}), mm = empty({n, 3, 3}), t = empty({n, 3, 3}),
        det = empty({n}), inv = empty({n, 3, 3}), elem = empty({n, 2});
  vectors().kernel("matrices")(am, av, mv, vm, mm, t, det, inv, elem);
  std::vector<float> got_mv = mv.to_vector<float>(), got_vm = vm.to_vector<float>(),
                     got_t = t.to_vector<float>(), got_inv = inv.to_vector<float>();
  for (int64_t i = 0; i < n; ++i) {
    auto M = [&](int r, int c) { return m[9 * i + 3 * r + c]; };
    for (int r = 0; r < 3; ++r) {
      float want_mv = (M(r, 0) * v[3 * i] + M(r, 1) * v[3 * i + 1]) + M(r, 2) * v[3 * i + 2];
      float want_vm = (v[3 * i] * M(0, r) + v[3 * i + 1] * M(1, r)) + v[3 * i + 2] * M(2, r);
      EXPECT_EQ(got_mv[3 * i + r], want_mv);
      EXPECT_EQ(got_vm[3 * i + r], want_vm);
      for (int c = 0; c < 3; ++c) EXPECT_EQ(got_t[9 * i + 3 * r + c], M(c, r));
    }
    // inverse @ m is the identity, to f32 precision.
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) {
        double s = 0;
        for (int k = 0; k < 3; ++k) s += double(got_inv[9 * i + 3 * r + k]) * M(k, c);
        double scale = std::fabs(det.to_vector<float>()[i]) < 1e-3 ? 1e3 : 1e-3;
        EXPECT_NEAR(s, r == c ? 1.0 : 0.0, scale) << "matrix " << i;
      }
  }
  EXPECT_EQ(elem.to_vector<float>()[0], 11.0f);
  EXPECT_EQ(elem.to_vector<float>()[1], 2.0f);
}

TEST(Vectors, ComponentsAssignedThroughARunTimeIndex) {
  const int64_t n = 64;
  std::vector<float> a = random_floats(3 * n, 5);
  std::vector<int32_t> k(n);
  for (int64_t i = 0; i < n; ++i) k[i] = static_cast<int32_t>(i % 3);
  Array va = empty({n, 3}), vk = empty({n}, i32), out = empty({n}), out_vec = empty({n, 3});
  copyto(va, a);
  copyto(vk, k);
  vectors().kernel("dynamic_index")(va, vk, out, out_vec);
  std::vector<float> want = a, want_out(n);
  for (int64_t i = 0; i < n; ++i) {
    want_out[i] = a[3 * i + k[i]];
    want[3 * i + k[i]] = 10.0f;
  }
  EXPECT_EQ(out.to_vector<float>(), want_out);
  EXPECT_EQ(out_vec.to_vector<float>(), want);
}

TEST(Textures, SampleTrilinearlyWithClampedEdges) {
  const int64_t w = 4, h = 3, d = 2;
  std::vector<float> texels = random_floats(w * h * d, 6);
  Array source = empty({w * h * d});
  copyto(source, texels);
  Texture tex = texture3d(source, {w, h, d});
  // Texel centres read the texel itself; beyond the edge, the edge texel.
  std::vector<float> coords = {0.5f / w, 0.5f / h, 0.5f / d,   // texel (0, 0, 0)
                               1.5f / w, 2.5f / h, 1.5f / d,   // texel (1, 2, 1)
                               -1.0f,    2.0f,     0.5f / d,   // clamped: (0, 2, 0)
                               1.0f / w, 0.5f / h, 0.5f / d};  // halfway between x 0 and 1
  Array c = empty({4, 3}), out = empty({4});
  copyto(c, coords);
  vectors().kernel("sample3d")(tex, c, out);
  auto texel = [&](int64_t x, int64_t y, int64_t z) { return texels[(z * h + y) * w + x]; };
  std::vector<float> got = out.to_vector<float>();
  EXPECT_EQ(got[0], texel(0, 0, 0));
  EXPECT_EQ(got[1], texel(1, 2, 1));
  EXPECT_EQ(got[2], texel(0, 2, 0));
  EXPECT_EQ(got[3], texel(0, 0, 0) * 0.5f + texel(1, 0, 0) * 0.5f);
  try {
    texture2d(source, {5, 5});
    FAIL() << "expected a ValueError";
  } catch (const ValueError&) {
  }
}

TEST(Vectors, AnArrayIndexedWithOneIndexTooFewNeedsVectorsInItsLastDimension) {
  Array a = zeros({4, 5});
  try {
    vectors().kernel("arithmetic")(a, a, a, a, a);
    FAIL() << "expected a TypeError";
  } catch (const TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("last dimension is 2, 3 or 4"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tack
