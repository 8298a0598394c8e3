#include "backends/opencl/cl_api.hpp"

#include <fmt/format.h>

#include "backends/gpu/vendor_library.hpp"

namespace tack::opencl {

std::string ClApi::load() {
  std::string path = backends::library_path("TACK_OPENCL_LIBRARY", "libOpenCL.so.1");
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    return fmt::format(
        "the OpenCL ICD loader '{}' cannot be loaded ({}): install ocl-icd-libopencl1 and a "
        "driver, e.g. pocl-opencl-icd (apt-get install ocl-icd-libopencl1 pocl-opencl-icd)",
        path, dlerror());
  std::string missing;
#define TACK_CL_LOAD(name) backends::bind_symbol(lib, name, "cl" #name, missing);
  TACK_CL_FUNCTIONS(TACK_CL_LOAD)
#undef TACK_CL_LOAD
  if (!missing.empty())
    return fmt::format("'{}' lacks OpenCL 1.2 functions ({}): install ocl-icd-libopencl1", path,
                       missing);
  return "";
}

std::string error_name(cl_int code) {
  const char* name = nullptr;
  switch (code) {
#define TACK_CL_ERROR(c) \
  case c:                \
    name = #c;           \
    break;
    TACK_CL_ERROR(CL_DEVICE_NOT_FOUND)
    TACK_CL_ERROR(CL_DEVICE_NOT_AVAILABLE)
    TACK_CL_ERROR(CL_COMPILER_NOT_AVAILABLE)
    TACK_CL_ERROR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    TACK_CL_ERROR(CL_OUT_OF_RESOURCES)
    TACK_CL_ERROR(CL_OUT_OF_HOST_MEMORY)
    TACK_CL_ERROR(CL_BUILD_PROGRAM_FAILURE)
    TACK_CL_ERROR(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    TACK_CL_ERROR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    TACK_CL_ERROR(CL_INVALID_VALUE)
    TACK_CL_ERROR(CL_INVALID_PLATFORM)
    TACK_CL_ERROR(CL_INVALID_DEVICE)
    TACK_CL_ERROR(CL_INVALID_CONTEXT)
    TACK_CL_ERROR(CL_INVALID_COMMAND_QUEUE)
    TACK_CL_ERROR(CL_INVALID_MEM_OBJECT)
    TACK_CL_ERROR(CL_INVALID_BINARY)
    TACK_CL_ERROR(CL_INVALID_BUILD_OPTIONS)
    TACK_CL_ERROR(CL_INVALID_PROGRAM)
    TACK_CL_ERROR(CL_INVALID_PROGRAM_EXECUTABLE)
    TACK_CL_ERROR(CL_INVALID_KERNEL_NAME)
    TACK_CL_ERROR(CL_INVALID_KERNEL)
    TACK_CL_ERROR(CL_INVALID_ARG_INDEX)
    TACK_CL_ERROR(CL_INVALID_ARG_VALUE)
    TACK_CL_ERROR(CL_INVALID_ARG_SIZE)
    TACK_CL_ERROR(CL_INVALID_KERNEL_ARGS)
    TACK_CL_ERROR(CL_INVALID_WORK_DIMENSION)
    TACK_CL_ERROR(CL_INVALID_WORK_GROUP_SIZE)
    TACK_CL_ERROR(CL_INVALID_WORK_ITEM_SIZE)
    TACK_CL_ERROR(CL_INVALID_GLOBAL_OFFSET)
    TACK_CL_ERROR(CL_INVALID_BUFFER_SIZE)
    TACK_CL_ERROR(CL_INVALID_GLOBAL_WORK_SIZE)
    TACK_CL_ERROR(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    TACK_CL_ERROR(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    TACK_CL_ERROR(CL_INVALID_IMAGE_SIZE)
    TACK_CL_ERROR(CL_INVALID_IMAGE_DESCRIPTOR)
#undef TACK_CL_ERROR
  }
  return name ? fmt::format("{} ({})", name, code) : fmt::format("error {}", code);
}

}  // namespace tack::opencl
