// The CUDA driver API (libcuda.so.1) and NVRTC (libnvrtc.so), loaded at run time with dlopen:
// Tack never links against CUDA and needs none of its headers to build, so the few types and
// constants used are declared here, with the values of CUDA's cuda.h and nvrtc.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace tack::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUstream = struct CUstream_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUarray = struct CUarray_st*;
using CUtexObject = unsigned long long;
using nvrtcResult = int;
using nvrtcProgram = struct _nvrtcProgram*;

// Hardware textures: the structures of cuda.h with the same layout (a test compiles
// static_asserts of their sizes and offsets against the toolkit's cuda.h where it is installed).
struct CuArray3dDescriptor {    // CUDA_ARRAY3D_DESCRIPTOR
  size_t width, height, depth;  // depth 0: a 2-D array
  int format;                   // CUarray_format
  unsigned num_channels, flags;
};
struct CuMemcpy3d {  // CUDA_MEMCPY3D
  size_t src_x_bytes, src_y, src_z, src_lod;
  unsigned src_memory_type;  // CUmemorytype
  const void* src_host;
  CUdeviceptr src_device;
  CUarray src_array;
  void* reserved0;
  size_t src_pitch, src_height;
  size_t dst_x_bytes, dst_y, dst_z, dst_lod;
  unsigned dst_memory_type;
  void* dst_host;
  CUdeviceptr dst_device;
  CUarray dst_array;
  void* reserved1;
  size_t dst_pitch, dst_height;
  size_t width_bytes, height, depth;
};
struct CuResourceDesc {  // CUDA_RESOURCE_DESC, for a CUDA array
  int type;              // CUresourcetype
  union {
    CUarray array;
    int reserved[32];
  } res;
  unsigned flags;
};
struct CuTextureDesc {  // CUDA_TEXTURE_DESC
  int address_mode[3];  // CUaddress_mode
  int filter_mode;      // CUfilter_mode
  unsigned flags, max_anisotropy;
  int mipmap_filter_mode;
  float mipmap_level_bias, min_mipmap_level_clamp, max_mipmap_level_clamp;
  float border_color[4];
  int reserved[12];
};
constexpr int CU_AD_FORMAT_FLOAT = 0x20;
constexpr unsigned CU_MEMORYTYPE_ARRAY = 3;
constexpr int CU_RESOURCE_TYPE_ARRAY = 0;
constexpr int CU_TR_ADDRESS_MODE_CLAMP = 1;
constexpr int CU_TR_FILTER_MODE_LINEAR = 1;
constexpr unsigned CU_TRSF_NORMALIZED_COORDINATES = 2;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr int CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2;
constexpr int CU_POINTER_ATTRIBUTE_IS_MANAGED = 8;
constexpr int CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9;
constexpr unsigned CU_MEMORYTYPE_HOST = 1;
constexpr unsigned CU_MEMORYTYPE_DEVICE = 2;
constexpr unsigned CU_MEMORYTYPE_UNIFIED = 4;
constexpr int CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0;
constexpr unsigned CU_STREAM_NON_BLOCKING = 1;
constexpr nvrtcResult NVRTC_SUCCESS = 0;

