// The extension module `tack._tack`: shared declarations of its parts (module.cpp, array.cpp,
// kernel.cpp). The extension converts Python values to the C++ API's and back, and maps
// tack::Error's categories to Python exceptions; everything else is the core's.
#pragma once

#include <nanobind/nanobind.h>

#include <memory>
#include <optional>

#include <tack/tack.hpp>

namespace tack::python {

namespace nb = nanobind;

// The dtype objects tack.bool_, tack.i8 ... tack.f64: one Python object per dtype.
struct DTypeObject {
  DType t;
};
nb::object dtype_object(DType t);
// A dtype from a tack dtype, a NumPy dtype or type, or a string ("f32", "float32").
DType to_dtype(nb::handle h);
DType to_dtype(nb::handle h, DType fallback);  // None gives `fallback`
const char* numpy_name(DType t);

// A device from None (the default device), a tack.Device or a string ("cpu", "cuda:1").
std::optional<Device> to_device(nb::handle h);

// Sets the Python error for the exception being handled (a tack::Error, a nanobind error or
// anything else) — for the functions that bypass nanobind's own dispatch.
void set_python_error();

// A DLPack capsule ("dltensor") lending a CUDA array (kDLCUDA) through tack::to_dlpack.
nb::object dlpack_capsule(const Array& a);

// A shape from an int or a sequence of ints.
Shape to_shape(nb::handle h);
// An integer (anything with __index__) as an int64_t, with `overflow` set where it does not fit;
// nothing when it is not an integer.
std::optional<int64_t> index_value(nb::handle i, bool* overflow);
nb::tuple shape_tuple(const Shape& s);

// A Python number holding the element at `raw` (the host bytes of one element of dtype t).
nb::object element_to_python(DType t, const void* raw);

// Wraps host memory that another library exports through DLPack (or the buffer protocol),
// keeping the producer alive; nullopt when `obj` offers neither.
std::optional<Array> wrap_foreign(nb::handle obj, bool allow_copy);

extern PyTypeObject* g_array_type;
extern PyTypeObject* g_texture_type;

// A Python object that C++ may copy and destroy on any thread.
std::shared_ptr<nb::object> shared_object(nb::object o);
// A Python callable answering what free names are (tack._kernel's resolvers), for the core,
// which asks on any thread (it takes the GIL).
NameResolver name_resolver(nb::object resolver);

// Objects of @tack.data_oriented classes (object.cpp): whether `o` is one, and the object the core
// takes, its attributes converted (arrays wrapped without a copy, @tack.func as functions, values
// of other kinds described for the error of a kernel that reads them). Throws TypeError for an
// object that contains itself.
bool is_device_object(PyObject* o);
Object to_object(nb::handle o);

void bind_module(nb::module_& m);
void bind_array(nb::module_& m);
void bind_kernel(nb::module_& m);
void bind_object(nb::module_& m);
void bind_algorithms(nb::module_& m);

// A host number from a kernel or algorithm: an int for integers (u64 stays positive), a float for
// floats, a bool for bools.
nb::object host_number(const Scalar& s);

}  // namespace tack::python
