// Sampled textures: a snapshot of an f32 array that kernels read with normalized coordinates,
// trilinear filtering and clamp-to-edge addressing (tex.sample(u, v, w) in a kernel).
#pragma once

#include <array>
#include <cstdint>

#include "tack/array.hpp"

namespace tack {

class Texture {
 public:
  Texture() = default;

  int dims() const { return dims_; }  // 2 or 3
  // The texels: (height, width) or (depth, height, width), x fastest, on the source's device.
  const Array& data() const { return data_; }
  // Copies the source array again, after it has changed.
  void update();

 private:
  friend Texture texture2d(const Array&, std::array<int64_t, 2>);
  friend Texture texture3d(const Array&, std::array<int64_t, 3>);
  Texture(const Array& source, Shape shape);

  Array source_;
  Array data_;
  int dims_ = 0;
};

// A texture of `source` (f32, width * height [* depth] elements, x fastest): shape is (W, H) or
// (W, H, D). Throws TypeError for another dtype and ValueError for a size that does not match.
Texture texture2d(const Array& source, std::array<int64_t, 2> shape);
Texture texture3d(const Array& source, std::array<int64_t, 3> shape);

}  // namespace tack
