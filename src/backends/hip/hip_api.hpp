// The HIP runtime and hipRTC, loaded at run time with dlmopen into a link namespace of their own:
// Tack never links against ROCm, so it builds and runs without it, and hipRTC's LLVM cannot
// collide with another LLVM in the process (PoCL's: both register the same options and abort).
// The declarations below are the few of the HIP C API that Tack calls, written here so that no
// ROCm header is needed to build; they follow hip_runtime_api.h and hiprtc.h (ROCm 5 and 6).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace tack::hip {

using hipError_t = int;  // hipSuccess is 0
using hipStream_t = struct ihipStream_t*;
using hipModule_t = struct ihipModule_t*;
using hipFunction_t = struct ihipModuleSymbol_t*;
using hiprtcResult = int;  // HIPRTC_SUCCESS is 0
using hiprtcProgram = struct _hiprtcProgram*;

enum hipMemcpyKind : int {
  hipMemcpyHostToDevice = 1,
  hipMemcpyDeviceToHost = 2,
  hipMemcpyDeviceToDevice = 3,
};

// Hardware textures: the structures of hip/driver_types.h with the same layout, unchanged from
// ROCm 5 to 6 (a test compiles static_asserts of their sizes and offsets against the installed
// headers). The copy is hipMemcpy3DAsync's, whose parameters are all size_t: HIP_MEMCPY3D, the
// driver-style one, changed its fields from unsigned to size_t in ROCm 6.
using hipArray_t = struct hipArray*;
using hipTextureObject_t = struct __hip_texture*;
struct HipArray3dDescriptor {   // HIP_ARRAY3D_DESCRIPTOR
  size_t width, height, depth;  // depth 0: a 2-D array
  int format;                   // hipArray_Format
  unsigned num_channels, flags;
};
struct HipPos {  // hipPos
  size_t x, y, z;
};
struct HipPitchedPtr {  // hipPitchedPtr
  void* ptr;
  size_t pitch, xsize, ysize;
};
struct HipExtent {  // hipExtent: in elements where an array is copied
  size_t width, height, depth;
};
struct HipMemcpy3dParms {  // hipMemcpy3DParms
  hipArray_t src_array;
  HipPos src_pos;
  HipPitchedPtr src_ptr;
  hipArray_t dst_array;
  HipPos dst_pos;
  HipPitchedPtr dst_ptr;
  HipExtent extent;
  hipMemcpyKind kind;
};
struct HipResourceDesc {  // HIP_RESOURCE_DESC, for a HIP array
  int type;               // HIPresourcetype
  union {
    hipArray_t array;
    int reserved[32];
  } res;
  unsigned flags;
};
struct HipTextureDesc {  // HIP_TEXTURE_DESC
  int address_mode[3];   // HIPaddress_mode
  int filter_mode;       // HIPfilter_mode
  unsigned flags, max_anisotropy;
  int mipmap_filter_mode;
  float mipmap_level_bias, min_mipmap_level_clamp, max_mipmap_level_clamp;
  float border_color[4];
  int reserved[12];
};
constexpr int HIP_AD_FORMAT_FLOAT = 0x20;
constexpr int HIP_RESOURCE_TYPE_ARRAY = 0;
constexpr int HIP_TR_ADDRESS_MODE_CLAMP = 1;
constexpr int HIP_TR_FILTER_MODE_LINEAR = 1;
constexpr unsigned HIP_TRSF_NORMALIZED_COORDINATES = 2;

