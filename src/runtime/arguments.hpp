// The arguments of a kernel call as the compiler sees them: their types, which select the
// variant (the in-memory key), and the flat list of values a launch passes. Objects of device
// classes are flattened here, once for every host language: their arrays and numbers become
// values of the list in the order of sema::leaves, their class, constants and attribute kinds go
// into the key.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "sema/specialize.hpp"
#include "tack/device.hpp"
#include "tack/kernel.hpp"

namespace tack::detail {

struct CallTypes {
  // Per argument. Scalars: an integer is i32 if it fits, else i64, else u64; a float is f32, or
  // f64 when any array of the call (objects' included) is f64.
  std::vector<sema::ArgType> types;
  // The values of the kernel's parameters that arguments give: the arguments themselves when
  // none is an object (`leaves` then views them), else flattened into `owned_leaves`.
  std::span<const Arg> leaves;
  std::vector<Arg> owned_leaves;
  std::string key;  // the in-memory variant key
  Device device;    // of the first array, else the default device

  CallTypes() = default;
  CallTypes(const CallTypes&) = delete;  // `leaves` may view `owned_leaves`
  CallTypes& operator=(const CallTypes&) = delete;
};

// Throws TypeError for an empty array, or an object nested too deeply.
void classify(std::span<const Arg> args, CallTypes& out);

// The ArgType of an array, a texture or a scalar (`any_f64`: an array of the call is f64).
sema::ArgType arg_type(const Arg& a, bool any_f64);

}  // namespace tack::detail
