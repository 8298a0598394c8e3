// Decorated kernels: tack.Kernel wraps a Python function. At its first call the function's source
// text, file, first line and a resolver for its free names become the kernel's module source
// (runtime/module_source.hpp), parsed only where no front-end record serves; every call converts
// its arguments here, in C++, and runs tack::Kernel::call without the GIL.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <deque>
#include <memory>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#include "ext.hpp"
#include "lang/load.hpp"
#include "runtime/cache_file.hpp"
#include "runtime/module_state.hpp"

namespace tack::python {
namespace {

// The Python function that turns a decorated function into (source, filename, first_line,
// resolver): tack._kernel._build, registered at import.
nb::object& builder() {
  static nb::object* b = new nb::object();  // leaked: outlives the interpreter's teardown
  return *b;
}

// The text of a kernels file where Python would read the same text from it: plain UTF-8, with no
// byte-order mark, no encoding declaration (on its first two lines) and no carriage return (which
// Python reads as a line break). Otherwise, or where it cannot be read, nullopt: Python reads it.
// `*st` is the status of the file read.
std::optional<std::string> plain_file_text(const char* path, struct stat* st) {
  // Not blocking on a FIFO, which is no kernels file.
  cache_file::Fd fd(::open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0 || ::fstat(fd.get(), st) != 0 || !S_ISREG(st->st_mode)) return std::nullopt;
  // A byte more than its size: a file that grew while it was read is left to Python.
  const auto size = static_cast<size_t>(st->st_size);
  std::optional<std::string> text = cache_file::read_at(fd.get(), 0, size + 1);
  if (!text || text->size() != size || text->starts_with("\xef\xbb\xbf") ||
      text->find('\r') != std::string::npos)
    return std::nullopt;
  const size_t second_line = text->find('\n');
  const size_t third_line =
      second_line == std::string::npos ? second_line : text->find('\n', second_line + 1);
  if (std::string_view(*text).substr(0, third_line).find("coding") != std::string_view::npos)
    return std::nullopt;
  // ASCII is UTF-8; other text is checked by Python's decoder (which would build a str of it).
  if (std::all_of(text->begin(), text->end(), [](char c) { return (c & 0x80) == 0; })) return text;
  PyObject* decoded =
      PyUnicode_DecodeUTF8(text->data(), static_cast<Py_ssize_t>(text->size()), "strict");
  if (!decoded) {
    PyErr_Clear();
    return std::nullopt;
  }
  Py_DECREF(decoded);
  return text;
}

// The text of the definition starting at `first_line` of a file's text, or nullopt: what
// inspect.getsourcelines finds, without Python's tokenizer (whose first use costs milliseconds).
std::optional<std::string> definition_at(std::string_view text, int first_line) {
  if (auto d = lang::statement_at(text, first_line)) return std::string(*d);
  return std::nullopt;
}

// A plain kernels file as read before, kept for its other kernels, whose first calls would read
// and search it again (a seventh of such a call). It serves while the file's status is the one it
// was read with; only a file unchanged for more than 2 s before the read is kept, since a change
// within the file system's timestamp granularity (2 s on FAT) after the read could leave its size
// and times as they were (git's index keeps its "racy" entries out the same way).
struct KeptFile {
  struct stat status {};
  std::string text;
  std::unordered_map<int, std::optional<std::string>> definitions;  // by first line

