// tack.Array: creation, copies to and from NumPy, views, reductions, and DLPack both ways.
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ext.hpp"

namespace tack::python {

PyTypeObject* g_array_type = nullptr;
PyTypeObject* g_texture_type = nullptr;

namespace {

namespace dl = nb::dlpack;

// DLPack device types (dlpack.h) of the memory from_dlpack takes.
constexpr int kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLROCMHost = 11, kDLCUDAManaged = 13;

// The DLPack device type of `a`'s memory, as its backend declares it (BackendInfo); a backend that
// declares none lends no memory through DLPack.
int dlpack_device_type(const Array& a) {
  const int type = a.device().backend().dlpack_device_type;
  if (type == 0)
    throw TypeError("arrays on " + a.device().name() +
                    " cannot be exported through DLPack: use .numpy() for a copy");
  return type;
}

dl::dtype dlpack_dtype(DType t) {
  dl::dtype d;
  d.lanes = 1;
  d.bits = static_cast<uint8_t>(dtype_bits(t));
  if (is_float(t))
    d.code = static_cast<uint8_t>(dl::dtype_code::Float);
  else if (is_bool(t))
    d.code = static_cast<uint8_t>(dl::dtype_code::Bool);
  else
    d.code = static_cast<uint8_t>(is_signed(t) ? dl::dtype_code::Int : dl::dtype_code::UInt);
  return d;
}

std::optional<DType> from_dlpack_dtype(dl::dtype d) {
  if (d.lanes != 1) return std::nullopt;
  for (DType t : kAllDTypes) {
    dl::dtype e = dlpack_dtype(t);
    if (e.code == d.code && e.bits == d.bits) return t;
  }
  return std::nullopt;
}

std::string dlpack_dtype_text(dl::dtype d) {
  static const char* codes[] = {"int", "uint", "float", "opaque", "bfloat", "complex", "bool"};
  std::string code = d.code < std::size(codes) ? codes[d.code] : "code " + std::to_string(d.code);
  return code + std::to_string(d.bits) + (d.lanes != 1 ? "x" + std::to_string(d.lanes) : "");
}

std::vector<size_t> size_shape(const Array& a) {
  return std::vector<size_t>(a.shape().begin(), a.shape().end());
}

// A NumPy array (or, with `numpy` false, a bare DLPack-capable nanobind ndarray) viewing `a`'s
// memory. The view owns a copy of the handle, which keeps the buffer alive.
nb::object export_view(const Array& a, bool numpy) {
  if (a.device().type() != "cpu" && numpy)
    throw TypeError("a NumPy view needs host memory; this array is on " + a.device().name() +
                    ": use .numpy() for a copy");
  auto* keep = new Array(a);
  nb::capsule owner(keep, [](void* p) noexcept { delete static_cast<Array*>(p); });
  std::vector<size_t> shape = size_shape(a);
  int dev_type = dlpack_device_type(a);
  int dev_id = a.device().index();
  if (a.writable()) {
    if (numpy)
      return nb::ndarray<nb::numpy>(a.data(), shape.size(), shape.data(), owner, nullptr,
                                    dlpack_dtype(a.dtype()), dev_type, dev_id)
          .cast();
    return nb::ndarray<nb::array_api>(a.data(), shape.size(), shape.data(), owner, nullptr,
                                      dlpack_dtype(a.dtype()), dev_type, dev_id)
        .cast();
  }
  if (numpy)
    return nb::ndarray<nb::numpy, nb::ro>(a.data(), shape.size(), shape.data(), owner, nullptr,
                                          dlpack_dtype(a.dtype()), dev_type, dev_id)
        .cast();
  return nb::ndarray<nb::array_api, nb::ro>(a.data(), shape.size(), shape.data(), owner, nullptr,
                                            dlpack_dtype(a.dtype()), dev_type, dev_id)
      .cast();
}

// A NumPy array holding a copy of `a` (waiting for queued work first).
nb::object to_numpy(const Array& a) {
  size_t bytes = static_cast<size_t>(a.nbytes());
  auto* data = new unsigned char[bytes ? bytes : 1];
  nb::capsule owner(data, [](void* p) noexcept { delete[] static_cast<unsigned char*>(p); });
  {
    nb::gil_scoped_release release;
    a.read(data, bytes);
  }
  std::vector<size_t> shape = size_shape(a);
  return nb::ndarray<nb::numpy>(data, shape.size(), shape.data(), owner, nullptr,
                                dlpack_dtype(a.dtype()))
      .cast();
}

bool c_contiguous(size_t ndim, const int64_t* shape, const int64_t* strides) {
  if (!strides) return true;
  // An array without elements is contiguous whatever its strides say (NumPy gives (0,)).
  for (size_t i = 0; i < ndim; ++i)
    if (shape[i] == 0) return true;
  int64_t expected = 1;
  for (size_t i = ndim; i-- > 0;) {
    if (shape[i] != 1 && strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

// Copies a strided host tensor into contiguous memory (strides in elements).
void gather(unsigned char* dst, const unsigned char* src, size_t ndim, const int64_t* shape,
            const int64_t* strides, size_t item) {
  if (ndim == 0) {
    std::memcpy(dst, src, item);
    return;
  }
  int64_t inner = 1;
  for (size_t i = 1; i < ndim; ++i) inner *= shape[i];
  for (int64_t i = 0; i < shape[0]; ++i)
    gather(dst + static_cast<size_t>(i * inner) * item,
           src + static_cast<ptrdiff_t>(i * strides[0]) * static_cast<ptrdiff_t>(item), ndim - 1,
           shape + 1, strides + 1, item);
}

// Python's element value as the host bytes of dtype t (integers exactly, floats rounded once).
void python_to_element(nb::handle v, DType t, void* out) {
  auto put = [&](auto x) { std::memcpy(out, &x, sizeof x); };
  if (is_float(t)) {
    double d = PyFloat_AsDouble(v.ptr());
    if (d == -1.0 && PyErr_Occurred()) throw nb::python_error();
    if (t == DType::F32)
      put(static_cast<float>(d));
    else
      put(d);
    return;
  }
  if (t == DType::Bool) {
    int b = PyObject_IsTrue(v.ptr());
    if (b < 0) throw nb::python_error();
    put(static_cast<uint8_t>(b));
    return;
  }
  nb::object index = nb::steal(PyNumber_Index(v.ptr()));
  if (!index.is_valid()) {
    // A float into an integer array: truncated toward zero, as the language converts.
    PyErr_Clear();
    double d = PyFloat_AsDouble(v.ptr());
    if (d == -1.0 && PyErr_Occurred()) throw nb::python_error();
    index = nb::steal(PyLong_FromDouble(d));
    if (!index.is_valid()) throw nb::python_error();
  }
  // Wraps at the width, as NumPy's casts of Python ints that are in range of u64/i64 do.
  uint64_t bits = PyLong_AsUnsignedLongLongMask(index.ptr());
  if (bits == static_cast<uint64_t>(-1) && PyErr_Occurred()) throw nb::python_error();
  std::memcpy(out, &bits, static_cast<size_t>(dtype_size(t)));  // little-endian low bytes
}

bool is_number(nb::handle v) {
  return PyFloat_Check(v.ptr()) || PyLong_Check(v.ptr()) || PyBool_Check(v.ptr()) ||
         (PyIndex_Check(v.ptr()) && !PySequence_Check(v.ptr())) ||
         (nb::hasattr(v, "__float__") && !nb::hasattr(v, "__len__"));
}

int64_t normalize_index(int64_t i, int64_t n, int dim) {
  int64_t j = i < 0 ? i + n : i;
  if (j < 0 || j >= n)
    throw IndexError("index " + std::to_string(i) + " is out of bounds for dimension " +
                     std::to_string(dim) + " of size " + std::to_string(n));
  return j;
}

// What a subscript selects: a view of the array, and whether it is one element.
struct Selection {
  Array view;
  bool element = false;
};

Selection select(const Array& a, nb::handle key) {
  if (PySlice_Check(key.ptr())) {
    if (a.ndim() == 0) throw IndexError("a 0-d array has no rows to slice");
    Py_ssize_t start, stop, step;
    if (PySlice_Unpack(key.ptr(), &start, &stop, &step) < 0) throw nb::python_error();
    if (step != 1)
      throw IndexError(
          "a slice of a tack array is a view of rows, with step 1; for other steps copy to "
          "NumPy first (a.numpy()[::k])");
    PySlice_AdjustIndices(static_cast<Py_ssize_t>(a.shape()[0]), &start, &stop, step);
    return {a.rows(start, stop), false};
  }
  if (key.ptr() == Py_Ellipsis) return {a, false};
  std::vector<int64_t> index;
  std::vector<nb::handle> keys;
  if (PyTuple_Check(key.ptr())) {
    for (nb::handle k : key) {
      if (PySlice_Check(k.ptr()) || k.ptr() == Py_Ellipsis || k.is_none())
        throw IndexError(
            "a tack array takes an integer per leading dimension or one slice of rows; copy to "
            "NumPy (a.numpy()) for other selections");
      keys.push_back(k);
    }
  } else {
    keys.push_back(key);
  }
  for (nb::handle k : keys) {
    bool overflow = false;
    auto i = index_value(k, &overflow);
    if (!i)
      throw IndexError("a tack array takes integers and slices of rows as subscripts, not " +
                       nb::cast<std::string>(nb::repr(key)));
    size_t d = index.size();
    if (overflow)
      throw IndexError("index " + nb::cast<std::string>(nb::repr(k)) +
                       " is out of bounds for dimension " + std::to_string(d) +
                       (d < a.shape().size() ? " of size " + std::to_string(a.shape()[d]) : ""));
    index.push_back(*i);
  }
  if (static_cast<int>(index.size()) > a.ndim())
    throw IndexError("too many indices (" + std::to_string(index.size()) + ") for an array of " +
                     std::to_string(a.ndim()) + " dimension" + (a.ndim() == 1 ? "" : "s"));
  // Leading integer indices select a contiguous block: a view of one row of the flattened
  // leading dimensions.
  const Shape& s = a.shape();
  int64_t flat = 0;
  for (size_t d = 0; d < index.size(); ++d)
    flat = flat * s[d] + normalize_index(index[d], s[d], static_cast<int>(d));
  int64_t lead = 1;
  for (size_t d = 0; d < index.size(); ++d) lead *= s[d];
  Shape rest(s.begin() + static_cast<ptrdiff_t>(index.size()), s.end());
  int64_t inner = 1;
  for (int64_t d : rest) inner *= d;
  Array rows = a.reshape({lead, inner}).rows(flat, flat + 1);
  bool element = rest.empty();
  return {rows.reshape(element ? Shape{1} : rest), element};
}

nb::object read_element(const Array& one) {
  alignas(8) unsigned char raw[8];
  {
    nb::gil_scoped_release release;
    one.read(raw, static_cast<size_t>(dtype_size(one.dtype())));
  }
  return element_to_python(one.dtype(), raw);
}

void copy_host_into(Array& dst, nb::handle src);

std::string py_str(nb::handle h) {
  PyObject* s = PyObject_Str(h.ptr());
  if (!s) throw nb::python_error();
  return nb::cast<std::string>(nb::steal(s));
}

void assign(Array& view, nb::handle value) {
  if (nb::isinstance<Array>(value)) {
    copyto(view, *nb::inst_ptr<Array>(value));
    return;
  }
  if (is_number(value) && !nb::hasattr(value, "__dlpack__")) {
    alignas(8) unsigned char raw[8];
    python_to_element(value, view.dtype(), raw);
    size_t item = static_cast<size_t>(dtype_size(view.dtype()));
    if (view.size() == 1) {
      view.write(raw, item);
    } else if (item == 8 && is_integer(view.dtype())) {
      // 64-bit integers beyond 2^53 are not exact as the double fill() takes: write the bytes.
      std::vector<unsigned char> bytes(static_cast<size_t>(view.size()) * item);
      for (size_t at = 0; at < bytes.size(); at += item) std::memcpy(bytes.data() + at, raw, item);
      nb::gil_scoped_release release;
      view.write(bytes.data(), bytes.size());
    } else {
      nb::object d = nb::steal(PyNumber_Float(value.ptr()));
      if (!d.is_valid()) throw nb::python_error();
      view.fill(PyFloat_AS_DOUBLE(d.ptr()));
    }
    return;
  }
  copy_host_into(view, value);
}

// Host data (NumPy, lists, anything NumPy takes) into `dst`: NumPy's 'same_kind' casting and
// broadcasting, then one write.
void copy_host_into(Array& dst, nb::handle src) {
  nb::module_ np = nb::module_::import_("numpy");
  nb::object np_dtype = np.attr("dtype")(numpy_name(dst.dtype()));
  nb::object arr = np.attr("asarray")(src);
  if (!arr.attr("dtype").equal(np_dtype) &&
      !nb::cast<bool>(np.attr("can_cast")(arr.attr("dtype"), np_dtype, "same_kind")))
    throw TypeError("copyto: cannot copy " + py_str(arr.attr("dtype")) +
                    " data into an array of dtype " + std::string(dtype_name(dst.dtype())) +
                    " (NumPy's 'same_kind' rule): convert it first, e.g. with .astype()");
  nb::tuple shape = shape_tuple(dst.shape());
  if (!arr.attr("shape").equal(shape)) {
    try {
      arr = np.attr("broadcast_to")(arr, shape);
    } catch (const nb::python_error&) {
      throw TypeError("copyto: source of shape " + py_str(arr.attr("shape")) +
                      " does not match the destination's shape " + py_str(shape));
    }
  }
  arr = np.attr("ascontiguousarray")(arr, np_dtype);
  auto nd = nb::cast<nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>>(arr);
  nb::gil_scoped_release release;
  dst.write(nd.data(), nd.nbytes());
}

Array make_from_host(nb::handle obj, nb::handle dtype, nb::handle device_h) {
  nb::module_ np = nb::module_::import_("numpy");
  // np.asarray, not ascontiguousarray, which makes a scalar a 1-d array: a scalar gives a 0-d one.
  nb::object arr = dtype.is_none()
                       ? np.attr("asarray")(obj)
                       : np.attr("asarray")(obj, np.attr("dtype")(numpy_name(to_dtype(dtype))));
  if (!nb::cast<bool>(arr.attr("flags").attr("c_contiguous")))
    arr = np.attr("ascontiguousarray")(arr);
  DType t = to_dtype(arr.attr("dtype"));
  auto nd = nb::cast<nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>>(arr);
  Shape shape(nd.shape_ptr(), nd.shape_ptr() + nd.ndim());
  auto dev = to_device(device_h);
  Array out = empty(shape, t, dev ? &*dev : nullptr);
  nb::gil_scoped_release release;
  out.write(nd.data(), nd.nbytes());
  return out;
}

using Creator = Array (*)(const Shape&, DType, const Device*);

template <Creator F>
Array create(nb::handle shape, nb::handle dtype, nb::handle device_h) {
  auto dev = to_device(device_h);
  return F(to_shape(shape), to_dtype(dtype, DType::F32), dev ? &*dev : nullptr);
}

// Shape, dtype and device of `like`: a tack array, or anything with .shape and .dtype.
void like_of(nb::handle like, nb::handle dtype, nb::handle device_h, Shape& shape, DType& t,
             std::optional<Device>& dev) {
  if (nb::isinstance<Array>(like)) {
    const Array& a = *nb::inst_ptr<Array>(like);
    shape = a.shape();
    t = a.dtype();
    dev = a.device();
  } else {
    shape = to_shape(like.attr("shape"));
    t = to_dtype(like.attr("dtype"));
  }
  if (!dtype.is_none()) t = to_dtype(dtype);
  if (auto d = to_device(device_h)) dev = d;
}

}  // namespace

std::optional<Array> wrap_foreign(nb::handle obj, bool allow_copy) {
  nb::ndarray<> nd;
  bool writable = true;
  if (!nb::try_cast(obj, nd, false)) {
    nb::ndarray<nb::ro> ro;
    if (!nb::try_cast(obj, ro, false)) return std::nullopt;
    nd = nb::ndarray<>(ro.handle());
    writable = false;
  }
  int dev_type = nd.device_type();
  if (dev_type != kDLCPU && dev_type != kDLCUDAHost && dev_type != kDLROCMHost &&
      dev_type != kDLCUDAManaged && dev_type != kDLCUDA)
    throw DeviceError("from_dlpack: the memory is on DLPack device type " +
                      std::to_string(dev_type) +
                      ", which no backend of this build of Tack can use (host and CUDA memory "
                      "can be)");
  auto t = from_dlpack_dtype(nd.dtype());
  if (!t)
    throw TypeError("Tack has no dtype for " + dlpack_dtype_text(nd.dtype()) +
                    " elements: use bool, int8 ... int64, uint8 ... uint64, float32 or float64");
  Shape shape(nd.shape_ptr(), nd.shape_ptr() + nd.ndim());
  Device cpu = device("cpu");
  // CUDA device memory becomes an array on that CUDA device ("cuda:N"); it cannot be gathered
  // on the host, so it must be contiguous.
  std::optional<Device> cuda;
  if (dev_type == kDLCUDA) {
    cuda = device("cuda:" + std::to_string(nd.device_id()));
    if (!c_contiguous(nd.ndim(), nd.shape_ptr(), nd.stride_ptr()))
      throw ValueError(
          "a non-contiguous CUDA array cannot be used without a copy: pass a contiguous one "
          "(.contiguous() in PyTorch, cupy.ascontiguousarray)");
  }
  if (!c_contiguous(nd.ndim(), nd.shape_ptr(), nd.stride_ptr())) {
    if (!allow_copy)
      throw ValueError(
          "a non-contiguous array cannot be used without a copy: pass np.ascontiguousarray(a) "
          "or a tack array");
    Array out = empty(shape, *t, &cpu);
    gather(static_cast<unsigned char*>(out.data()), static_cast<const unsigned char*>(nd.data()),
           nd.ndim(), nd.shape_ptr(), nd.stride_ptr(), static_cast<size_t>(dtype_size(*t)));
    return out;
  }
  // The ndarray holds the producer; the array holds the ndarray until its last view is gone.
  auto* holder = new nb::ndarray<>(nd);
  std::shared_ptr<const void> owner(holder, [](const void* p) {
    if (!Py_IsInitialized()) return;  // the interpreter is gone: nothing left to release
    nb::gil_scoped_acquire gil;
    delete static_cast<const nb::ndarray<>*>(p);
  });
  return array_from_ptr(nd.data(), shape, *t, cuda ? &*cuda : &cpu, writable, std::move(owner));
}

void bind_texture(nb::module_& m) {
  nb::class_<Texture> cls(m, "Texture",
                          "A sampled f32 texture (a snapshot of an array); tack.texture2d and "
                          "tack.texture3d make one.");
  g_texture_type = reinterpret_cast<PyTypeObject*>(cls.ptr());
  cls.def(
         "__init__",
         [](Texture* t, const Array& source, nb::handle shape, const std::string& interp) {
           Shape s = to_shape(shape);
           if (interp != "linear" && interp != "linear_exact")
             throw ValueError("interp='" + interp +
                              "' is not a filtering: write interp='linear' (the texture unit "
                              "where the backend has one) or interp='linear_exact' (the same "
                              "bits on every backend)");
           Interp i = interp == "linear" ? Interp::Linear : Interp::LinearExact;
           if (s.size() == 2)
             new (t) Texture(texture2d(source, {s[0], s[1]}, i));
           else if (s.size() == 3)
             new (t) Texture(texture3d(source, {s[0], s[1], s[2]}, i));
           else
             throw ValueError("a texture's shape is (width, height) or (width, height, depth)");
         },
         nb::arg("source"), nb::arg("shape"), nb::arg("interp") = "linear")
      .def_prop_ro("dims", &Texture::dims)
      .def_prop_ro("interp", [](const Texture& t) { return t.exact() ? "linear_exact" : "linear"; })
      .def_prop_ro("data", [](const Texture& t) { return t.data(); })
      .def("update", &Texture::update, nb::call_guard<nb::gil_scoped_release>());
}

void bind_array(nb::module_& m) {
  bind_texture(m);
  nb::class_<Array> cls(m, "Array", "An n-dimensional, row-major, contiguous array on one device.");
  g_array_type = reinterpret_cast<PyTypeObject*>(cls.ptr());
  cls.def_prop_ro(
         "shape", [](const Array& a) { return shape_tuple(a.shape()); },
         nb::sig("def shape(self) -> tuple[int, ...]"), "The extent of each dimension.")
      .def_prop_ro(
          "dtype", [](const Array& a) { return dtype_object(a.dtype()); },
          nb::sig("def dtype(self) -> DType"), "The element type (tack.f32...).")
      .def_prop_ro("size", &Array::size, "The number of elements.")
      .def_prop_ro("ndim", &Array::ndim, "The number of dimensions.")
      .def_prop_ro("nbytes", &Array::nbytes, "The size of the elements in bytes.")
      .def_prop_ro(
          "itemsize", [](const Array& a) { return dtype_size(a.dtype()); },
          "The size of one element in bytes.")
      .def_prop_ro(
          "strides",
          [](const Array& a) {
            // Row-major and contiguous: each dimension steps over the ones after it.
            std::vector<int64_t> strides(a.ndim());
            int64_t step = static_cast<int64_t>(dtype_size(a.dtype()));
            for (int d = a.ndim() - 1; d >= 0; --d) {
              strides[d] = step;
              step *= a.shape()[d];
            }
            return shape_tuple(strides);
          },
          nb::sig("def strides(self) -> tuple[int, ...]"),
          "Bytes from one element to the next along each dimension, as NumPy's strides: an "
          "array is row-major and contiguous, so the last one is itemsize.")
      .def_prop_ro(
          "T",
          [](const Array& a) -> Array {
            if (a.ndim() < 2) return a;
            if (a.ndim() > 2)
              throw TypeError(".T is for 1-d and 2-d arrays; this one has " +
                              std::to_string(a.ndim()) + " dimensions: use a.numpy().T");
            // Arrays are contiguous, so the transpose is a copy; read-only, so that a write to
            // it, which would change `a` in NumPy, is an error rather than lost.
            nb::object t =
                nb::module_::import_("numpy").attr("ascontiguousarray")(to_numpy(a).attr("T"));
            Device dev = a.device();
            auto copy = std::make_shared<Array>(make_from_host(t, nb::none(), nb::cast(dev)));
            return array_from_ptr(copy->data(), copy->shape(), copy->dtype(), &dev, false, copy);
          },
          nb::sig("def T(self) -> Array"),
          "The transpose of a 2-d array: a read-only copy (arrays are contiguous, so it cannot be "
          "a view as in NumPy; a write to it raises). A 1-d or 0-d array is itself.")
      .def_prop_ro("device", &Array::device, "The device that holds the elements.")
      .def_prop_ro("writable", &Array::writable,
                   "False for memory its producer marked read-only: kernels refuse to write it.")
      .def_prop_ro(
          "ptr", [](const Array& a) { return reinterpret_cast<uintptr_t>(a.data()); },
          "The address of the first element, in the device's memory space.")
      .def("numpy", &to_numpy, nb::sig("def numpy(self) -> numpy.ndarray[typing.Any, typing.Any]"),
           "A copy on the host, as a NumPy array.")
      .def(
          "fill",
          [](Array& a, nb::handle v) {
            if (!is_number(v))
              throw TypeError("fill() takes a number, not " +
                              nb::cast<std::string>(nb::repr(v.type())));
            assign(a, v);
          },
          nb::arg("value"), nb::sig("def fill(self, value: int | float | bool) -> None"),
          "Sets every element to value.")
      .def(
          "reshape",
          [](const Array& a, nb::args shape) {
            if (shape.size() == 1 && !PyLong_Check(shape[0].ptr()))
              return a.reshape(to_shape(shape[0]));
            return a.reshape(to_shape(shape));
          },
          nb::sig("def reshape(self, *shape: int | tuple[int, ...]) -> Array"),
          "A view of the same elements with another shape: a.reshape(4, 8) or a.reshape((4, "
          "8)); one extent may be -1.")
      .def("copy", &Array::copy, "A new array with the same elements, on the same device.")
      .def(
          "astype", [](const Array& a, nb::handle t) { return a.astype(to_dtype(t)); },
          nb::arg("dtype"), nb::sig("def astype(self, dtype: object) -> Array"),
          "A new array of the elements converted to dtype (tack.f64, a NumPy dtype or a name).")
      .def(
          "sum", [](const Array& a) { return host_number(algorithms::sum(a)); },
          nb::sig("def sum(self) -> int | float | bool"),
          "The sum of the elements, as a Python number (tack.algorithms.sum: integers exact, "
          "floats in a fixed order).")
      .def(
          "min", [](const Array& a) { return host_number(algorithms::min(a)); },
          nb::sig("def min(self) -> int | float | bool"), "The smallest element.")
      .def(
          "max", [](const Array& a) { return host_number(algorithms::max(a)); },
          nb::sig("def max(self) -> int | float | bool"), "The largest element.")
      .def(
          "mean", [](const Array& a) { return algorithms::mean(a); },
          "The mean of the elements, a float (NaN for an empty array, as NumPy's).")
      .def(
          "item",
          [](const Array& a) {
            if (a.size() != 1)
              throw ValueError("item() needs an array of one element, this one has " +
                               std::to_string(a.size()));
            return read_element(a.reshape({1}));
          },
          nb::sig("def item(self) -> int | float | bool"),
          "The one element of an array of size 1, as a Python number.")
      .def(
          "tolist", [](const Array& a) { return to_numpy(a).attr("tolist")(); },
          nb::sig("def tolist(self) -> list[object]"), "The elements as nested Python lists.")
      .def(
          "__len__",
          [](const Array& a) {
            if (a.ndim() == 0) throw TypeError("len() of a 0-d array");
            return a.shape()[0];
          },
          "The first extent, as for a NumPy array (TypeError for a 0-d array).")
      .def(
          "__getitem__",
          [](const Array& a, nb::handle key) -> nb::object {
            Selection s = select(a, key);
            if (s.element) return read_element(s.view);
            return nb::cast(std::move(s.view));
          },
          nb::arg("key"), nb::sig("def __getitem__(self, key: object) -> typing.Any"),
          "An element (a Python number) for a full index, else a view of the rows selected.")
      .def("__setitem__",
           [](const Array& a, nb::handle key, nb::handle value) {
             Selection s = select(a, key);
             assign(s.view, value);
           })
      .def("__repr__",
           [](const Array& a) {
             nb::object text = nb::module_::import_("numpy").attr("array2string")(
                 to_numpy(a), nb::arg("separator") = ", ", nb::arg("prefix") = "tack.Array(");
             return "tack.Array(" + nb::cast<std::string>(text) + ", dtype=tack." +
                    (a.dtype() == DType::Bool ? std::string("bool_")
                                              : std::string(dtype_name(a.dtype()))) +
                    ", device='" + a.device().name() + "')";
           })
      // NumPy's protocol: np.asarray(a) views host memory without a copy.
      .def(
          "__array__",
          [](const Array& a, nb::handle dtype, nb::handle copy) {
            // NumPy 2's meaning of copy: True always, None when needed (memory NumPy cannot
            // address), False never (ValueError when one is needed).
            const bool host = a.device().type() == "cpu";
            if (!copy.is_none() && !nb::cast<bool>(copy) && !host)
              throw ValueError("np.asarray(a, copy=False): the array is on " + a.device().name() +
                               ", which NumPy cannot view without a copy: use a.numpy()");
            const bool make_copy = copy.is_none() ? !host : nb::cast<bool>(copy);
            nb::object out = make_copy ? to_numpy(a) : export_view(a, true);
            if (!dtype.is_none()) out = out.attr("astype")(dtype, nb::arg("copy") = false);
            return out;
          },
          nb::arg("dtype") = nb::none(), nb::arg("copy") = nb::none(),
          "NumPy's protocol (np.asarray(a)): a view of the elements, without a copy, for an "
          "array in host memory; a copy for one on another device or with copy=True (copy=False "
          "there raises ValueError).")
      .def(
          "__dlpack__",
          [](const Array& a, nb::handle stream, nb::handle max_version, nb::handle dl_device,
             nb::handle copy) {
            (void)stream;  // host memory: nothing to order against a stream
            if (!dl_device.is_none()) {
              auto want = nb::cast<std::pair<int, int>>(dl_device);
              if (want.first != dlpack_device_type(a) || want.second != a.device().index())
                throw nb::buffer_error("__dlpack__: copying to another device is not supported");
            }
            bool make_copy = !copy.is_none() && nb::cast<bool>(copy);
            // Device memory: the C++ export, which waits for queued work (the consumer's
            // `stream` then has nothing to wait for).
            if (dlpack_device_type(a) != kDLCPU) return dlpack_capsule(make_copy ? a.copy() : a);
            nb::object view = export_view(make_copy ? a.copy() : a, false);
            if (max_version.is_none()) return view.attr("__dlpack__")();
            return view.attr("__dlpack__")(nb::arg("max_version") = max_version);
          },
          nb::kw_only(), nb::arg("stream") = nb::none(), nb::arg("max_version") = nb::none(),
          nb::arg("dl_device") = nb::none(), nb::arg("copy") = nb::none())
      .def("__dlpack_device__", [](const Array& a) {
        return nb::make_tuple(dlpack_device_type(a), a.device().index());
      });

  // ---- creation ----
  m.def("empty", &create<&empty>, nb::arg("shape"), nb::arg("dtype") = nb::none(),
        nb::arg("device") = nb::none(),
        nb::sig("def empty(shape: int | tuple[int, ...], dtype: object = None, device: str | "
                "Device | None = None) -> Array"),
        "A new array of this shape whose elements are not set; f32 unless a dtype is given, on "
        "the default device unless a device is given.");
  m.def("zeros", &create<&zeros>, nb::arg("shape"), nb::arg("dtype") = nb::none(),
        nb::arg("device") = nb::none(),
        nb::sig("def zeros(shape: int | tuple[int, ...], dtype: object = None, device: str | "
                "Device | None = None) -> Array"),
        "A new array of zeros (f32 unless a dtype is given).");
  m.def("ones", &create<&ones>, nb::arg("shape"), nb::arg("dtype") = nb::none(),
        nb::arg("device") = nb::none(),
        nb::sig("def ones(shape: int | tuple[int, ...], dtype: object = None, device: str | Device "
                "| None = None) -> Array"),
        "A new array of ones (f32 unless a dtype is given).");
  m.def(
      "full",
      [](nb::handle shape, nb::handle value, nb::handle dtype, nb::handle device_h) {
        auto dev = to_device(device_h);
        Array a = empty(to_shape(shape), to_dtype(dtype, DType::F32), dev ? &*dev : nullptr);
        assign(a, value);
        return a;
      },
      nb::arg("shape"), nb::arg("fill_value"), nb::arg("dtype") = nb::none(),
      nb::arg("device") = nb::none(),
      nb::sig("def full(shape: int | tuple[int, ...], fill_value: int | float | bool, dtype: "
              "object = None, "
              "device: str | Device | None = None) -> Array"),
      "A new array with every element fill_value (f32 unless a dtype is given).");
  m.def(
      "_arange",
      [](int64_t n, nb::handle dtype, nb::handle device_h) {
        auto dev = to_device(device_h);
        return arange(n, to_dtype(dtype, DType::F32), dev ? &*dev : nullptr);
      },
      nb::arg("n"), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none());
  m.def(
      "empty_like",
      [](nb::handle like, nb::handle dtype, nb::handle device_h) {
        Shape s;
        DType t;
        std::optional<Device> dev;
        like_of(like, dtype, device_h, s, t, dev);
        return empty(s, t, dev ? &*dev : nullptr);
      },
      nb::arg("a"), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(),
      nb::sig("def empty_like(a: object, dtype: object = None, device: str | Device | None = None) "
              "-> Array"),
      "A new array of a's shape (a tack or NumPy array), and its dtype and device unless given; "
      "elements not set.");
  m.def(
      "zeros_like",
      [](nb::handle like, nb::handle dtype, nb::handle device_h) {
        Shape s;
        DType t;
        std::optional<Device> dev;
        like_of(like, dtype, device_h, s, t, dev);
        return zeros(s, t, dev ? &*dev : nullptr);
      },
      nb::arg("a"), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(),
      nb::sig("def zeros_like(a: object, dtype: object = None, device: str | Device | None = None) "
              "-> Array"),
      "A new array of zeros of a's shape, and its dtype and device unless given.");
  m.def("_from_host", &make_from_host, nb::arg("obj"), nb::arg("dtype") = nb::none(),
        nb::arg("device") = nb::none());

  // ---- copies ----
  m.def(
      "copyto",
      [](nb::handle dst, nb::handle src) {
        if (nb::isinstance<Array>(dst)) {
          Array& d = *nb::inst_ptr<Array>(dst);
          if (nb::isinstance<Array>(src)) {
            nb::gil_scoped_release release;
            copyto(d, *nb::inst_ptr<Array>(src));
          } else {
            copy_host_into(d, src);
          }
          return;
        }
        if (!nb::isinstance<Array>(src))
          throw TypeError("copyto: one of the two arguments must be a tack array");
        const Array& s = *nb::inst_ptr<Array>(src);
        // Device to host: straight into the destination when it is contiguous and of the same
        // dtype, else through NumPy's copyto.
        nb::ndarray<nb::c_contig, nb::device::cpu> nd;
        if (nb::try_cast(dst, nd, false) && from_dlpack_dtype(nd.dtype()) == s.dtype() &&
            Shape(nd.shape_ptr(), nd.shape_ptr() + nd.ndim()) == s.shape()) {
          nb::gil_scoped_release release;
          s.read(nd.data(), nd.nbytes());
          return;
        }
        nb::module_::import_("numpy").attr("copyto")(dst, to_numpy(s),
                                                     nb::arg("casting") = "same_kind");
      },
      nb::arg("dst"), nb::arg("src"), nb::sig("def copyto(dst: object, src: object) -> None"),
      "Copies src into dst, of the same shape: tack arrays on any devices, or one of them a NumPy "
      "array (or anything NumPy takes).");

  // ---- interop ----
  m.def(
      "from_dlpack",
      [](nb::handle obj, nb::handle copy) -> nb::object {
        if (nb::isinstance<Array>(obj)) {
          if (!copy.is_none() && nb::cast<bool>(copy))
            return nb::cast(nb::inst_ptr<Array>(obj)->copy());
          return nb::borrow(obj);
        }
        bool allow_copy = copy.is_none() || nb::cast<bool>(copy);
        auto a = wrap_foreign(obj, allow_copy);
        if (!a)
          throw TypeError(
              "from_dlpack: " + nb::cast<std::string>(nb::repr(nb::type_name(obj.type()))) +
              " supports neither DLPack (__dlpack__) nor the buffer protocol");
        if (!copy.is_none() && nb::cast<bool>(copy)) return nb::cast(a->copy());
        return nb::cast(std::move(*a));
      },
      nb::arg("obj"), nb::kw_only(), nb::arg("copy") = nb::none(),
      nb::sig("def from_dlpack(obj: object, *, copy: bool | None = None) -> Array"),
      "A tack array of a DLPack producer's memory (a NumPy, PyTorch, CuPy, JAX array...), "
      "without a copy unless copy=True; read-only memory gives a read-only array.");
  m.def(
      "array_from_ptr",
      [](uintptr_t ptr, nb::handle shape, nb::handle dtype, nb::handle device_h, bool writable) {
        auto dev = to_device(device_h);
        return array_from_ptr(reinterpret_cast<void*>(ptr), to_shape(shape),
                              to_dtype(dtype, DType::F32), dev ? &*dev : nullptr, writable);
      },
      nb::arg("ptr"), nb::arg("shape"), nb::arg("dtype") = nb::none(),
      nb::arg("device") = nb::none(), nb::arg("writable") = false,
      nb::sig("def array_from_ptr(ptr: int, shape: int | tuple[int, ...], dtype: object = None, "
              "device: str | Device | None = None, writable: bool = False) -> Array"),
      "An array over memory Tack does not own, at address ptr on device, without a copy; the "
      "memory must outlive the array. Read-only unless writable=True.");
  m.def(
      "memory_space",
      [](uintptr_t ptr) { return memory_space(reinterpret_cast<const void*>(ptr)); },
      nb::arg("ptr"),
      "The memory space of an address: 'cpu' for host memory, or a GPU backend's space "
      "('cuda', 'cuda_pinned', 'cuda_managed'...).");
}

}  // namespace tack::python
