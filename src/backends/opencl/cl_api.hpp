// The OpenCL API, loaded at run time from the ICD loader (libOpenCL.so.1) with dlopen: Tack
// never links against OpenCL, so it builds and runs on machines without it. The header supplies
// only types and constants.
#pragma once

#define CL_TARGET_OPENCL_VERSION 300
// clCreateCommandQueue: the OpenCL 1.2 call, which every platform has.
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>

#include <string>

namespace tack::opencl {

struct ClApi {
  // clang-format off
#define TACK_CL_FUNCTIONS(X)                                                                     \
  X(GetPlatformIDs) X(GetPlatformInfo) X(GetDeviceIDs) X(GetDeviceInfo)                          \
  X(CreateContext) X(ReleaseContext) X(CreateCommandQueue) X(ReleaseCommandQueue)                \
  X(CreateBuffer) X(CreateSubBuffer) X(RetainMemObject) X(ReleaseMemObject) X(GetMemObjectInfo)  \
  X(EnqueueReadBuffer) X(EnqueueWriteBuffer) X(EnqueueCopyBuffer) X(EnqueueFillBuffer)           \
  X(EnqueueMapBuffer) X(EnqueueUnmapMemObject) X(CreateImage) X(EnqueueCopyBufferToImage)       \
  X(CreateProgramWithSource) X(CreateProgramWithBinary) X(BuildProgram) X(GetProgramInfo)        \
  X(GetProgramBuildInfo) X(ReleaseProgram)                                                       \
  X(CreateKernel) X(ReleaseKernel) X(SetKernelArg) X(EnqueueNDRangeKernel) X(Finish)
  // clang-format on
#define TACK_CL_MEMBER(name) decltype(&::cl##name) name = nullptr;
  TACK_CL_FUNCTIONS(TACK_CL_MEMBER)
#undef TACK_CL_MEMBER

  // Loads the library (TACK_OPENCL_LIBRARY, else libOpenCL.so.1). Returns "" on success, else
  // why OpenCL is unavailable and what to install.
  std::string load();
};

// "CL_OUT_OF_RESOURCES (-5)".
std::string error_name(cl_int code);

}  // namespace tack::opencl
