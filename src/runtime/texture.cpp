// Textures are snapshots: a copy of the source array made at creation and at update(), so that a
// kernel sampling one never sees a half-written source. Sampling itself is kernel code (sema), or
// the device's texture unit reading an image that the backend makes of the snapshot at the first
// launch and refreshes when update() says the snapshot changed.
#include "tack/texture.hpp"

#include <fmt/format.h>

#include "backends/backend.hpp"

namespace tack {

Texture::Texture(const Array& source, Shape shape, Interp interp)
    : source_(source), interp_(interp) {
  if (!source.valid()) throw TypeError("a texture needs an array (this one was never allocated)");
  if (source.dtype() != DType::F32)
    throw TypeError(fmt::format("a texture holds f32 texels, not {}: convert with .astype(f32)",
                                dtype_name(source.dtype())));
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 1) throw ValueError("a texture's width, height and depth are at least 1");
    n *= d;
  }
  if (n != source.size())
    throw ValueError(
        fmt::format("a texture of {} texels cannot be made from an array of {} "
                    "elements: the shape is (width, height[, depth])",
                    n, source.size()));
  dims_ = static_cast<int>(shape.size());
  // (W, H, D) given; stored row-major as (D, H, W) so that x is the fastest axis.
  Device device = source.device();
  data_ = empty(Shape(shape.rbegin(), shape.rend()), DType::F32, &device);
  update();
}

void Texture::update() {
  Array view = source_.reshape(data_.shape());
  copyto(data_, view);
  Device device = data_.device();
  device.impl()->texels_changed(device.index(), data_.data());
}

Texture texture2d(const Array& source, std::array<int64_t, 2> shape, Interp interp) {
  return Texture(source, Shape(shape.begin(), shape.end()), interp);
}

Texture texture3d(const Array& source, std::array<int64_t, 3> shape, Interp interp) {
  return Texture(source, Shape(shape.begin(), shape.end()), interp);
}

}  // namespace tack
