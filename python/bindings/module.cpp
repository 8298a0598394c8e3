// The module `tack._tack`: dtypes, devices and backends, process-wide controls, and the mapping of
// tack::Error's categories to Python exceptions.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <string>
#include <vector>

#include "ext.hpp"
#include "tools/cli.hpp"

namespace tack::python {
namespace {

PyObject* g_compile_error = nullptr;
PyObject* g_device_error = nullptr;

DTypeObject g_dtypes[std::size(kAllDTypes)];
PyObject* g_dtype_objects[std::size(kAllDTypes)];

// The name a dtype has in the tack module: bool_ (as in NumPy), i8 ... f64.
const char* attr_name(DType t) {
  return t == DType::Bool ? "bool_" : dtype_name(t).data();
}

void raise_compile_error(const CompileError& e) {
  std::string msg = e.message();
  if (!e.kernel().empty() && e.kernel() != "<module>") msg = "in '" + e.kernel() + "': " + msg;
  if (!e.hint().empty()) msg += "\n  hint: " + e.hint();
  nb::object text = nb::none();
  try {
    nb::object line = nb::module_::import_("linecache").attr("getline")(e.file(), e.line());
    if (nb::len(line) > 0) text = line;
  } catch (const nb::python_error&) {
  }
  nb::object details = nb::make_tuple(e.file(), e.line(), e.col(), text);
  nb::object exc = nb::steal(PyObject_CallFunctionObjArgs(
      g_compile_error, nb::str(msg.c_str()).ptr(), details.ptr(), nullptr));
  if (!exc) return;  // the error of the failed construction is set
  exc.attr("kernel") = e.kernel();
  exc.attr("message") = e.message();
  exc.attr("hint") = e.hint();
  exc.attr("line") = e.line();
  exc.attr("column") = e.col();
  exc.attr("report") = e.what();
  PyErr_SetObject(g_compile_error, exc.ptr());
}

// A runtime message in Python's spelling: the C++ API's names (tack::copyto, tack::Array)
// become the Python package's (tack.copyto, tack.Array).
std::string python_spelling(std::string m) {
  for (size_t at = m.find("tack::"); at != std::string::npos; at = m.find("tack::", at))
    m.replace(at, 6, "tack.");
  return m;
}

void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const CompileError& e) {
    raise_compile_error(e);
  } catch (const TypeError& e) {
    PyErr_SetString(PyExc_TypeError, python_spelling(e.what()).c_str());
  } catch (const ValueError& e) {
    PyErr_SetString(PyExc_ValueError, python_spelling(e.what()).c_str());
  } catch (const IndexError& e) {
    PyErr_SetString(PyExc_IndexError, python_spelling(e.what()).c_str());
  } catch (const DeviceError& e) {
    PyErr_SetString(g_device_error, python_spelling(e.what()).c_str());
  } catch (const Error& e) {
    PyErr_SetString(PyExc_RuntimeError, python_spelling(e.what()).c_str());
  }
}

DType dtype_from_string(const std::string& s);

}  // namespace

void set_python_error() {
  try {
    throw;
  } catch (nb::python_error& e) {
    e.restore();
  } catch (const Error&) {
    translate(std::current_exception(), nullptr);
  } catch (const nb::cast_error& e) {
    PyErr_SetString(PyExc_TypeError, "an argument has a type this function cannot take");
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "unknown C++ exception");
  }
}

nb::object dtype_object(DType t) {
  return nb::borrow(g_dtype_objects[static_cast<int>(t)]);
}

const char* numpy_name(DType t) {
  switch (t) {
    case DType::Bool:
      return "bool";
    case DType::I8:
      return "int8";
    case DType::U8:
      return "uint8";
    case DType::I16:
      return "int16";
    case DType::U16:
      return "uint16";
    case DType::I32:
      return "int32";
    case DType::U32:
      return "uint32";
    case DType::I64:
      return "int64";
    case DType::U64:
      return "uint64";
    case DType::F32:
      return "float32";
    case DType::F64:
      return "float64";
  }
  return "?";
}

