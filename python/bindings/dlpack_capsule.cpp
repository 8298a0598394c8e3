// A DLPack capsule made by the C++ export (tack::to_dlpack), for CUDA arrays: it waits for the
// device's queued work and marks the buffer as shared, so later launches that use it complete
// before they return. Kept apart from array.cpp, whose own DLPack constants would clash with
// dlpack.h's.
#include <dlpack/dlpack.h>

#include <tack/dlpack.hpp>

#include "ext.hpp"

namespace tack::python {

nb::object dlpack_capsule(const Array& a) {
  DLManagedTensor* tensor = to_dlpack(a);
  // A consumer renames the capsule "used_dltensor" and calls the deleter itself; a capsule
  // nobody consumed still owns the tensor.
  PyObject* capsule = PyCapsule_New(tensor, "dltensor", [](PyObject* self) {
    if (!PyCapsule_IsValid(self, "dltensor")) return;
    auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(self, "dltensor"));
    if (t && t->deleter) t->deleter(t);
  });
  if (!capsule) {
    tensor->deleter(tensor);
    throw nb::python_error();
  }
  return nb::steal(capsule);
}

}  // namespace tack::python
