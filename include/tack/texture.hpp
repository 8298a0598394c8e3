// Sampled textures: a snapshot of an f32 array that kernels read with normalized coordinates,
// trilinear filtering and clamp-to-edge addressing (tex.sample(u, v, w) in a kernel).
#pragma once

#include <array>
#include <cstdint>

#include "tack/array.hpp"

namespace tack {

// How a texture is filtered. Linear: by the device's texture unit where its backend has one
// (BackendInfo::supports_hardware_textures), whose weights are coarser (docs/language.md states
// the bound), else in software. LinearExact: in software on every backend, the same bits
// everywhere.
enum class Interp : uint8_t { Linear, LinearExact };

class Texture {
 public:
  Texture() = default;

  int dims() const { return dims_; }  // 2 or 3
  Interp interp() const { return interp_; }
  bool exact() const { return interp_ == Interp::LinearExact; }
  // The texels: (height, width) or (depth, height, width), x fastest, on the source's device.
  const Array& data() const { return data_; }
  // Copies the source array again, after it has changed (and the device's image of it).
  void update();

 private:
  friend Texture texture2d(const Array&, std::array<int64_t, 2>, Interp);
  friend Texture texture3d(const Array&, std::array<int64_t, 3>, Interp);
  Texture(const Array& source, Shape shape, Interp interp);

  Array source_;
  Array data_;
  int dims_ = 0;
  Interp interp_ = Interp::Linear;
};

// A texture of `source` (f32, width * height [* depth] elements, x fastest): shape is (W, H) or
// (W, H, D). Throws TypeError for another dtype and ValueError for a size that does not match.
Texture texture2d(const Array& source, std::array<int64_t, 2> shape,
                  Interp interp = Interp::Linear);
Texture texture3d(const Array& source, std::array<int64_t, 3> shape,
                  Interp interp = Interp::Linear);

}  // namespace tack
