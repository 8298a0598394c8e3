// Devices and what their backends can do.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tack/dtype.hpp"

namespace tack {

namespace detail {
class Backend;
}

// A backend's declared capabilities (see docs/backends.md). Declared, never probed.
struct BackendInfo {
  std::string name;   // "cpu", "cuda", "hip", "level_zero", "metal", "opencl"
  std::string label;  // how messages spell it: "the CPU", "CUDA"...
  std::set<DType> supported_dtypes;
  std::set<DType> supported_atomic_dtypes;
  bool supports_device_reductions = false;
  bool supports_workgroups = false;
  // tex.sample reads the device's texture unit (images with linear filtering, coarser weights
  // than the software path's: docs/language.md); false: sampled in software, the same bits as on
  // the CPU. Textures made with interp="linear_exact" are sampled in software everywhere.
  bool supports_hardware_textures = false;
  int max_workgroup_size = 1;
  std::vector<std::string> device_memory_spaces;  // what memory_space() answers for its memory
  bool asynchronous = false;                      // launches return once queued
  // Which addresses memory_space() asks this backend about: none (the CPU: an address no backend
  // claims is host memory), addresses Tack makes up for the backend's memory handles (OpenCL,
  // asked first since no driver knows them), or device addresses its driver recognizes, other
  // libraries' memory too (CUDA).
  enum class Addresses { None, Tack, Driver };
  Addresses claims_addresses = Addresses::None;
  // DLPack's device type (DLDeviceType) of the memory to_dlpack() lends and from_dlpack() takes
  // for this backend: kDLCPU (1) for the CPU, kDLCUDA (2) for CUDA; 0 where none is.
  int dlpack_device_type = 0;

  // Derived from supported_dtypes, so that the two cannot disagree.
  bool supports_f64() const { return supported_dtypes.count(DType::F64) != 0; }
};

// One device of one backend: "cpu", "cuda:1". Cheap to copy; compares by identity.
class Device {
 public:
  Device() = default;
  const std::string& type() const;  // the backend's name
  int index() const { return index_; }
  std::string name() const;  // "cpu:0"
  const BackendInfo& backend() const;
  detail::Backend* impl() const { return backend_; }

  friend bool operator==(const Device& a, const Device& b) {
    return a.backend_ == b.backend_ && a.index_ == b.index_;
  }

 private:
  friend class detail::Backend;
  Device(detail::Backend* b, int index) : backend_(b), index_(index) {}
  detail::Backend* backend_ = nullptr;
  int index_ = 0;
};

// "cpu", "cpu:0", "cuda:1". Throws DeviceError naming what to install when the backend is not
// available on this machine, and ValueError for a name that is not a backend.
Device device(const std::string& name);
// The device of `kind` ("cuda", "cpu", ...) for this process when a launcher started several on
// the node: device(kind + ":local"), that is index node-local rank modulo the backend's device
// count (OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID or SLURM_LOCALID; 0 when none is set).
Device local_device(const std::string& kind);
// This process's node-local rank and the node's process count as the launcher set them; nullopt
// when none did.
std::optional<int> local_rank();
std::optional<int> local_size();
// Every device of every available backend.
std::vector<Device> devices();
void set_default_device(const std::string& name);
void set_default_device(const Device& d);
Device get_default_device();
// The default device's backend.
const BackendInfo& get_backend();

// A backend that Tack knows, whether or not it can run here, and why not.
struct BackendStatus {
  std::string name;
  bool available = false;
  std::string reason;  // why it is unavailable, and what to install
};
std::vector<BackendStatus> backend_status();

}  // namespace tack