  bool describes(const struct stat& st) const {
    return st.st_dev == status.st_dev && st.st_ino == status.st_ino &&
           st.st_size == status.st_size && same(st.st_mtim, status.st_mtim) &&
           same(st.st_ctim, status.st_ctim);
  }
  static bool same(const timespec& a, const timespec& b) {
    return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
  }
  // Whether a file of this status may be kept: its times are more than the coarsest granularity
  // in the past, so that any later change gives it other times.
  static bool settled(const struct stat& st) {
    constexpr time_t kGranularity = 2;  // seconds: FAT's
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    return std::max(st.st_mtim.tv_sec, st.st_ctim.tv_sec) + kGranularity < now.tv_sec;
  }
};

// By path; used with the GIL held.
std::unordered_map<std::string, KeptFile>& kept_files() {
  static auto* files = new std::unordered_map<std::string, KeptFile>();  // leaked, as builder()
  return *files;
}

// The definition starting at `first_line` of the file, read here where it is plain UTF-8
// (plain_file_text), else nullopt: a fifth of a warm first call in Python went to opening, reading
// and decoding the file there.
std::optional<std::string> definition_in_file(PyObject* filename, int first_line) {
  PyObject* encoded = PyUnicode_EncodeFSDefault(filename);
  if (!encoded) {
    PyErr_Clear();
    return std::nullopt;
  }
  const std::string path = PyBytes_AS_STRING(encoded);
  Py_DECREF(encoded);
  struct stat st {};
  auto kept = kept_files().find(path);
  if (kept != kept_files().end() &&
      (::stat(path.c_str(), &st) != 0 || !kept->second.describes(st))) {
    kept_files().erase(kept);
    kept = kept_files().end();
  }
  if (kept == kept_files().end()) {
    std::optional<std::string> text = plain_file_text(path.c_str(), &st);
    if (!text) return std::nullopt;
    if (!KeptFile::settled(st)) return definition_at(*text, first_line);
    kept = kept_files().insert_or_assign(path, KeptFile{st, std::move(*text), {}}).first;
  }
  auto [definition, added] = kept->second.definitions.try_emplace(first_line);
  if (added) definition->second = definition_at(kept->second.text, first_line);
  return definition->second;
}

// A function's definition as read from its file here, the first thing tack._kernel._source_of
// tries (and ensure(), without running Python code). nullopt where Python must read the file
// (linecache holds it, or it is not plain UTF-8) or it has no file.
struct Definition {
  std::string source, filename;
  int first_line = 1;
};
std::optional<Definition> definition_here(const nb::object& fn) {
  nb::object code = nb::getattr(fn, "__code__", nb::none());
  if (code.is_none()) return std::nullopt;
  nb::object filename = code.attr("co_filename");
  if (!PyUnicode_Check(filename.ptr())) return std::nullopt;
  static PyObject* linecache = nb::module_::import_("linecache").release().ptr();  // kept
  nb::object cache = nb::borrow(linecache).attr("cache");
  const int cached = PySequence_Contains(cache.ptr(), filename.ptr());
  if (cached < 0) throw nb::python_error();
  if (cached) return std::nullopt;
  Definition d;
  d.first_line = nb::cast<int>(code.attr("co_firstlineno"));
  std::optional<std::string> source = definition_in_file(filename.ptr(), d.first_line);
  if (!source) return std::nullopt;
  d.source = std::move(*source);
  d.filename = nb::cast<std::string>(filename);
  return d;
}

struct KernelObject {
  nb::object fn;
  std::string name;
  std::optional<Kernel> kernel;
  explicit KernelObject(nb::object f) : fn(std::move(f)) {
    name = nb::cast<std::string>(fn.attr("__name__"));
  }
};

}  // namespace

std::shared_ptr<nb::object> shared_object(nb::object o) {
  return std::shared_ptr<nb::object>(new nb::object(std::move(o)), [](nb::object* p) {
    if (!Py_IsInitialized()) return;
    nb::gil_scoped_acquire gil;
    delete p;
  });
}

NameResolver name_resolver(nb::object resolver) {
  // The names known to be bound to nothing (tack._kernel._make_resolver): a set the resolver
  // keeps up to date as it hands over functions. They are answered without calling into Python,
  // which costs microseconds a name at a first call (a kernel's locals, range, len...).
  nb::object unbound = nb::getattr(resolver, "unbound", nb::none());
  if (!PyAnySet_Check(unbound.ptr())) unbound = nb::none();
  // The core asks for names while it compiles, possibly on another thread and without the GIL.
  return [r = shared_object(std::move(resolver)),
          unbound = shared_object(std::move(unbound))](const std::string& name) -> ExternalName {
    nb::gil_scoped_acquire gil;
    try {
      if (!unbound->is_none()) {
        const int in = PySet_Contains(unbound->ptr(), nb::str(name.data(), name.size()).ptr());
        if (in < 0) throw nb::python_error();
        if (in == 1) return ExternalName{};
      }
      nb::object found = (*r)(name);
      return found.is_none() ? ExternalName{} : nb::cast<ExternalName>(found);
    } catch (const nb::python_error& e) {
      throw Error("looking up the name '" + name + "' failed: " + e.what());
    }
  };
}

namespace {

// Whether `value` is the tack module or tack.math, which a kernel's names mean as the module.
bool is_tack_module(PyObject* value) {
  static PyObject* tack = nullptr;  // kept: a module's identity outlives any kernel
  static PyObject* math = nullptr;
  if (!tack) {
    nb::module_ t = nb::module_::import_("tack");
    math = nb::object(t.attr("math")).release().ptr();
    tack = t.release().ptr();
  }
  return value == tack || value == math;
}

// What `name` means in a kernel's own scope where no Python code is needed to say it, as
// tack._kernel's resolver would answer: the tack module, which `@tack.kernel` names, and, given
// `unbound_is_unknown`, a name its globals do not bind (its locals, range, len...), which is
// nothing until the resolver has handed over a device function from another module. nullopt for
// anything else, a name of its closure and a kernel decorated inside a function (its enclosing
// scope): the resolver answers.
std::optional<ExternalName> answer_here(PyObject* fn, const std::string& name,
                                        bool unbound_is_unknown) {
  if (!PyFunction_Check(fn)) return std::nullopt;
  PyObject* globals = PyFunction_GetGlobals(fn);
  if (!PyDict_CheckExact(globals)) return std::nullopt;
  nb::object attributes = nb::getattr(fn, "__dict__");
  if (!PyDict_Check(attributes.ptr()) ||
      PyDict_GetItemString(attributes.ptr(), "__tack_scope__") != nullptr)
    return std::nullopt;
  nb::str key(name.data(), name.size());
  nb::object closure_names = nb::borrow(PyFunction_GetCode(fn)).attr("co_freevars");
  const int in_closure = PySequence_Contains(closure_names.ptr(), key.ptr());
  if (in_closure != 0) {
    if (in_closure < 0) throw nb::python_error();
    return std::nullopt;
  }
  PyObject* value = PyDict_GetItemWithError(globals, key.ptr());
  if (!value) {
    if (PyErr_Occurred()) throw nb::python_error();
    return unbound_is_unknown ? std::optional(ExternalName{}) : std::nullopt;
  }
  if (!is_tack_module(value)) return std::nullopt;
  ExternalName n;
  n.kind = ExternalName::Kind::TackModule;
  return n;
}

// The resolver of a kernel whose definition was read here: what answer_here says without Python
// code (all that a kernel served by its front-end record usually asks), the rest from
// tack._kernel's resolver, made when first needed (the builder's call was a tenth of the first
// call of a file's second kernel).
NameResolver kernel_resolver(nb::object fn) {
  struct State {
    std::shared_ptr<nb::object> fn;
    NameResolver python;  // tack._kernel's, once made; set and copied with the GIL held
  };
  auto state = std::make_shared<State>(State{shared_object(std::move(fn)), {}});
  return [state](const std::string& name) -> ExternalName {
    nb::gil_scoped_acquire gil;
    NameResolver python;
    try {
      if (std::optional<ExternalName> a = answer_here(state->fn->ptr(), name, !state->python))
        return *a;
      if (!state->python) {
        nb::tuple r = nb::cast<nb::tuple>(builder()(*state->fn, true));
        // The builder ran Python code, so another thread may have made one meanwhile.
        if (!state->python) state->python = name_resolver(nb::borrow(r[3]));
      }
      python = state->python;  // a copy: another thread's assignment cannot end it while it runs
    } catch (const nb::python_error& e) {
      throw Error("looking up the name '" + name + "' failed: " + e.what());
    }
    return python(name);
  };
}

const Kernel& ensure(KernelObject& k) {
  if (k.kernel) return *k.kernel;
  if (!builder().is_valid()) throw Error("tack._tack is used without the tack package");
  // Where the definition could not be read here, the builder reads it and makes the resolver;
  // otherwise the resolver is made here, and Python's only when first needed (kernel_resolver).
  std::optional<Definition> here = definition_here(k.fn);
  NameResolver resolve;
  if (here) {
    resolve = kernel_resolver(k.fn);
  } else {
    nb::tuple r = nb::cast<nb::tuple>(builder()(k.fn, false));
    here =
        Definition{nb::cast<std::string>(r[0]), nb::cast<std::string>(r[1]), nb::cast<int>(r[2])};
    resolve = name_resolver(nb::borrow(r[3]));
  }
  auto& [source, filename, first_line] = *here;
  // Parsed and resolved at the first call only where the disk cache holds no front-end record of
  // it (runtime/front_end_record.hpp), so its errors are raised there.
  Kernel built = detail::make_kernel(
      std::make_shared<const detail::ModuleSource>(
          detail::function_source(std::move(source), filename, first_line), std::move(resolve)),
      k.name, /*check_now=*/false);
  // Python code may have run above (the builder, attribute lookups), so another thread may have
  // built the kernel meanwhile and be calling it without the GIL: keep the first one. (Nothing
  // below releases the GIL.)
  if (!k.kernel) k.kernel = std::move(built);
  return *k.kernel;
}

// numpy.bool_, numpy.integer and numpy.floating, once NumPy is imported.
struct NumpyScalarTypes {
  PyObject* bool_ = nullptr;
  PyObject* integer = nullptr;
  PyObject* floating = nullptr;
};

const NumpyScalarTypes* numpy_scalar_types() {
  static NumpyScalarTypes* types = [] {
    PyObject* np = PyImport_ImportModule("numpy");
    if (!np) {
      PyErr_Clear();
      return static_cast<NumpyScalarTypes*>(nullptr);
    }
    auto* t = new NumpyScalarTypes;
    t->bool_ = PyObject_GetAttrString(np, "bool_");
    t->integer = PyObject_GetAttrString(np, "integer");
    t->floating = PyObject_GetAttrString(np, "floating");
    Py_DECREF(np);
    return t;
  }();
  return types;
}

// The arguments of one call, converted: a few on the stack, more on the heap.
class ArgList {
 public:
  explicit ArgList(size_t n) : n_(n) {
    if (n > kInline) heap_.reset(static_cast<Arg*>(::operator new(n * sizeof(Arg))));
  }
  Arg* slot(size_t i) { return (heap_ ? heap_.get() : reinterpret_cast<Arg*>(inline_)) + i; }
  std::span<const Arg> span() { return {slot(0), n_}; }
  // An array made for this call (a foreign array wrapped without a copy); stable address.
  const Array& keep(Array a) {
    if (temps_.capacity() < n_) temps_.reserve(n_);
    temps_.push_back(std::move(a));
    return temps_.back();
  }
  // An object converted for this call; stable address.
  const Object& keep(Object o) { return objects_.emplace_back(std::move(o)); }