namespace {

DType dtype_from_string(const std::string& s) {
  for (DType t : kAllDTypes)
    if (s == dtype_name(t) || s == attr_name(t)) return t;
  // NumPy's spellings ("float32", "int64", "float", "double"...), with NumPy's meaning.
  nb::object np_dtype;
  try {
    np_dtype = nb::module_::import_("numpy").attr("dtype")(s);
  } catch (const nb::python_error&) {
    throw TypeError("'" + s + "' is not a dtype: write tack.f32, 'f32', 'float32' or np.float32");
  }
  std::string name = nb::cast<std::string>(np_dtype.attr("name"));
  for (DType t : kAllDTypes)
    if (name == numpy_name(t)) return t;
  throw TypeError("Tack has no dtype for NumPy's " + name +
                  ": use bool, int8 ... int64, uint8 ... uint64, float32 or float64");
}

}  // namespace

DType to_dtype(nb::handle h) {
  if (nb::isinstance<DTypeObject>(h)) return nb::inst_ptr<DTypeObject>(h)->t;
  if (nb::isinstance<nb::str>(h)) return dtype_from_string(nb::cast<std::string>(h));
  if (h.is_none()) throw TypeError("a dtype is required here");
  // NumPy dtypes and scalar types, and Python's own types (float is float64, as in NumPy).
  nb::object np_dtype;
  try {
    np_dtype = nb::module_::import_("numpy").attr("dtype")(h);
  } catch (const nb::python_error&) {
    throw TypeError("'" + nb::cast<std::string>(nb::repr(h)) +
                    "' is not a dtype: write tack.f32, 'f32', 'float32' or np.float32");
  }
  return dtype_from_string(nb::cast<std::string>(np_dtype.attr("name")));
}

DType to_dtype(nb::handle h, DType fallback) {
  return h.is_none() ? fallback : to_dtype(h);
}

std::optional<Device> to_device(nb::handle h) {
  if (h.is_none()) return std::nullopt;
  if (nb::isinstance<Device>(h)) return *nb::inst_ptr<Device>(h);
  if (nb::isinstance<nb::str>(h)) return device(nb::cast<std::string>(h));
  throw TypeError("a device is a tack.device(...) or a name such as 'cpu' or 'cuda:1', not " +
                  nb::cast<std::string>(nb::repr(h)));
}

std::optional<int64_t> index_value(nb::handle i, bool* overflow) {
  nb::object index = nb::steal(PyNumber_Index(i.ptr()));
  if (!index.is_valid()) {
    PyErr_Clear();
    return std::nullopt;
  }
  int over = 0;
  long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &over);
  if (v == -1 && PyErr_Occurred()) throw nb::python_error();
  *overflow = over != 0;
  return static_cast<int64_t>(v);
}

Shape to_shape(nb::handle h) {
  auto bad = [&] {
    return TypeError("a shape is an int or a tuple of ints, not " +
                     nb::cast<std::string>(nb::repr(h)));
  };
  std::vector<nb::object> dims;  // owned: a sequence may make its items as it is iterated
  if (PyLong_Check(h.ptr())) {
    dims.push_back(nb::borrow(h));
  } else {
    if (!PySequence_Check(h.ptr())) throw bad();
    for (nb::handle d : h) dims.push_back(nb::borrow(d));
  }
  Shape s;
  for (const nb::object& d : dims) {
    bool overflow = false;
    auto v = index_value(d, &overflow);
    if (!v) throw bad();
    if (overflow) {
      std::string text = nb::cast<std::string>(nb::repr(h));
      PyErr_SetString(
          PyExc_OverflowError,
          ("the shape " + text + " has a dimension that does not fit in 64 bits").c_str());
      throw nb::python_error();
    }
    s.push_back(*v);
  }
  return s;
}

nb::tuple shape_tuple(const Shape& s) {
  nb::object t = nb::steal(PyTuple_New(static_cast<Py_ssize_t>(s.size())));
  for (size_t i = 0; i < s.size(); ++i)
    PyTuple_SET_ITEM(t.ptr(), static_cast<Py_ssize_t>(i), PyLong_FromLongLong(s[i]));
  return nb::borrow<nb::tuple>(t);
}

