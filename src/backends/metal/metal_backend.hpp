// The Metal backend (Apple platforms only; see metal_backend.mm and docs/backends.md).
#pragma once

#include <memory>
#include <string>

#include "runtime/backend.hpp"

namespace tack::metal {

struct Probe {
  std::unique_ptr<detail::Backend> backend;  // null when Metal cannot run here
  std::string reason;                        // why
};

// Lists the Metal devices (MTLCopyAllDevices).
Probe make_metal_backend();

}  // namespace tack::metal
