// Modules of kernels given as source text, and calling kernels.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tack/array.hpp"
#include "tack/texture.hpp"

namespace tack {

namespace detail {
struct ModuleState;
struct KernelState;
}  // namespace detail

class Attribute;
class Class;
class Function;
class Object;  // tack/object.hpp

// One argument of a kernel call: an array, a texture (passed as its texel array, marked), a
// scalar or an object of a device class. A C++ integer is i32 if it fits, else i64, else u64; a
// float is f32, or f64 when any array argument (or array of an object) is f64; a bool is a bool.
class Arg {
 public:
  enum class Kind : uint8_t { Array, Int, UInt, Float, Bool, Object };
  Arg(const Array& a) : kind_(Kind::Array), array_(&a) {}
  Arg(Array& a) : kind_(Kind::Array), array_(&a) {}
  Arg(const Texture& t)
      : kind_(Kind::Array), array_(&t.data()), texture_(true), texture_exact_(t.exact()) {}
  Arg(Texture& t)
      : kind_(Kind::Array), array_(&t.data()), texture_(true), texture_exact_(t.exact()) {}
  Arg(const Object& o) : kind_(Kind::Object), object_(&o) {}
  Arg(Object& o) : kind_(Kind::Object), object_(&o) {}
  explicit Arg(const Attribute& a);  // an array, number or object of an object's attributes
  Arg(bool b) : kind_(Kind::Bool), i_(b) {}
  template <typename T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, bool>) Arg(T v) {
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
  Arg(float v) : kind_(Kind::Float), f_(v) {}
  Arg(double v) : kind_(Kind::Float), f_(v) {}

  Kind kind() const { return kind_; }
  bool is_texture() const { return texture_; }
  bool is_exact_texture() const { return texture_exact_; }  // made with Interp::LinearExact
  const Array& array() const { return *array_; }
  const Object& object() const { return *object_; }
  int64_t int_value() const { return i_; }
  uint64_t uint_value() const { return u_; }
  double float_value() const { return f_; }

 private:
  Kind kind_ = Kind::Int;
  const Array* array_ = nullptr;
  const Object* object_ = nullptr;
  bool texture_ = false;
  bool texture_exact_ = false;
  int64_t i_ = 0;
  uint64_t u_ = 0;
  double f_ = 0;
};

// A host number returned by a kernel that ends with `return expr`.
struct Scalar {
  bool has_value = false;
  DType dtype = DType::F32;
  double value = 0;       // floats and bools
  int64_t int_value = 0;  // integers (bits of u64 for u64)
  template <typename T>
  T as() const {
    if (is_float(dtype)) return static_cast<T>(value);
    if (dtype == DType::Bool) return static_cast<T>(value != 0);
    if (dtype == DType::U64) return static_cast<T>(static_cast<uint64_t>(int_value));
    return static_cast<T>(int_value);
  }
};

enum class InspectMode { IR, Source, Optimized };

// One compiled specialization of a kernel (Kernel::variants).
struct VariantInfo {
  std::string arg_types;  // "f32, f32[1d], f32[1d]"
  std::string device;     // "cpu:0"
  std::string origin;     // "compiled", "disk cache", ..., or "not loaded yet"
};

class Kernel {
 public:
  Kernel() = default;
  const std::string& name() const;

  template <typename... Args>
  Scalar operator()(Args&&... args) const {
    const Arg list[] = {Arg(args)...};
    return call(std::span<const Arg>(list, sizeof...(Args)));
  }
  Scalar call(std::span<const Arg> args) const;

  // The typed IR, the generated source (LLVM IR on the CPU) or the optimized code for these
  // arguments' types, on the device the call would run on.
  std::string inspect(std::span<const Arg> args, InspectMode mode) const;
  // The same for `backend` ("cuda", "hip", "level_zero", "metal", "opencl"): the IR or the
  // generated source, with no device of that backend needed (as `tack emit --backend` prints it).
  // An empty `backend`, or the arguments' own, is the overload above.
  std::string inspect(std::span<const Arg> args, InspectMode mode,
                      const std::string& backend) const;
  // The variants specialized so far (for each argument types and device), and where their code
  // came from.
  std::vector<VariantInfo> variants() const;

  explicit Kernel(std::shared_ptr<detail::KernelState> s) : state_(std::move(s)) {}

 private:
  std::shared_ptr<detail::KernelState> state_;
};

template <typename... Args>
std::string inspect(const Kernel& k, InspectMode mode, Args&&... args) {
  const Arg list[] = {Arg(args)...};
  return k.inspect(std::span<const Arg>(list, sizeof...(Args)), mode);
}

// A kernels file: the same text Python can import. Parsed and resolved when loaded, so syntax
// errors surface here; each kernel is compiled at its first call for its argument types.
// What a free name in a function given on its own (Module::from_function) refers to: the host
// language's answer, for Python the function's globals. Anything else a kernel cannot use.
struct ExternalName {
  enum class Kind : uint8_t {
    Unknown,        // not bound: a builtin (len, sqrt...) or an error
    HostValue,      // bound to a value that is not a tack.constant: a kernel may not capture it
    Constant,       // tack.constant(value, dtype)
    Function,       // another @tack.func or @tack.kernel: `source` holds its definition
    TackModule,     // the tack module
    MathModule,     // the math module
    TackMember,     // a member of tack or math bound to a name (`from tack import f32`): `member`
    ForeignModule,  // another module (numpy...): `member` is its name
  };
  Kind kind = Kind::Unknown;
  // Constant: an integer (int_value, or uint_value above INT64_MAX), a float or a bool.
  bool is_float = false, is_bool = false, is_big = false;
  int64_t int_value = 0;
  uint64_t uint_value = 0;
  double float_value = 0;
  std::string dtype;  // empty: weak, like a literal
  // A vector constant (a tuple of 2 to 4 numbers): one Constant entry per component.
  std::vector<ExternalName> components;
  // Function: its source (possibly indented), the file and the line where it starts.
  std::string source, filename;
  int first_line = 1;
  std::string member;
};
using NameResolver = std::function<ExternalName(const std::string& name)>;

class Module {
 public:
  static Module from_source(const std::string& source, const std::string& filename = "<string>");
  static Module from_file(const std::string& path);
  // One function's definition (decorators included, indented or not) from a larger file, whose
  // free names `resolve` answers. Errors name `filename` and lines counted from `first_line`, so
  // they point into the user's own file.
  static Module from_function(const std::string& source, const std::string& filename,
                              int first_line, NameResolver resolve);

  // A kernel: a function, or a kernel method of a device class as "Class.method" (its first
  // argument is then the object).
  Kernel kernel(const std::string& name) const;
  std::vector<std::string> kernel_names() const;

  // Device classes (@tack.data_oriented, tack/object.hpp): the class `name`, and an object of it
  // with these instance attributes (its class-level constants are those the file declares):
  //   tack::Object cells = m.object("CellSetExplicit", {{"connectivity", conn}, {"n", 4}});
  Class device_class(const std::string& name) const;
  Object object(const std::string& cls,
                std::vector<std::pair<std::string, Attribute>> attributes) const;
  std::vector<std::string> class_names() const;
  // A @tack.func of the file, to store in an object's attribute.
  Function function(const std::string& name) const;

 private:
  std::shared_ptr<detail::ModuleState> state_;
};

}  // namespace tack
