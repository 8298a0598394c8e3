#include "runtime/arguments.hpp"

#include <fmt/format.h>

#include <cstring>
#include <map>

#include "runtime/module_state.hpp"
#include "tack/error.hpp"
#include "tack/object.hpp"
#include "tack/runtime.hpp"

namespace tack {

Arg::Arg(const Attribute& a) {
  switch (a.kind()) {
    case Attribute::Kind::Array:
      kind_ = Kind::Array;
      array_ = &a.array();
      texture_ = a.is_texture();
      texture_exact_ = a.is_exact_texture();
      return;
    case Attribute::Kind::Int:
      i_ = a.int_value();
      return;
    case Attribute::Kind::UInt:
      kind_ = Kind::UInt;
      u_ = a.uint_value();
      return;
    case Attribute::Kind::Float:
      kind_ = Kind::Float;
      f_ = a.float_value();
      return;
    case Attribute::Kind::Bool:
      kind_ = Kind::Bool;
      i_ = a.int_value();
      return;
    case Attribute::Kind::Object:
      kind_ = Kind::Object;
      object_ = &a.object();
      return;
    case Attribute::Kind::Function:
    case Attribute::Kind::Unsupported:
    case Attribute::Kind::Tuple:
      break;
  }
  throw TypeError(
      "an attribute that holds a function, a tuple or an unsupported value is not an "
      "argument");
}

namespace detail {
namespace {

// Objects inside objects: deeper than this, an object (in a host language) contains itself.
constexpr int kMaxObjectDepth = 32;

// The first array of the call (its device is the call's), and whether any array is f64.
void scan_arrays(const Object& o, const Array*& first, bool& any_f64, int depth) {
  if (depth > kMaxObjectDepth)
    throw TypeError(
        fmt::format("objects are nested more than {} deep (an object of class '{}'); "
                    "does an object contain itself?",
                    kMaxObjectDepth, o.device_class().name()));
  for (const auto& [name, a] : o.attributes()) {
    if (a.kind() == Attribute::Kind::Object) scan_arrays(a.object(), first, any_f64, depth + 1);
    if (a.kind() != Attribute::Kind::Array) continue;
    if (!a.array().valid())
      throw TypeError(
          fmt::format("attribute '{}' of an object of class '{}' is an empty "
                      "tack::Array (never allocated)",
                      name, o.device_class().name()));
    any_f64 |= a.array().dtype() == DType::F64;
    if (!first) first = &a.array();
  }
}

template <typename T>
void append_bits(std::string& key, const T& v) {
  key.append(reinterpret_cast<const char*>(&v), sizeof v);
}

void append_type(std::string& key, const sema::ArgType& t) {
  key.push_back(static_cast<char>(t.kind));
  key.push_back(static_cast<char>(t.dtype));
  key.push_back(static_cast<char>(t.rank));
  key.push_back(static_cast<char>(t.texture ? (t.exact ? 'e' : 't') : t.lanes));
}

void append_constant(std::string& key, const lang::Constant& c) {
  key.push_back(static_cast<char>(c.is_float | c.is_bool << 1 | c.dtype.has_value() << 2));
  key.push_back(static_cast<char>(c.dtype.value_or(DType::Bool)));
  append_bits(key, c.int_value);
  append_bits(key, c.uint_value);
  append_bits(key, c.float_value);
  key.push_back(static_cast<char>(c.components.size()));
  for (const lang::Constant& part : c.components) append_constant(key, part);
}

// The type of an object, its values appended to `leaves` in sema::leaves' order (attributes by
// name, depth first), and its part of the key: the class, then each attribute's name and kind,
// a value's type, a constant's value, a function's identity. Instance attributes hide the
// class-level ones of a host, which hide those of the class's kernels file.
sema::ArgType object_type(const Object& o, bool any_f64, std::vector<Arg>& leaves,
                          std::string& key) {
  using A = sema::ObjectType::Attribute;
  auto t = std::make_shared<sema::ObjectType>();
  t->cls = o.device_class().state()->cls;
  const lang::DeviceClass& cls = *t->cls;
  struct Source {
    const Attribute* instance = nullptr;
    const ExternalName* host_constant = nullptr;
    const lang::Constant* file_constant = nullptr;
    const std::string* file_other = nullptr;
  };
  std::map<std::string, Source> names;
  for (const auto& [name, c] : cls.constants()) names[name].file_constant = &c;
  for (const auto& [name, what] : cls.other_attributes()) names[name].file_other = &what;
  for (const auto& [name, c] : o.constants()) names[name] = {nullptr, &c};
  for (const auto& [name, a] : o.attributes()) names[name] = {&a};

  key.push_back('O');
  append_bits(key, t->cls.get());
  t->attributes.reserve(names.size());
  for (const auto& [name, source] : names) {
    A attr;
    attr.name = name;
    if (source.host_constant) {
      attr.kind = A::Kind::Constant;
      attr.constant = to_constant(*source.host_constant, name);
    } else if (source.file_constant) {
      attr.kind = A::Kind::Constant;
      attr.constant = *source.file_constant;
    } else if (source.file_other) {
      attr.kind = A::Kind::Unsupported;
      attr.what = *source.file_other;
    } else {
      const Attribute& a = *source.instance;
      switch (a.kind()) {
        case Attribute::Kind::Function:
          attr.kind = A::Kind::Function;
          if (!a.function().state())
            throw TypeError(
                fmt::format("attribute '{}' of an object of class '{}' is an empty "
                            "tack::Function",
                            name, cls.name()));
          attr.function = {a.function().state()->module, a.function().state()->def};
          break;
        case Attribute::Kind::Unsupported:
          attr.kind = A::Kind::Unsupported;
          attr.what = a.what();
          break;
        case Attribute::Kind::Tuple:
          attr.kind = A::Kind::Tuple;
          for (const Attribute& e : a.elements()) {
            leaves.emplace_back(e);
            attr.elements.push_back(arg_type(leaves.back(), any_f64));
          }
          break;
        case Attribute::Kind::Object:
          key.append(name).push_back('\0');
          attr.type = object_type(a.object(), any_f64, leaves, key);
          t->attributes.push_back(std::move(attr));
          continue;
        default:
          leaves.emplace_back(a);
          attr.type = arg_type(leaves.back(), any_f64);
          break;
      }
    }
    key.append(name).push_back('\0');
    key.push_back(static_cast<char>(attr.kind));
    switch (attr.kind) {
      case A::Kind::Value:
        append_type(key, attr.type);
        break;
      case A::Kind::Constant:
        append_constant(key, attr.constant);
        break;
      case A::Kind::Function:
        append_bits(key, attr.function.def);
        break;
      case A::Kind::Unsupported:
        key.append(attr.what).push_back('\0');
        break;
      case A::Kind::Tuple:
        key.push_back(static_cast<char>(attr.elements.size()));
        for (const sema::ArgType& e : attr.elements) append_type(key, e);
        break;
    }
    t->attributes.push_back(std::move(attr));
  }
  key.push_back('o');
  return sema::ArgType::of_object(std::move(t));
}

}  // namespace

sema::ArgType arg_type(const Arg& a, bool any_f64) {
  switch (a.kind()) {
    case Arg::Kind::Array:
      return a.is_texture() ? sema::ArgType::texture_of(a.array().ndim(), a.is_exact_texture())
                            : sema::ArgType::array(a.array().dtype(), a.array().ndim(),
                                                   sema::ArgType::lanes_of(a.array().shape()));
    case Arg::Kind::Bool:
      return sema::ArgType::scalar(DType::Bool);
    case Arg::Kind::UInt:
      return sema::ArgType::scalar(DType::U64);
    case Arg::Kind::Float:
      return sema::ArgType::scalar(any_f64 ? DType::F64 : DType::F32);
    case Arg::Kind::Int: {
      int64_t v = a.int_value();
      return sema::ArgType::scalar(v >= INT32_MIN && v <= INT32_MAX ? DType::I32 : DType::I64);
    }
    case Arg::Kind::Object:
      break;
  }
  throw TypeError("an object's type is made by classify");
}

void classify(std::span<const Arg> args, CallTypes& c) {
  c.types.reserve(args.size());
  bool any_f64 = false, objects = false;
  const Array* first_array = nullptr;
  for (const Arg& a : args) {
    if (a.kind() == Arg::Kind::Object) {
      objects = true;
      scan_arrays(a.object(), first_array, any_f64, 1);
    }
    if (a.kind() != Arg::Kind::Array) continue;
    if (!a.array().valid())
      throw TypeError("an argument is an empty tack::Array (never allocated)");
    any_f64 |= a.array().dtype() == DType::F64;
    if (!first_array) first_array = &a.array();
  }
  c.device = first_array ? first_array->device() : get_default_device();
  c.key.reserve(8 + 4 * args.size());
  c.key.push_back(static_cast<char>(c.device.index()));
  Backend* backend = c.device.impl();
  append_bits(c.key, backend);
  c.key.push_back(debug() ? 'd' : 'r');
  if (objects) c.owned_leaves.reserve(args.size() * 2);
  for (const Arg& a : args) {
    if (a.kind() == Arg::Kind::Object) {
      c.types.push_back(object_type(a.object(), any_f64, c.owned_leaves, c.key));
      continue;
    }
    c.types.push_back(arg_type(a, any_f64));
    append_type(c.key, c.types.back());
    if (objects) c.owned_leaves.push_back(a);
  }
  c.leaves = objects ? std::span<const Arg>(c.owned_leaves) : args;
}

}  // namespace detail
}  // namespace tack
