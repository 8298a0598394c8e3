// Objects of @tack.data_oriented classes: tack.Class and tack.Function handles, and the conversion
// of a Python object into the tack::Object a kernel takes. What the object's class and class-level
// constants are is Python's answer (tack._classes.describe_object); how the object becomes the
// kernel's arguments and variant key is the core's (runtime/arguments.cpp).
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "ext.hpp"

namespace tack::python {
namespace {

// tack._classes.describe_object, found at the first object.
nb::object& describer() {
  static nb::object* d = new nb::object();  // leaked: outlives the interpreter's teardown
  if (!d->is_valid()) *d = nb::module_::import_("tack._classes").attr("describe_object");
  return *d;
}

// Objects inside objects: deeper than this, an object contains itself.
constexpr size_t kMaxDepth = 32;

Object convert_object(nb::handle o, std::vector<PyObject*>& open);

Attribute convert_attribute(nb::handle v, const std::string& name, const std::string& cls,
                            std::vector<PyObject*>& open) {
  PyObject* p = v.ptr();
  PyTypeObject* tp = Py_TYPE(p);
  if (tp == g_array_type || PyType_IsSubtype(tp, g_array_type))
    return Attribute(static_cast<const Array&>(*nb::inst_ptr<Array>(v)));
  if (PyType_IsSubtype(tp, g_texture_type))
    return Attribute(static_cast<const Texture&>(*nb::inst_ptr<Texture>(v)));
  if (nb::isinstance<Function>(v)) return Attribute(nb::cast<Function>(v));
  std::string_view type_name = tp->tp_name;
  if (PyBool_Check(p) || type_name == "numpy.bool" || type_name == "numpy.bool_")
    return Attribute(PyObject_IsTrue(p) == 1);
  if (PyFloat_Check(p)) return Attribute(PyFloat_AS_DOUBLE(p));
  bool scalar = !PySequence_Check(p);  // NumPy's scalars, not its arrays
  if (PyLong_Check(p) || (scalar && PyIndex_Check(p))) {
    // Python and NumPy integers: i64, or u64 above it.
    nb::object i = nb::steal(PyNumber_Index(p));
    if (!i.is_valid()) throw nb::python_error();
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
    if (!overflow) return Attribute(static_cast<int64_t>(x));
    unsigned long long u = PyLong_AsUnsignedLongLong(i.ptr());
    if (!PyErr_Occurred()) return Attribute(static_cast<uint64_t>(u));
    PyErr_Clear();
    return Attribute::unsupported("an integer outside the range of i64 and u64");
  }
  if (PyTuple_Check(p)) {
    std::vector<Attribute> elements;
    for (nb::handle e : nb::borrow<nb::tuple>(v))
      elements.push_back(convert_attribute(e, name, cls, open));
    return Attribute::tuple(std::move(elements));
  }
  if (is_device_object(p)) {
    if (std::find(open.begin(), open.end(), p) != open.end() || open.size() >= kMaxDepth)
      throw TypeError("attribute '" + name + "' of class '" + cls +
                      "' holds an object that contains it: a kernel takes objects whose "
                      "attributes form a tree");
    return Attribute(convert_object(v, open));
  }
  if (scalar && PyNumber_Check(p)) {  // numpy.floating and other reals
    double d = PyFloat_AsDouble(p);
    if (!(d == -1.0 && PyErr_Occurred())) return Attribute(d);
    PyErr_Clear();
  }
  // NumPy arrays and other DLPack producers, without a copy; one of a dtype Tack has not is
  // described, for the error of a kernel that reads it.
  if (!PyUnicode_Check(p)) {
    try {
      if (auto a = wrap_foreign(v, false)) return Attribute(std::move(*a));
    } catch (const Error& e) {
      return Attribute::unsupported("an array that Tack cannot take (" + std::string(e.what()) +
                                    ")");
    }
  }
  return Attribute::unsupported(std::string("a ") + tp->tp_name);
}

Object convert_object(nb::handle o, std::vector<PyObject*>& open) {
  open.push_back(o.ptr());
  nb::tuple d = nb::cast<nb::tuple>(describer()(o));
  Class cls = nb::cast<Class>(d[0]);
  Object::Constants constants;
  for (nb::handle item : nb::cast<nb::list>(d[1])) {
    nb::tuple t = nb::cast<nb::tuple>(item);
    constants.emplace_back(nb::cast<std::string>(t[0]), nb::cast<ExternalName>(t[1]));
  }
  Object::Attributes attributes;
  for (nb::handle item : nb::cast<nb::list>(d[2])) {
    nb::tuple t = nb::cast<nb::tuple>(item);
    std::string name = nb::cast<std::string>(t[0]);
    Attribute a = convert_attribute(t[1], name, cls.name(), open);
    attributes.emplace_back(std::move(name), std::move(a));
  }
  open.pop_back();
  return Object(std::move(cls), std::move(attributes), std::move(constants));
}

ExternalMethod::Kind method_kind(const std::string& kind) {
  if (kind == "method") return ExternalMethod::Kind::Method;
  if (kind == "static") return ExternalMethod::Kind::Static;
  if (kind == "kernel") return ExternalMethod::Kind::Kernel;
  if (kind == "host") return ExternalMethod::Kind::Host;
  return ExternalMethod::Kind::None;
}

}  // namespace

bool is_device_object(PyObject* o) {
  static PyObject* marker = PyUnicode_InternFromString("__tack_data_oriented__");
  PyObject* v = PyObject_GetAttr(reinterpret_cast<PyObject*>(Py_TYPE(o)), marker);
  if (!v) {
    PyErr_Clear();
    return false;
  }
  bool yes = v == Py_True;
  Py_DECREF(v);
  return yes;
}

Object to_object(nb::handle o) {
  std::vector<PyObject*> open;
  return convert_object(o, open);
}

void bind_object(nb::module_& m) {
  nb::class_<Class>(m, "Class", "A device class as the core knows it (made by tack._classes).")
      .def(
          "__init__",
          [](Class* self, std::string name, std::vector<std::string> iterate, nb::object methods) {
            // The core asks for a method while it compiles, on any thread, without the GIL.
            std::shared_ptr<nb::object> resolve = shared_object(std::move(methods));
            MethodResolver answer = [resolve](const std::string& n) -> ExternalMethod {
              nb::gil_scoped_acquire gil;
              try {
                nb::tuple r = nb::cast<nb::tuple>((*resolve)(n));
                ExternalMethod m;
                m.kind = method_kind(nb::cast<std::string>(r[0]));
                m.source = nb::cast<std::string>(r[1]);
                m.filename = nb::cast<std::string>(r[2]);
                m.first_line = nb::cast<int>(r[3]);
                if (!r[4].is_none()) m.resolve = name_resolver(nb::borrow(r[4]));
                return m;
              } catch (const nb::python_error& e) {
                throw Error("looking up the method '" + n + "' failed: " + e.what());
              }
            };
            new (self) Class(Class::from_host(std::move(name), std::move(iterate), answer));
          },
          nb::arg("name"), nb::arg("iterate"), nb::arg("methods"))
      .def_prop_ro("name", [](const Class& c) { return c.name(); })
      .def("__repr__", [](const Class& c) { return "<tack.Class " + c.name() + ">"; });

  nb::class_<Function>(m, "Function", "A @tack.func as the core knows it, stored in an object.")
      .def(
          "__init__",
          [](Function* self, const std::string& source, const std::string& filename, int first_line,
             nb::object resolver, const std::string& name) {
            Module module = Module::from_function(source, filename, first_line,
                                                  name_resolver(std::move(resolver)));
            new (self) Function(module.function(name));
          },
          nb::arg("source"), nb::arg("filename"), nb::arg("first_line"), nb::arg("resolver"),
          nb::arg("name"))
      .def_prop_ro("name", [](const Function& f) { return f.name(); })
      .def("__repr__", [](const Function& f) { return "<tack.Function " + f.name() + ">"; });
}

}  // namespace tack::python