nb::object element_to_python(DType t, const void* raw) {
  auto get = [&](auto v) {
    std::memcpy(&v, raw, sizeof v);
    return v;
  };
  switch (t) {
    case DType::Bool:
      return nb::bool_(get(uint8_t{}) != 0);
    case DType::I8:
      return nb::int_(get(int8_t{}));
    case DType::U8:
      return nb::int_(get(uint8_t{}));
    case DType::I16:
      return nb::int_(get(int16_t{}));
    case DType::U16:
      return nb::int_(get(uint16_t{}));
    case DType::I32:
      return nb::int_(get(int32_t{}));
    case DType::U32:
      return nb::int_(get(uint32_t{}));
    case DType::I64:
      return nb::int_(get(int64_t{}));
    case DType::U64:
      return nb::steal(PyLong_FromUnsignedLongLong(get(uint64_t{})));
    case DType::F32:
      return nb::float_(get(float{}));
    case DType::F64:
      return nb::float_(get(double{}));
  }
  return nb::none();
}

namespace {

// The default-device stack of `with tack.device(...):` blocks.
std::vector<Device>& device_stack() {
  static std::vector<Device> s;
  return s;
}

nb::frozenset dtype_set(const std::set<DType>& types) {
  nb::set s;
  for (DType t : types) s.add(dtype_object(t));
  return nb::frozenset(s);
}

}  // namespace

