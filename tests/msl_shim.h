// A C++17 stand-in for the parts of the Metal Shading Language that Tack's generated code uses,
// so that `clang++ -fsyntax-only -std=c++17 -include msl_shim.h -x c++ -Wno-unknown-attributes`
// can check generated MSL where Apple's compiler does not exist. It catches syntax and type
// errors; the address-space words are erased, so address-space errors go unseen.
#pragma once

#include <atomic>
#include <cmath>
#include <cstring>

typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;  // 64-bit, as in Metal
static_assert(sizeof(long) == 8, "Metal's long is 64-bit");

// The vectors that texture coordinates are passed as.
struct float2 {
  float x, y;
  float2(float x_, float y_) : x(x_), y(y_) {}
};
struct float3 {
  float x, y, z;
  float3(float x_, float y_, float z_) : x(x_), y(y_), z(z_) {}
};

namespace metal {
using std::acos;
using std::asin;
using std::atan;
using std::atan2;
using std::ceil;
using std::copysign;
using std::cos;
using std::cosh;
using std::exp;
using std::exp2;
using std::fabs;
using std::floor;
using std::fma;
using std::fmod;
using std::isinf;
using std::isnan;
using std::log;
using std::log10;
using std::log2;
using std::pow;
using std::rint;
using std::signbit;
using std::sin;
using std::sinh;
using std::sqrt;
using std::tan;
using std::tanh;
using std::trunc;

using std::fmax;
using std::fmin;

using atomic_int = std::atomic<int>;
using atomic_uint = std::atomic<unsigned int>;
using std::memory_order;
using std::memory_order_relaxed;

template <typename T>
inline bool atomic_compare_exchange_weak_explicit(std::atomic<T>* object, T* expected, T desired,
                                                  memory_order success, memory_order failure) {
  return std::atomic_compare_exchange_weak_explicit(object, expected, desired, success, failure);
}
template <typename T>
inline T atomic_fetch_add_explicit(std::atomic<T>* o, T v, memory_order m) {
  return std::atomic_fetch_add_explicit(o, v, m);
}
template <typename T>
inline T atomic_fetch_sub_explicit(std::atomic<T>* o, T v, memory_order m) {
  return std::atomic_fetch_sub_explicit(o, v, m);
}
template <typename T>
inline T atomic_fetch_and_explicit(std::atomic<T>* o, T v, memory_order m) {
  return std::atomic_fetch_and_explicit(o, v, m);
}
template <typename T>
inline T atomic_fetch_or_explicit(std::atomic<T>* o, T v, memory_order m) {
  return std::atomic_fetch_or_explicit(o, v, m);
}
template <typename T>
inline T atomic_fetch_xor_explicit(std::atomic<T>* o, T v, memory_order m) {
  return std::atomic_fetch_xor_explicit(o, v, m);
}
template <typename T>
inline T atomic_fetch_min_explicit(std::atomic<T>* o, T v, memory_order) {
  return o->load() < v ? o->load() : v;  // syntax and types only
}
template <typename T>
inline T atomic_fetch_max_explicit(std::atomic<T>* o, T v, memory_order) {
  return o->load() > v ? o->load() : v;
}
template <typename T>
inline T atomic_exchange_explicit(std::atomic<T>* o, T v, memory_order m) {
  return std::atomic_exchange_explicit(o, v, m);
}

enum class mem_flags { mem_none = 0, mem_device = 1, mem_threadgroup = 2 };
inline mem_flags operator|(mem_flags a, mem_flags b) {
  return static_cast<mem_flags>(static_cast<int>(a) | static_cast<int>(b));
}
inline void threadgroup_barrier(mem_flags) {}

// Textures and samplers: the constructors and calls the generated code makes, with their types.
enum class coord { normalized, pixel };
enum class address { clamp_to_edge, repeat };
enum class filter { nearest, linear };
struct sampler {
  constexpr sampler(coord, address, filter) {}
};
template <typename T>
struct vec4 {
  T x, y, z, w;
};
template <typename T>
struct texture2d {
  vec4<T> sample(sampler, float2) const { return {}; }
};
template <typename T>
struct texture3d {
  vec4<T> sample(sampler, float3) const { return {}; }
};
}  // namespace metal

template <typename To, typename From>
To as_type(From from) {
  static_assert(sizeof(To) == sizeof(From), "as_type needs types of one size");
  To to;
  std::memcpy(&to, &from, sizeof to);
  return to;
}

// Address spaces and the kernel qualifier.
#define kernel
#define device
#define constant
#define thread
#define threadgroup
