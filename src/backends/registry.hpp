// The backends of this build: one row each, in the order `tack info` lists them. The runtime's
// device registry (runtime/device.cpp) probes a backend when first asked for it.
#pragma once

#include <span>

#include "backends/backend.hpp"

namespace tack::backends {

struct BackendEntry {
  const char* name;  // declared_info().name, known without calling it
  // What the backend declares before it is probed: its name and label, the addresses
  // memory_space() asks it about, its DLPack device type. The probed backend's info() starts
  // from it.
  BackendInfo (*declared_info)();
  // Loads the driver and lists the devices: the backend, or why it cannot run here.
  detail::Probe (*probe)();
};

std::span<const BackendEntry> backend_table();

}  // namespace tack::backends