// Each function: the member, the library's symbol, and its type (after the symbol, since a
// type may hold commas).
struct CuApi {
  // clang-format off
#define TACK_CU_FUNCTIONS(X)                                                                      \
  X(Init, "cuInit", CUresult(unsigned))                                                       \
  X(DriverGetVersion, "cuDriverGetVersion", CUresult(int*))                                   \
  X(DeviceGetCount, "cuDeviceGetCount", CUresult(int*))                                       \
  X(DeviceGet, "cuDeviceGet", CUresult(CUdevice*, int))                                       \
  X(DeviceGetName, "cuDeviceGetName", CUresult(char*, int, CUdevice))                         \
  X(DeviceGetAttribute, "cuDeviceGetAttribute", CUresult(int*, int, CUdevice))                \
  X(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain", CUresult(CUcontext*, CUdevice))             \
  X(CtxSetCurrent, "cuCtxSetCurrent", CUresult(CUcontext))                                    \
  X(StreamCreate, "cuStreamCreate", CUresult(CUstream*, unsigned))                            \
  X(StreamSynchronize, "cuStreamSynchronize", CUresult(CUstream))                             \
  X(MemAlloc, "cuMemAlloc_v2", CUresult(CUdeviceptr*, size_t))                                \
  X(MemFree, "cuMemFree_v2", CUresult(CUdeviceptr))                                           \
  X(MemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2",                                                      \
    CUresult(CUdeviceptr, const void*, size_t, CUstream))                                     \
  X(MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2",                                                      \
    CUresult(void*, CUdeviceptr, size_t, CUstream))                                           \
  X(MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2",                                                      \
    CUresult(CUdeviceptr, CUdeviceptr, size_t, CUstream))                                     \
  X(MemsetD8Async, "cuMemsetD8Async", CUresult(CUdeviceptr, unsigned char, size_t, CUstream)) \
  X(MemsetD16Async, "cuMemsetD16Async",                                                           \
    CUresult(CUdeviceptr, unsigned short, size_t, CUstream))                                  \
  X(MemsetD32Async, "cuMemsetD32Async", CUresult(CUdeviceptr, unsigned, size_t, CUstream))    \
  X(PointerGetAttribute, "cuPointerGetAttribute", CUresult(void*, int, CUdeviceptr))          \
  X(ModuleLoadData, "cuModuleLoadData", CUresult(CUmodule*, const void*))                     \
  X(ModuleUnload, "cuModuleUnload", CUresult(CUmodule))                                       \
  X(ModuleGetFunction, "cuModuleGetFunction", CUresult(CUfunction*, CUmodule, const char*))   \
  X(FuncGetAttribute, "cuFuncGetAttribute", CUresult(int*, int, CUfunction))                  \
  X(LaunchKernel, "cuLaunchKernel",                                                               \
    CUresult(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,          \
                 unsigned, CUstream, void**, void**))                                             \
  X(Array3DCreate, "cuArray3DCreate_v2", CUresult(CUarray*, const CuArray3dDescriptor*))     \
  X(ArrayDestroy, "cuArrayDestroy", CUresult(CUarray))                                        \
  X(Memcpy3DAsync, "cuMemcpy3DAsync_v2", CUresult(const CuMemcpy3d*, CUstream))               \
  X(TexObjectCreate, "cuTexObjectCreate",                                                         \
    CUresult(CUtexObject*, const CuResourceDesc*, const CuTextureDesc*, const void*))         \
  X(TexObjectDestroy, "cuTexObjectDestroy", CUresult(CUtexObject))                            \
  X(GetErrorName, "cuGetErrorName", CUresult(CUresult, const char**))
  // clang-format on
#define TACK_CU_MEMBER(member, symbol, ...) std::add_pointer_t<__VA_ARGS__> member = nullptr;
  TACK_CU_FUNCTIONS(TACK_CU_MEMBER)
#undef TACK_CU_MEMBER

  // Loads the driver (TACK_CUDA_LIBRARY, else libcuda.so.1) and calls cuInit(0) before anything
  // else. Returns "" on success, else why CUDA is unavailable.
  std::string load();
  // "CUDA_ERROR_OUT_OF_MEMORY (2)".
  std::string error_name(CUresult r) const;
};

struct NvrtcApi {
  // clang-format off
#define TACK_NVRTC_FUNCTIONS(X)                                                                   \
  X(Version, "nvrtcVersion", nvrtcResult(int*, int*))                                         \
  X(GetErrorString, "nvrtcGetErrorString", const char*(nvrtcResult))                          \
  X(CreateProgram, "nvrtcCreateProgram",                                                          \
    nvrtcResult(nvrtcProgram*, const char*, const char*, int, const char* const*,             \
                    const char* const*))                                                          \
  X(CompileProgram, "nvrtcCompileProgram", nvrtcResult(nvrtcProgram, int, const char* const*)) \
  X(GetProgramLogSize, "nvrtcGetProgramLogSize", nvrtcResult(nvrtcProgram, size_t*))          \
  X(GetProgramLog, "nvrtcGetProgramLog", nvrtcResult(nvrtcProgram, char*))                    \
  X(GetPTXSize, "nvrtcGetPTXSize", nvrtcResult(nvrtcProgram, size_t*))                        \
  X(GetPTX, "nvrtcGetPTX", nvrtcResult(nvrtcProgram, char*))                                  \
  X(DestroyProgram, "nvrtcDestroyProgram", nvrtcResult(nvrtcProgram*))
  // clang-format on
#define TACK_NVRTC_MEMBER(member, symbol, ...) std::add_pointer_t<__VA_ARGS__> member = nullptr;
  TACK_NVRTC_FUNCTIONS(TACK_NVRTC_MEMBER)
#undef TACK_NVRTC_MEMBER
  std::string path;  // the library loaded
  int major = 0, minor = 0;

  // Loads NVRTC: TACK_NVRTC_LIBRARY, else the toolkit in CUDA_PATH, CUDA_HOME or /usr/local/cuda,
  // else the nvidia-cuda-nvrtc wheel of the active Python environment, else the loader's search
  // path. Returns "" on success, else where it looked and what to install.
  std::string load();
};

}  // namespace tack::cuda
