// DLPack interchange from C++: lending an array to another library and borrowing one from it.
// Only declarations are needed here; include <dlpack/dlpack.h> to use the structure itself.
#pragma once

#include "tack/array.hpp"

struct DLManagedTensor;

namespace tack {

// Lends `a` to another library without copying: the returned tensor keeps the array's memory
// alive until its deleter is called. Host memory is kDLCPU. Waits for queued work on the array
// first, since the consumer does not know Tack's queues.
DLManagedTensor* to_dlpack(const Array& a);

// Borrows a tensor without copying (host memory, C-contiguous, a dtype Tack has). The tensor's
// deleter runs when the last array or view using it is gone. Throws TypeError for a tensor Tack
// cannot use (another device, strides, lanes, an unsupported dtype), and then calls the deleter.
Array from_dlpack(DLManagedTensor* tensor);

}  // namespace tack
