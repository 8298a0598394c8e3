#include "runtime/reductions.hpp"

#include <fmt/format.h>

#include "runtime/host_values.hpp"
#include "tack/kernel.hpp"

namespace tack::detail {
namespace {

// Each kernel is one pass: lane l of group g takes element g*256 + l (or the identity past the
// end), the group combines its 256 values with a block collective (the fixed tree of
// docs/language.md, "Order of the collectives"), and lane 0 writes the result to out[g]. The
// iteration count out.shape[0] * 256 is always whole groups, as collectives need. A float sum
// pads with -0.0, the exact identity of IEEE addition (x + -0.0 == x, also for x == -0.0).
std::string reduction_kernels() {
  struct Kernel {
    const char* op;
    const char* kind;  // of the accumulator: signed (i64), unsigned (u64) or float
    const char* identity;
  };
  static constexpr Kernel kernels[] = {
      {"sum", "signed", "tack.i64(0)"},
      {"sum", "unsigned", "tack.u64(0)"},
      {"sum", "float", "-0.0"},
      {"min", "signed", "tack.i64(9223372036854775807)"},
      {"min", "unsigned", "tack.u64(18446744073709551615)"},
      {"min", "float", "math.inf"},
      {"max", "signed", "tack.i64(-9223372036854775807 - 1)"},
      {"max", "unsigned", "tack.u64(0)"},
      {"max", "float", "-math.inf"},
  };
  std::string source = "import math\nimport tack\n";
  for (const Kernel& k : kernels)
    source += fmt::format(R"(

@tack.kernel
def {0}_{1}(x, out):
    for i in range(out.shape[0] * 256):
        v = {2}
        if i < x.shape[0]:
            v = x[i]
        s = tack.block_{0}(v)
        if tack.thread_id() == 0:
            out[tack.group_id()] = s
)",
                          k.op, k.kind, k.identity);
  return source;
}

constexpr int64_t kGroup = 256;

// Parsed once; each kernel compiles at its first call per dtype and device, through the memory
// and disk caches like any kernel.
const Module& reduction_module() {
  static const Module m = Module::from_source(reduction_kernels(), "<tack reductions>");
  return m;
}

const char* op_name(Reduction op) {
  return op == Reduction::Sum ? "sum" : op == Reduction::Min ? "min" : "max";
}

const char* kind_name(DType acc) {
  if (is_float(acc)) return "float";
  return acc == DType::U64 ? "unsigned" : "signed";
}

}  // namespace

DType reduction_dtype(DType input, Reduction) {
  if (is_float(input)) return input;
  switch (input) {
    case DType::U8:
    case DType::U16:
    case DType::U32:
    case DType::U64:
      return DType::U64;
    default:
      return DType::I64;
  }
}

std::optional<double> device_reduce(const Array& a, Reduction op) {
  Device dev = a.device();
  const BackendInfo& info = dev.backend();
  DType acc = reduction_dtype(a.dtype(), op);
  if (!info.supports_device_reductions || !info.supported_dtypes.count(a.dtype()) ||
      !info.supported_dtypes.count(acc) || a.size() == 0)
    return std::nullopt;
  Kernel pass = reduction_module().kernel(fmt::format("{}_{}", op_name(op), kind_name(acc)));
  // A view that does not start its buffer may not be passable as an argument (OpenCL's
  // sub-buffer alignment): reduce a copy of it.
  Array x = a.offset_bytes() == 0 ? a.reshape({a.size()}) : a.copy().reshape({a.size()});
  while (true) {
    int64_t groups = (x.size() + kGroup - 1) / kGroup;
    Array out = empty({groups}, acc, &dev);
    pass(x, out);
    x = out;
    if (groups == 1) break;
  }
  return x.item({0});
}

}  // namespace tack::detail
