// The Metal backend (Apple platforms only; see metal_backend.mm and docs/backends.md). Elsewhere
// its probe says why it cannot run (metal_unavailable.cpp).
#pragma once

#include <memory>
#include <string>

#include "backends/backend.hpp"

namespace tack::metal {

// Not asked by memory_space() yet (which answers "cpu" for this memory), nor exchanged through
// DLPack from C++ (the Python bindings lend it).
BackendInfo declared_info();
// Lists the Metal devices (MTLCopyAllDevices).
detail::Probe probe();

}  // namespace tack::metal