 private:
  static constexpr size_t kInline = 16;
  struct Free {
    void operator()(Arg* p) const { ::operator delete(p); }
  };
  size_t n_;
  alignas(Arg) unsigned char inline_[kInline * sizeof(Arg)];
  std::unique_ptr<Arg, Free> heap_;
  std::vector<Array> temps_;
  std::deque<Object> objects_;
};
static_assert(std::is_trivially_destructible_v<Arg>);

[[noreturn]] void bad_argument(const KernelObject& k, size_t i, PyObject* o, const char* why) {
  throw TypeError(
      "kernel '" + k.name + "': argument " + std::to_string(i + 1) + " is " + why + " (" +
      Py_TYPE(o)->tp_name +
      "); a kernel takes tack arrays, NumPy or other DLPack arrays, numbers, and objects "
      "of @tack.data_oriented classes");
}

void convert_int(const KernelObject& k, size_t i, PyObject* o, Arg* slot) {
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (v == -1 && PyErr_Occurred()) throw nb::python_error();
  if (overflow == 0) {
    new (slot) Arg(static_cast<int64_t>(v));
    return;
  }
  if (overflow > 0) {
    unsigned long long u = PyLong_AsUnsignedLongLong(o);
    if (!(u == static_cast<unsigned long long>(-1) && PyErr_Occurred())) {
      new (slot) Arg(static_cast<uint64_t>(u));
      return;
    }
    PyErr_Clear();
  }
  bad_argument(k, i, o, "an integer outside the range of i64 and u64");
}

void convert(const KernelObject& k, size_t i, PyObject* o, ArgList& list) {
  Arg* slot = list.slot(i);
  PyTypeObject* tp = Py_TYPE(o);
  if (tp == g_array_type || PyType_IsSubtype(tp, g_array_type)) {
    new (slot) Arg(static_cast<const Array&>(*nb::inst_ptr<Array>(o)));
    return;
  }
  if (PyType_IsSubtype(tp, g_texture_type)) {
    new (slot) Arg(static_cast<const Texture&>(*nb::inst_ptr<Texture>(o)));
    return;
  }
  if (PyBool_Check(o)) {
    new (slot) Arg(o == Py_True);
    return;
  }
  if (PyLong_Check(o)) return convert_int(k, i, o, slot);
  if (PyFloat_Check(o)) {
    new (slot) Arg(PyFloat_AS_DOUBLE(o));
    return;
  }
  if (const NumpyScalarTypes* np = numpy_scalar_types()) {
    if (PyObject_IsInstance(o, np->bool_) == 1) {
      new (slot) Arg(PyObject_IsTrue(o) == 1);
      return;
    }
    if (PyObject_IsInstance(o, np->integer) == 1) {
      nb::object v = nb::steal(PyNumber_Index(o));
      if (!v.is_valid()) throw nb::python_error();
      return convert_int(k, i, v.ptr(), slot);
    }
    if (PyObject_IsInstance(o, np->floating) == 1) {
      double d = PyFloat_AsDouble(o);
      if (d == -1.0 && PyErr_Occurred()) throw nb::python_error();
      new (slot) Arg(d);
      return;
    }
  }
  if (is_device_object(o)) {
    new (slot) Arg(list.keep(to_object(o)));
    return;
  }
  // NumPy arrays and other DLPack producers: their memory, without a copy.
  if (auto a = wrap_foreign(nb::handle(o), false)) {
    new (slot) Arg(list.keep(std::move(*a)));
    return;
  }
  bad_argument(k, i, o, "neither an array, a number nor an object of a @tack.data_oriented class");
}

void convert_all(const KernelObject& k, PyObject* const* items, size_t n, ArgList& list) {
  for (size_t i = 0; i < n; ++i) convert(k, i, items[i], list);
}

PyObject* scalar_to_python(const Scalar& s) {
  if (!s.has_value) Py_RETURN_NONE;
  if (is_float(s.dtype)) return PyFloat_FromDouble(s.value);
  if (s.dtype == DType::Bool) return PyBool_FromLong(s.int_value != 0);
  if (s.dtype == DType::U64) return PyLong_FromUnsignedLongLong(static_cast<uint64_t>(s.int_value));
  return PyLong_FromLongLong(s.int_value);
}

// tp_call of tack.Kernel: the hot path, bypassing nanobind's dispatch.
PyObject* kernel_call(PyObject* self, PyObject* args, PyObject* kwargs) {
  try {
    KernelObject& k = *nb::inst_ptr<KernelObject>(self);
    if (kwargs && PyDict_GET_SIZE(kwargs) != 0)
      throw TypeError("kernel '" + k.name + "' takes its arguments by position only");
    const Kernel& kernel = ensure(k);
    size_t n = static_cast<size_t>(PyTuple_GET_SIZE(args));
    ArgList list(n);
    convert_all(k, &PyTuple_GET_ITEM(args, 0), n, list);
    Scalar result;
    {
      nb::gil_scoped_release release;
      result = kernel.call(list.span());
    }
    return scalar_to_python(result);
  } catch (...) {
    set_python_error();
    return nullptr;
  }
}

int kernel_traverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(Py_TYPE(self));
  if (!nb::inst_ready(self)) return 0;
  Py_VISIT(nb::inst_ptr<KernelObject>(self)->fn.ptr());
  return 0;
}

int kernel_clear(PyObject* self) {
  if (nb::inst_ready(self)) nb::inst_ptr<KernelObject>(self)->fn.reset();
  return 0;
}

// A kernel that is a method of a class: grid.step(0.1) calls it with the object first.
PyObject* kernel_descr_get(PyObject* self, PyObject* obj, PyObject* type) {
  if (!obj || obj == Py_None) return Py_NewRef(self);
  return PyMethod_New(self, obj);
}

PyType_Slot kernel_slots[] = {{Py_tp_call, reinterpret_cast<void*>(kernel_call)},
                              {Py_tp_descr_get, reinterpret_cast<void*>(kernel_descr_get)},
                              {Py_tp_traverse, reinterpret_cast<void*>(kernel_traverse)},
                              {Py_tp_clear, reinterpret_cast<void*>(kernel_clear)},
                              {0, nullptr}};

InspectMode inspect_mode(const std::string& mode) {
  if (mode == "ir") return InspectMode::IR;
  if (mode == "source") return InspectMode::Source;
  if (mode == "optimized") return InspectMode::Optimized;
  throw ValueError("inspect: mode is 'ir', 'source' or 'optimized', not '" + mode + "'");
}

}  // namespace

