// The Metal backend's probe where there is no Metal: every platform but Apple's, on which
// metal_backend.mm is built instead.
#include "backends/metal/metal_backend.hpp"

namespace tack::metal {

detail::Probe probe() {
  return {nullptr,
          "the Metal backend is built only on Apple platforms (macOS); this build is not one"};
}

}  // namespace tack::metal