void bind_module(nb::module_& m) {
  // ---- errors ----
  g_compile_error = PyErr_NewExceptionWithDoc(
      "tack.CompileError",
      "A kernel the language rejects: a SyntaxError whose filename and lineno point at the "
      "user's own file, with the kernel's name, line, column, message and hint.",
      PyExc_SyntaxError, nullptr);
  g_device_error = PyErr_NewExceptionWithDoc(
      "tack.DeviceError",
      "A failure of a device, its runtime or the kernel cache (a missing backend, a failed "
      "allocation or launch).",
      PyExc_RuntimeError, nullptr);
  m.attr("CompileError") = nb::handle(g_compile_error);
  m.attr("DeviceError") = nb::handle(g_device_error);
  nb::register_exception_translator(translate);

  // ---- dtypes ----
  nb::class_<DTypeObject>(m, "DType", "A scalar element type: tack.bool_, tack.i8 ... tack.f64.")
      .def_prop_ro("name", [](const DTypeObject& d) { return std::string(dtype_name(d.t)); })
      .def_prop_ro("itemsize", [](const DTypeObject& d) { return dtype_size(d.t); })
      .def_prop_ro("numpy",
                   [](const DTypeObject& d) {
                     return nb::module_::import_("numpy").attr("dtype")(numpy_name(d.t));
                   })
      .def("__repr__", [](const DTypeObject& d) { return std::string("tack.") + attr_name(d.t); })
      .def("__str__", [](const DTypeObject& d) { return std::string(dtype_name(d.t)); })
      .def("__hash__",
           [](const DTypeObject& d) { return nb::hash(nb::str(dtype_name(d.t).data())); })
      .def("__eq__",
           [](const DTypeObject& d, nb::handle other) {
             try {
               return to_dtype(other) == d.t;
             } catch (const Error&) {
               return false;
             }
           })
      .def("__ne__",
           [](const DTypeObject& d, nb::handle other) {
             try {
               return to_dtype(other) != d.t;
             } catch (const Error&) {
               return true;
             }
           })
      // On the host a dtype makes a NumPy scalar: tack.f32(1.5) is np.float32(1.5).
      .def("__call__",
           [](const DTypeObject& d, nb::handle v) {
             return nb::module_::import_("numpy").attr(numpy_name(d.t))(v);
           })
      .def("__reduce__", [](const DTypeObject& d) { return std::string(attr_name(d.t)); });
  for (size_t i = 0; i < std::size(kAllDTypes); ++i) {
    g_dtypes[i].t = kAllDTypes[i];
    nb::object o = nb::cast(&g_dtypes[i], nb::rv_policy::reference);
    g_dtype_objects[i] = o.release().ptr();  // immortal: referenced for the process's lifetime
    m.attr(attr_name(kAllDTypes[i])) = nb::handle(g_dtype_objects[i]);
  }
  m.def(
      "dtype", [](nb::handle h) { return dtype_object(to_dtype(h)); }, nb::arg("like"),
      nb::sig("def dtype(like: object) -> DType"),
      "The tack dtype for a tack dtype, a NumPy dtype or type, or a string.");

  // ---- backends and devices ----
  nb::class_<BackendInfo>(m, "Backend",
                          "A backend's declared capabilities (docs/backends.md); never probed.")
      .def_ro("name", &BackendInfo::name)
      .def_ro("label", &BackendInfo::label)
      .def_prop_ro("supported_dtypes",
                   [](const BackendInfo& b) { return dtype_set(b.supported_dtypes); })
      .def_prop_ro("supported_atomic_dtypes",
                   [](const BackendInfo& b) { return dtype_set(b.supported_atomic_dtypes); })
      .def_prop_ro("supports_f64", &BackendInfo::supports_f64)
      .def_ro("supports_device_reductions", &BackendInfo::supports_device_reductions)
      .def_ro("supports_workgroups", &BackendInfo::supports_workgroups)
      .def_ro("supports_hardware_textures", &BackendInfo::supports_hardware_textures)
      .def_ro("max_workgroup_size", &BackendInfo::max_workgroup_size)
      .def_prop_ro("device_memory_spaces",
                   [](const BackendInfo& b) {
                     nb::list l;
                     for (const auto& s : b.device_memory_spaces) l.append(s);
                     return nb::tuple(l);
                   })
      .def_ro("asynchronous", &BackendInfo::asynchronous)
      .def("__repr__", [](const BackendInfo& b) { return "<tack backend '" + b.name + "'>"; });

  nb::class_<Device>(m, "Device", "One device of one backend: tack.device('cpu'), 'cuda:1'.")
      .def_prop_ro("type", [](const Device& d) { return d.type(); })
      .def_prop_ro("index", &Device::index)
      .def_prop_ro("name", &Device::name)
      .def_prop_ro(
          "backend", [](const Device& d) { return &d.backend(); }, nb::rv_policy::reference)
      .def("__str__", &Device::name)
      .def("__repr__", [](const Device& d) { return "tack.device('" + d.name() + "')"; })
      .def("__eq__",
           [](const Device& d, nb::handle other) {
             if (nb::isinstance<Device>(other)) return *nb::inst_ptr<Device>(other) == d;
             if (nb::isinstance<nb::str>(other)) {
               try {
                 return device(nb::cast<std::string>(other)) == d;
               } catch (const Error&) {
                 return false;
               }
             }
             return false;
           })
      .def("__hash__", [](const Device& d) { return nb::hash(nb::str(d.name().c_str())); })
      .def("__enter__",
           [](const Device& d) {
             device_stack().push_back(get_default_device());
             set_default_device(d);
             return d;
           })
      .def("__exit__", [](const Device&, nb::args) {
        if (device_stack().empty()) return;
        set_default_device(device_stack().back());
        device_stack().pop_back();
      });

  m.def(
      "device",
      [](nb::handle h) {
        if (nb::isinstance<Device>(h)) return *nb::inst_ptr<Device>(h);
        return device(nb::cast<std::string>(h));
      },
      nb::arg("name"), nb::sig("def device(name: str | Device) -> Device"),
      "The device named 'cpu', 'opencl', 'cuda:1', 'cuda:local'...; also a context manager: "
      "`with tack.device('cpu'):` makes it the default device inside. DeviceError when its "
      "backend is unavailable, with the reason.");
  m.def("devices", &devices, "Every device of every available backend.");
  m.def("local_rank", &local_rank,
        "This process's rank on its node under a launcher (mpirun, srun), else 0.");
  m.def("local_size", &local_size,
        "The number of processes on this node under a launcher (mpirun, srun), else 1.");
  m.def(
      "set_default_device",
      [](nb::handle h) {
        auto d = to_device(h);
        if (!d) throw TypeError("set_default_device needs a device or a name such as 'cpu'");
        set_default_device(*d);
      },
      nb::arg("device"), nb::sig("def set_default_device(device: str | Device) -> None"),
      "Makes `device` (a Device or a name such as 'cpu') the one new arrays and kernel calls "
      "without arrays use.");
  m.def("get_default_device", &get_default_device,
        "The device new arrays and calls use unless told otherwise.");
  m.def(
      "get_backend",
      [](nb::handle h) {
        auto d = to_device(h);
        return &(d ? d->backend() : get_backend());
      },
      nb::arg("device") = nb::none(), nb::rv_policy::reference,
      nb::sig("def get_backend(device: str | Device | None = None) -> Backend"),
      "The declared capabilities of `device`'s backend (default: the default device's).");
  m.def(
      "backend_status",
      [] {
        nb::list out;
        for (const BackendStatus& s : backend_status())
          out.append(nb::make_tuple(s.name, s.available, s.reason));
        return out;
      },
      nb::sig("def backend_status() -> list[tuple[str, bool, str]]"),
      "Every backend as (name, available, reason when it is not).");

  // ---- controls ----
  m.def(
      "version", [] { return std::string(version()); }, "Tack's version.");
  m.def("set_debug", &set_debug, nb::arg("on") = true,
        "Debug mode: variants compiled from now on check every array index, and a violation "
        "raises IndexError naming the kernel, array, index, shape and line (TACK_DEBUG=1).");
  m.def("set_log_level", &set_log_level, nb::arg("level"),
        "Level 1 or more: one line on stderr per compile, disk-cache hit, disk-cache miss (with "
        "its reason) and launch, with timings; 0 turns the log off. TACK_LOG=1 sets it at "
        "start-up.");
  m.def("log_level", &log_level, "The level set_log_level or TACK_LOG set (0: off).");
  m.def("debug", &debug, "Whether debug mode is on.");
  m.def(
      "sync",
      [] {
        nb::gil_scoped_release release;
        sync();
      },
      "Waits for queued work on every device; raises the first error it produced.");
  // One list of the fields, so that the attributes, _asdict and repr cannot disagree.
  static constexpr std::pair<const char*, uint64_t CacheStats::*> kCacheStatsFields[] = {
      {"compiles", &CacheStats::compiles},
      {"memory_hits", &CacheStats::memory_hits},
      {"disk_hits", &CacheStats::disk_hits},
      {"disk_misses", &CacheStats::disk_misses},
      {"disk_writes", &CacheStats::disk_writes},
      {"disk_corrupt", &CacheStats::disk_corrupt},
      {"disk_write_failures", &CacheStats::disk_write_failures},
      {"disk_refused", &CacheStats::disk_refused},
      {"disk_evictions", &CacheStats::disk_evictions},
      {"disk_lock_waits", &CacheStats::disk_lock_waits},
      {"disk_lock_timeouts", &CacheStats::disk_lock_timeouts},
      {"front_end_runs", &CacheStats::front_end_runs},
      {"front_end_records", &CacheStats::front_end_records},
  };
  auto cache_stats_class = nb::class_<CacheStats>(
      m, "CacheStats", "This process's counters of compilation and cache use.");
  for (const auto& [name, field] : kCacheStatsFields) cache_stats_class.def_ro(name, field);
  cache_stats_class
      .def("_asdict",
           [](const CacheStats& s) {
             nb::dict d;
             for (const auto& [name, field] : kCacheStatsFields) d[name] = s.*field;
             return d;
           })
      .def("__repr__", [](const CacheStats& s) {
        std::string out = "CacheStats(";
        for (const auto& [name, field] : kCacheStatsFields)
          out += (out.size() > 11 ? ", " : "") + std::string(name) + "=" + std::to_string(s.*field);
        return out + ")";
      });
  m.def("cache_stats", &cache_stats, "This process's counters of compiles and cache use.");
  m.def("cache_dir", &cache_dir,
        "The disk cache's directory (TACK_CACHE_DIR, else the user's cache directory).");
  m.def("cache_enabled", &cache_enabled,
        "Whether the disk cache is used (cache_disabled_reason() says why not).");
  m.def("cache_disabled_reason", &cache_disabled_reason,
        "Why the disk cache is off, or an empty string.");
  m.def(
      "clear_cache",
      [] {
        nb::gil_scoped_release release;
        return clear_cache();
      },
      "Removes every entry of the disk cache and forgets compiled variants; returns the number "
      "of entries removed.");
  // The `tack` tool itself (src/tools), for the console script and `python -m tack`.
  m.def(
      "_cli",
      [](const std::vector<std::string>& args) {
        nb::gil_scoped_release release;
        return tools::run_cli(args);
      },
      nb::arg("args"));
}

}  // namespace tack::python

NB_MODULE(_tack, m) {
  m.doc() = "Tack's C++ core, as the tack package uses it. Import tack, not this module.";
  // The dtype objects and the kernel builder live as long as the process, on purpose.
  nanobind::set_leak_warnings(false);
  tack::python::bind_module(m);
  tack::python::bind_array(m);
  tack::python::bind_kernel(m);
  tack::python::bind_object(m);
  tack::python::bind_algorithms(m);
}
