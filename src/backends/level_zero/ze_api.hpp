// Level Zero and the Intel offline compiler, loaded at run time with dlopen: Tack never links
// against them. The Level Zero types come from the loader's header (Debian libze-dev, API 1.4);
// ocloc's two functions are declared here from ocloc_api.h, which ships only with the compiler.
#pragma once

#include <level_zero/ze_api.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tack::level_zero {

struct ZeApi {
  // clang-format off
#define TACK_ZE_FUNCTIONS(X)                                                                     \
  X(Init) X(DriverGet) X(DriverGetProperties) X(DeviceGet) X(DeviceGetProperties)                \
  X(DeviceGetComputeProperties) X(DeviceGetModuleProperties)                                     \
  X(DeviceGetCommandQueueGroupProperties) X(ContextCreate)                                       \
  X(CommandListCreateImmediate) X(CommandListAppendBarrier) X(CommandListAppendMemoryCopy)       \
  X(CommandListAppendMemoryFill) X(CommandListAppendLaunchKernel)                                \
  X(EventPoolCreate) X(EventCreate) X(EventHostSynchronize) X(EventHostReset)                    \
  X(MemAllocDevice) X(MemFree)                                                                   \
  X(ModuleCreate) X(ModuleDestroy) X(ModuleBuildLogGetString) X(ModuleBuildLogDestroy)           \
  X(KernelCreate) X(KernelDestroy) X(KernelSetArgumentValue) X(KernelSetGroupSize)                \
  X(DeviceGetImageProperties) X(ImageCreate) X(ImageDestroy) X(CommandListAppendImageCopyFromMemory)
  // clang-format on
#define TACK_ZE_MEMBER(name) decltype(&::ze##name) name = nullptr;
  TACK_ZE_FUNCTIONS(TACK_ZE_MEMBER)
#undef TACK_ZE_MEMBER

  // Loads the loader (TACK_LEVEL_ZERO_LIBRARY, else libze_loader.so.1). Returns "" on success,
  // else why Level Zero is unavailable and what to install.
  std::string load();
};

// "ZE_RESULT_ERROR_DEVICE_LOST (0x70000001)".
std::string result_name(ze_result_t r);

// libocloc: `ocloc` as a function. Signatures from ocloc_api.h (intel-opencl-icd).
struct Ocloc {
  using Invoke = int (*)(unsigned num_args, const char* argv[], uint32_t num_sources,
                         const uint8_t** sources, const uint64_t* source_lengths,
                         const char** source_names, uint32_t num_headers, const uint8_t** headers,
                         const uint64_t* header_lengths, const char** header_names,
                         uint32_t* num_outputs, uint8_t*** outputs, uint64_t** output_lengths,
                         char*** output_names);
  using FreeOutput = int (*)(uint32_t* num_outputs, uint8_t*** outputs, uint64_t** output_lengths,
                             char*** output_names);
  using Version = int (*)();
  Invoke invoke = nullptr;
  FreeOutput free_output = nullptr;
  Version version = nullptr;  // oclocVersion, where the library has it
  std::string missing;        // why it cannot be used, or ""
};

// The process's libocloc (TACK_OCLOC_LIBRARY, else libocloc.so), loaded on the first call.
const Ocloc& ocloc();

struct OclocOutput {
  std::string native;  // the device binary
  std::string spirv;   // the SPIR-V it was compiled from
  std::string log;
};

// `ocloc compile` of OpenCL C source for `device` (pvc, dg2, or a PCI id such as 0x0bd5) with
// `options`, in memory. Throws DeviceError naming `kernel_name` with ocloc's log.
OclocOutput ocloc_compile(const std::string& source, const std::string& device,
                          const std::string& options, const std::string& kernel_name);

}  // namespace tack::level_zero
