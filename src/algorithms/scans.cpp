// Scans in three passes over fixed blocks of kScanBlock elements: each block's total (one
// iteration per block, in element order), the exclusive scan of the totals (one iteration), then
// each block again from its offset. The order is a function of the element count alone.
#include <fmt/format.h>

#include "algorithms/kernels.hpp"
#include "tack/algorithms.hpp"
#include "tack/error.hpp"

namespace tack::algorithms {

namespace {

constexpr int64_t kScanBlock = 4096;

// Whether a `dst` local accumulating `src` values keeps its type: the conversions the language
// allows into a local (docs/language.md, "Locals").
bool accumulates(DType dst, DType src) {
  if (is_bool(dst)) return false;
  if (is_bool(src) || dst == src) return true;
  if (is_float(dst)) return !(dst == DType::F32 && src == DType::F64);
  if (is_float(src)) return false;
  if (is_unsigned(dst)) return is_unsigned(src) && dtype_size(src) <= dtype_size(dst);
  return dtype_size(src) < dtype_size(dst) ||
         (is_signed(src) && dtype_size(src) == dtype_size(dst));
}

Scalar scan(const char* function, const char* blocks_kernel, const Array& src, Array& dst) {
  if (src.size() != dst.size())
    throw ValueError(
        fmt::format("tack.algorithms.{}(): src has {} elements and dst {}: give dst "
                    "as many",
                    function, src.size(), dst.size()));
  if (!accumulates(dst.dtype(), src.dtype()))
    throw TypeError(
        fmt::format("tack.algorithms.{}(): a {} dst cannot accumulate {} values: give "
                    "dst a dtype that holds them ({} does)",
                    function, dtype_name(dst.dtype()), dtype_name(src.dtype()),
                    dtype_name(scan_dtype(src.dtype()))));
  if (!dst.writable())
    throw ValueError(fmt::format("tack.algorithms.{}(): dst is read-only", function));
  if (src.size() == 0) return detail::zero(dst.dtype());
  int64_t n = src.size();
  int64_t blocks = (n + kScanBlock - 1) / kScanBlock;
  // A view inside a buffer is computed into a copy first (see detail::flat).
  bool direct = dst.offset_bytes() == 0;
  Array x = detail::flat(src);
  Array out = direct ? dst.reshape({n}) : detail::like(dst, n, dst.dtype());
  // The block offsets, then the identity of addition (-0.0 for floats: -0.0 + v is v).
  Array part = detail::like(dst, blocks + 1, dst.dtype());
  part.fill(is_float(dst.dtype()) ? -0.0 : 0.0);
  if (blocks > 1) {
    detail::kernel("scan_block_totals")(x, part, kScanBlock);
    detail::kernel("scan_exclusive_in_place")(part);
  }
  Array total = detail::like(dst, 1, dst.dtype());
  detail::kernel(blocks_kernel)(x, out, part, total, kScanBlock);
  if (!direct) {
    Array whole = out.reshape(dst.shape());
    copyto(dst, whole);
  }
  return detail::first_element(total);
}

}  // namespace

DType scan_dtype(DType src) {
  if (is_float(src)) return src;
  return is_unsigned(src) ? DType::U64 : DType::I64;
}

Scalar inclusive_scan(const Array& src, Array& dst) {
  return scan("inclusive_scan", "scan_inclusive_blocks", src, dst);
}

Scalar exclusive_scan(const Array& src, Array& dst) {
  return scan("exclusive_scan", "scan_exclusive_blocks", src, dst);
}

}  // namespace tack::algorithms
