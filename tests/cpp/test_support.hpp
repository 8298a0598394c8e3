// Helpers shared by the C++ tests.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "ir/ir.hpp"
#include "lang/parser.hpp"
#include "lang/resolve.hpp"
#include "sema/specialize.hpp"
#include "tack/tack.hpp"

namespace tack::test {

inline std::shared_ptr<lang::ResolvedModule> resolve(const std::string& src,
                                                     const std::string& name = "test.py") {
  auto file = std::make_shared<const SourceFile>(name, src);
  return std::make_shared<lang::ResolvedModule>(lang::parse_module(file));
}

// Specializes kernel `name` of `src` for the argument types "f32[],i32,...".
inline ir::Kernel specialize(const std::string& src, const std::string& args,
                             const std::string& name = "k") {
  auto m = resolve(src);
  auto types = sema::parse_arg_types(args);
  return sema::specialize(*m, name, types);
}

// The CompileError a kernel raises, or a failure when it compiles.
inline CompileError compile_error(const std::string& src, const std::string& args,
                                  const std::string& name = "k") {
  try {
    specialize(src, args, name);
  } catch (const CompileError& e) {
    return e;
  }
  ADD_FAILURE() << "expected a CompileError for:\n" << src;
  return CompileError("", "", 0, 0, "", "", "");
}

inline std::string kernels_dir() {
  return TACK_TEST_KERNELS_DIR;
}

// One device of each backend that runs here.
inline std::vector<Device> available_devices() {
  std::vector<Device> out;
  for (const BackendStatus& s : backend_status())
    if (s.available) out.push_back(device(s.name));
  return out;
}

// A 1-D array on `d` holding `v`.
template <typename T>
Array upload(const std::vector<T>& v, const Device& d) {
  Array a = empty({static_cast<int64_t>(v.size())}, dtype_of<T>(), &d);
  copyto(a, v);
  return a;
}

}  // namespace tack::test