void bind_kernel(nb::module_& m) {
  nb::class_<ExternalName> ext(m, "ExternalName",
                               "What a free name in a decorated function refers to.");
  nb::enum_<ExternalName::Kind>(ext, "Kind")
      .value("Unknown", ExternalName::Kind::Unknown)
      .value("HostValue", ExternalName::Kind::HostValue)
      .value("Constant", ExternalName::Kind::Constant)
      .value("Function", ExternalName::Kind::Function)
      .value("TackModule", ExternalName::Kind::TackModule)
      .value("MathModule", ExternalName::Kind::MathModule)
      .value("TackMember", ExternalName::Kind::TackMember)
      .value("ForeignModule", ExternalName::Kind::ForeignModule);
  ext.def(nb::init<>())
      .def_rw("kind", &ExternalName::kind)
      .def_rw("is_float", &ExternalName::is_float)
      .def_rw("is_bool", &ExternalName::is_bool)
      .def_rw("is_big", &ExternalName::is_big)
      .def_rw("int_value", &ExternalName::int_value)
      .def_rw("uint_value", &ExternalName::uint_value)
      .def_rw("float_value", &ExternalName::float_value)
      .def_rw("dtype", &ExternalName::dtype)
      .def_rw("components", &ExternalName::components)
      .def_rw("source", &ExternalName::source)
      .def_rw("filename", &ExternalName::filename)
      .def_rw("first_line", &ExternalName::first_line)
      .def_rw("member", &ExternalName::member);

  m.def("_set_builder", [](nb::object b) { builder() = std::move(b); });
  m.def("_definition_at",
        [](const std::string& text, int first_line) { return definition_at(text, first_line); });
  // The same, read from the file here where it is plain UTF-8, else None.
  m.def("_definition_in_file", [](nb::str filename, int first_line) {
    return definition_in_file(filename.ptr(), first_line);
  });
  // A function's definition read from its file here unless linecache holds it, else None.
  m.def("_definition_here", [](nb::object fn) -> std::optional<std::string> {
    std::optional<Definition> d = definition_here(fn);
    return d ? std::optional<std::string>(std::move(d->source)) : std::nullopt;
  });

  nb::class_<VariantInfo>(m, "KernelVariant",
                          "One specialization of a kernel: its argument types, its device and "
                          "where its code came from.")
      .def_ro("arg_types", &VariantInfo::arg_types,
              "The argument types as `tack emit --args` writes them: 'f32,f32[],f32[]'.")
      .def_ro("device", &VariantInfo::device, "The device, e.g. 'cpu:0'.")
      .def_ro("origin", &VariantInfo::origin,
              "'compiled', 'disk cache', 'shared with another kernel object', or 'not loaded "
              "yet' (with ' (no-alias)' for the code that assumes no overlapping arrays).")
      .def("__repr__", [](const VariantInfo& v) {
        return "KernelVariant(arg_types='" + v.arg_types + "', device='" + v.device +
               "', origin='" + v.origin + "')";
      });

  nb::class_<KernelObject>(m, "Kernel", nb::type_slots(kernel_slots),
                           "A @tack.kernel: compiled at its first call for its argument types, "
                           "then cached in memory and on disk.")
      .def(nb::init<nb::object>(), nb::arg("fn"))
      .def_prop_ro("__wrapped__", [](const KernelObject& k) { return k.fn; })
      // Everything else a function has (__name__, __qualname__, __module__ of the function...).
      .def("__getattr__",
           [](const KernelObject& k, nb::handle name) -> nb::object {
             if (!k.fn.is_valid()) throw nb::attribute_error();
             PyObject* v = PyObject_GetAttr(k.fn.ptr(), name.ptr());
             if (!v) throw nb::python_error();
             return nb::steal(v);
           })
      .def_prop_ro("name", [](const KernelObject& k) { return k.name; })
      .def("__repr__",
           [](const KernelObject& k) {
             return "<tack.kernel " + nb::cast<std::string>(k.fn.attr("__qualname__")) + ">";
           })
      .def(
          "_inspect",
          [](KernelObject& k, nb::tuple args, const std::string& mode, const std::string& backend) {
            InspectMode im = inspect_mode(mode);
            const Kernel& kernel = ensure(k);
            size_t n = nb::len(args);
            ArgList list(n);
            convert_all(k, &PyTuple_GET_ITEM(args.ptr(), 0), n, list);
            nb::gil_scoped_release release;
            return kernel.inspect(list.span(), im, backend);
          },
          nb::arg("args"), nb::arg("mode"), nb::arg("backend") = "")
      .def_prop_ro(
          "variants",
          [](KernelObject& k) {
            nb::list out;
            if (!k.kernel) return out;  // never called: nothing specialized yet
            for (const VariantInfo& v : k.kernel->variants()) out.append(nb::cast(v));
            return out;
          },
          "The variants specialized so far (a list of tack.KernelVariant), one per argument "
          "types and device.");
}

}  // namespace tack::python
