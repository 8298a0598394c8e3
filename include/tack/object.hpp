// Objects of device classes: a class that a kernels file declares with @tack.data_oriented (or
// that a host language describes), and its instances, which kernels take as arguments.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tack/array.hpp"
#include "tack/kernel.hpp"
#include "tack/texture.hpp"

namespace tack {

namespace detail {
struct ClassState;
struct FunctionState;
}  // namespace detail

// A @tack.func of a module (Module::function), to store in an object's attribute: a kernel calls
// it like a method, obj.f(x), without the object.
class Function {
 public:
  Function() = default;
  explicit Function(std::shared_ptr<const detail::FunctionState> s) : state_(std::move(s)) {}
  const std::string& name() const;
  const std::shared_ptr<const detail::FunctionState>& state() const { return state_; }

 private:
  std::shared_ptr<const detail::FunctionState> state_;
};

// The value of one attribute of an object: an array or texture, a number (typed as a kernel
// argument is: an integer is i32 if it fits, else i64, else u64; a float f32, or f64 when an
// array of the call is f64), a tuple of numbers (a shape), another object, a function, or a value
// of a kind kernels cannot take, described ("a list"), which is a TypeError if a kernel reads it.
class Attribute {
 public:
  enum class Kind : uint8_t { Array, Int, UInt, Float, Bool, Object, Function, Unsupported, Tuple };
  Attribute(const Array& a) : kind_(Kind::Array), array_(a) {}  // NOLINT: implicit on purpose
  Attribute(const Texture& t)                                   // NOLINT
      : kind_(Kind::Array), array_(t.data()), texture_(true), texture_exact_(t.exact()) {}
  Attribute(bool b) : kind_(Kind::Bool), i_(b) {}  // NOLINT
  template <typename T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, bool>) Attribute(T v) {  // NOLINT
    if constexpr (std::is_unsigned_v<T>) {
      if (static_cast<uint64_t>(v) > static_cast<uint64_t>(INT64_MAX)) {
        kind_ = Kind::UInt;
        u_ = v;
        return;
      }
    }
    kind_ = Kind::Int;
    i_ = static_cast<int64_t>(v);
  }
  Attribute(float v) : kind_(Kind::Float), f_(v) {}                          // NOLINT
  Attribute(double v) : kind_(Kind::Float), f_(v) {}                         // NOLINT
  Attribute(const Object& o);                                                // NOLINT
  Attribute(Function f) : kind_(Kind::Function), function_(std::move(f)) {}  // NOLINT
  static Attribute unsupported(std::string what) {
    Attribute a(false);
    a.kind_ = Kind::Unsupported;
    a.what_ = std::move(what);
    return a;
  }
  // A tuple of numbers, read in a kernel one constant index at a time: shape[0]. A tuple that
  // holds anything else is unsupported.
  static Attribute tuple(std::vector<Attribute> elements);

  Kind kind() const { return kind_; }
  bool is_texture() const { return texture_; }
  bool is_exact_texture() const { return texture_exact_; }
  const Array& array() const { return array_; }
  int64_t int_value() const { return i_; }
  uint64_t uint_value() const { return u_; }
  double float_value() const { return f_; }
  const Object& object() const { return *object_; }
  const Function& function() const { return function_; }
  const std::string& what() const { return what_; }                     // Unsupported
  const std::vector<Attribute>& elements() const { return elements_; }  // Tuple

 private:
  Kind kind_ = Kind::Int;
  Array array_;
  bool texture_ = false;
  bool texture_exact_ = false;
  int64_t i_ = 0;
  uint64_t u_ = 0;
  double f_ = 0;
  std::shared_ptr<const Object> object_;
  Function function_;
  std::string what_;
  std::vector<Attribute> elements_;
};

// What a name of a class that a host language describes (Class::from_host) is, as a kernel calls
// it: a @tack.func method (with its object as self, or a static one without), a kernel, a host
// function, or nothing (not a function of the class).
struct ExternalMethod {
  enum class Kind : uint8_t { None, Method, Static, Kernel, Host };
  Kind kind = Kind::None;
  // Method and Static: the definition (decorators included, indented or not), its file and
  // first line, and what the free names of its body refer to.
  std::string source, filename;
  int first_line = 1;
  NameResolver resolve;
};
using MethodResolver = std::function<ExternalMethod(const std::string& name)>;

// A device class: its name, methods and __tack_iterate__, and the class-level constants its
// kernels file declares.
class Class {
 public:
  Class() = default;
  explicit Class(std::shared_ptr<const detail::ClassState> s) : state_(std::move(s)) {}
  // A class the host language defines (Python's @tack.data_oriented classes): `methods` says
  // what each name a kernel calls is, once per name. Its class-level constants come with each
  // object (Object's `constants`), read from the live class.
  static Class from_host(std::string name, std::vector<std::string> iterate,
                         MethodResolver methods);
  const std::string& name() const;
  const std::shared_ptr<const detail::ClassState>& state() const { return state_; }

 private:
  std::shared_ptr<const detail::ClassState> state_;
};

// An instance of a device class: its attributes by name. A kernel takes it as an argument; its
// arrays and numbers become the kernel's arguments, the class's constants are compiled in.
class Object {
 public:
  using Attributes = std::vector<std::pair<std::string, Attribute>>;
  using Constants = std::vector<std::pair<std::string, ExternalName>>;
  Object() = default;
  // `attributes` are the instance's; `constants` are class-level numbers a host language reads
  // from its class (each an ExternalName of kind Constant), over those of the class's kernels
  // file. An attribute named twice is a TypeError.
  Object(Class cls, Attributes attributes, Constants constants = {});

  const Class& device_class() const { return class_; }
  const Attributes& attributes() const { return attributes_; }
  const Constants& constants() const { return constants_; }

 private:
  Class class_;
  Attributes attributes_;
  Constants constants_;
};

inline Attribute::Attribute(const Object& o)
    : kind_(Kind::Object), object_(std::make_shared<const Object>(o)) {}

inline Attribute Attribute::tuple(std::vector<Attribute> elements) {
  for (const Attribute& e : elements)
    if (e.kind() != Kind::Int && e.kind() != Kind::UInt && e.kind() != Kind::Float &&
        e.kind() != Kind::Bool)
      return unsupported("a tuple that holds other things than numbers");
  Attribute a(false);
  a.kind_ = Kind::Tuple;
  a.elements_ = std::move(elements);
  return a;
}

}  // namespace tack