struct HipApi {
  // The runtime (libamdhip64).
  hipError_t (*Init)(unsigned flags) = nullptr;
  hipError_t (*GetDeviceCount)(int* count) = nullptr;
  hipError_t (*SetDevice)(int device) = nullptr;
  // hipGetDevicePropertiesR0600 on ROCm 6, hipGetDeviceProperties before: the struct differs,
  // so Tack reads only gcnArchName from it (see device_arch in hip_backend.cpp).
  hipError_t (*GetDeviceProperties)(void* props, int device) = nullptr;
  hipError_t (*DriverGetVersion)(int* version) = nullptr;
  const char* (*GetErrorString)(hipError_t error) = nullptr;
  hipError_t (*StreamCreate)(hipStream_t* stream) = nullptr;
  hipError_t (*StreamSynchronize)(hipStream_t stream) = nullptr;
  hipError_t (*Malloc)(void** ptr, size_t bytes) = nullptr;
  hipError_t (*Free)(void* ptr) = nullptr;
  hipError_t (*MemcpyAsync)(void* dst, const void* src, size_t bytes, hipMemcpyKind kind,
                            hipStream_t stream) = nullptr;
  hipError_t (*MemsetD8Async)(void* dst, unsigned char value, size_t count,
                              hipStream_t stream) = nullptr;
  hipError_t (*MemsetD16Async)(void* dst, unsigned short value, size_t count,
                               hipStream_t stream) = nullptr;
  hipError_t (*MemsetD32Async)(void* dst, int value, size_t count, hipStream_t stream) = nullptr;
  hipError_t (*ModuleLoadData)(hipModule_t* module, const void* image) = nullptr;
  hipError_t (*ModuleUnload)(hipModule_t module) = nullptr;
  hipError_t (*ModuleGetFunction)(hipFunction_t* function, hipModule_t module,
                                  const char* name) = nullptr;
  hipError_t (*ModuleLaunchKernel)(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz,
                                   unsigned bx, unsigned by, unsigned bz, unsigned shared_bytes,
                                   hipStream_t stream, void** params, void** extra) = nullptr;
  hipError_t (*Array3DCreate)(hipArray_t* array, const HipArray3dDescriptor* desc) = nullptr;
  hipError_t (*ArrayDestroy)(hipArray_t array) = nullptr;
  hipError_t (*Memcpy3DAsync)(const HipMemcpy3dParms* copy, hipStream_t stream) = nullptr;
  hipError_t (*TexObjectCreate)(hipTextureObject_t* texture, const HipResourceDesc* resource,
                                const HipTextureDesc* sampling, const void* view) = nullptr;
  hipError_t (*TexObjectDestroy)(hipTextureObject_t texture) = nullptr;
  // hipRTC (inside libamdhip64.so.5; libhiprtc.so on ROCm 6).
  hiprtcResult (*RtcVersion)(int* major, int* minor) = nullptr;
  hiprtcResult (*RtcCreateProgram)(hiprtcProgram* prog, const char* source, const char* name,
                                   int num_headers, const char** headers,
                                   const char** include_names) = nullptr;
  hiprtcResult (*RtcCompileProgram)(hiprtcProgram prog, int num_options,
                                    const char** options) = nullptr;
  hiprtcResult (*RtcGetProgramLogSize)(hiprtcProgram prog, size_t* size) = nullptr;
  hiprtcResult (*RtcGetProgramLog)(hiprtcProgram prog, char* log) = nullptr;
  hiprtcResult (*RtcGetCodeSize)(hiprtcProgram prog, size_t* size) = nullptr;
  hiprtcResult (*RtcGetCode)(hiprtcProgram prog, char* code) = nullptr;
  hiprtcResult (*RtcDestroyProgram)(hiprtcProgram* prog) = nullptr;

  std::string runtime_missing;  // why the runtime cannot be used, or ""
  std::string rtc_missing;      // why hipRTC cannot be used, or ""
  std::string library;          // the library that was loaded
  // The `environ` of the C library in HIP's link namespace, a copy of the process's own.
  char*** environment = nullptr;

  std::string error(hipError_t e) const;
  // Points HIP's C library at the process's current environment. Each link namespace has its own
  // C library, whose `environ` is the array the process had when the namespace was made; a later
  // setenv() frees that array, and the next getenv() in the namespace (comgr's LLVM, loaded at
  // the first compile, calls it) reads freed memory. Called before each call that may read it.
  void share_environment() const;
};

// The process's HIP, loaded on the first call (TACK_HIP_LIBRARY, else libamdhip64.so.5, .so.6,
// .so). Loaded once: link namespaces are few (glibc allows 16).
const HipApi& hip_api();

// hipRTC's compile: generated HIP C to a code object for `arch` (gfx90a...), with the options
// Tack always uses (no FP contraction). Returns the code object, or throws DeviceError naming
// `kernel_name` with hipRTC's log.
std::string compile_code_object(const HipApi& api, const std::string& source,
                                const std::string& arch, const std::string& kernel_name);
// The options above, for the cache key.
std::vector<std::string> hiprtc_options(const std::string& arch);

}  // namespace tack::hip
