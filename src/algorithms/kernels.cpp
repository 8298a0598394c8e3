#include "algorithms/kernels.hpp"

#include <fmt/format.h>

#include <map>
#include <mutex>

#include "tack/error.hpp"

namespace tack::algorithms::detail {

const Kernel& kernel(const std::string& name) {
  static const Module module = Module::from_source(kernels_source(), "<tack.algorithms kernels>");
  static std::mutex mutex;
  static std::map<std::string, Kernel, std::less<>> kernels;
  std::lock_guard lock(mutex);
  auto it = kernels.find(name);
  if (it == kernels.end()) it = kernels.emplace(name, module.kernel(name)).first;
  return it->second;  // std::map never moves its elements
}

Array flat(const Array& a) {
  return a.offset_bytes() == 0 ? a.reshape({a.size()}) : a.copy().reshape({a.size()});
}

const char* kind(DType t) {
  if (is_float(t)) return "float";
  return is_unsigned(t) ? "unsigned" : "signed";
}

Array like(const Array& a, int64_t n, DType dtype) {
  Device d = a.device();
  return empty({n}, dtype, &d);
}

void require_elements(const Array& a, const char* function) {
  if (a.size() == 0)
    throw ValueError(
        fmt::format("tack.algorithms.{}() of an empty array: it has no {}; check "
                    "the size first",
                    function, function));
}

}  // namespace tack::algorithms::detail

namespace tack::algorithms::detail {

Scalar first_element(const Array& a) {
  Scalar s;
  s.has_value = true;
  s.dtype = a.dtype();
  switch (a.dtype()) {
    case DType::F32:
      s.value = a.to_vector<float>()[0];
      break;
    case DType::F64:
      s.value = a.to_vector<double>()[0];
      break;
    case DType::Bool:
      s.value = a.to_vector<bool>()[0] ? 1 : 0;
      break;
    case DType::U64:
      s.int_value = static_cast<int64_t>(a.to_vector<uint64_t>()[0]);
      break;
    default:
      s.int_value = static_cast<int64_t>(a.astype(DType::I64).to_vector<int64_t>()[0]);
  }
  return s;
}

Scalar zero(DType t) {
  Scalar s;
  s.has_value = true;
  s.dtype = t;
  return s;
}

}  // namespace tack::algorithms::detail
