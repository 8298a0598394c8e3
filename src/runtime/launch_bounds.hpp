// The launch-time half of the index-range proof (ir/index_ranges.hpp): before a launch, the
// ranges of the proven accesses are evaluated from the launch's own bounds, scalars and shapes,
// and a launch that would index outside an array is refused before anything runs.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "backends/backend.hpp"
#include "ir/index_ranges.hpp"
#include "ir/passes.hpp"

namespace tack::detail {

// Built once per variant; run at every launch. Identical index forms (x[i], y[i] and out[i])
// are evaluated once, and constant offsets and coefficients are read once, here.
class IndexRangeCheck {
 public:
  IndexRangeCheck() = default;
  explicit IndexRangeCheck(ir::IndexProof proof);
  // Forms point into proof_'s vectors, whose elements a move keeps in place, and a copy would not.
  IndexRangeCheck(IndexRangeCheck&&) = default;
  IndexRangeCheck& operator=(IndexRangeCheck&&) = default;
  IndexRangeCheck(const IndexRangeCheck&) = delete;
  IndexRangeCheck& operator=(const IndexRangeCheck&) = delete;

  // Throws IndexError naming the kernel, the access (file, line, column), the array, the
  // dimension, the index range and the shape. `launch` holds the evaluated parallel-loop bounds
  // and the arguments; `column_offset` is the kernel source's column in its file.
  void run(const ir::Kernel& k, const ir::HostValues& values, const LaunchArgs& launch,
           int column_offset) const;

 private:
  struct Form {
    const ir::Linear* linear = nullptr;
    bool constant = false;  // offset and coefficients are constants, copied here
    int64_t offset = 0;
    std::vector<std::pair<int, int64_t>> terms;  // (var, coefficient) when constant
  };
  struct Check {
    int access = 0;  // in proof_.accesses
    int array = 0;
    int dim = 0;
    int form = 0;
    std::vector<std::pair<int, DType>> fits;  // forms that must not wrap in their type
  };
  int form_of(const ir::Linear& l);
  // Every case, and the report; kept out of run() so that the fast path has a small frame.
  [[gnu::noinline]] void run_general(const ir::Kernel& k, const ir::HostValues& values,
                                     const LaunchArgs& launch, int column_offset) const;

  // The common case: every index is c + k * i in one dimension i of the parallel loop, with
  // constants c and k, outside inner loops: checked without building ranges.
  struct SimpleForm {
    int parallel_dim;
    int64_t offset, coef;
  };
  struct SimpleCheck {
    int array, dim, form;
  };
  bool simple_ = false;
  std::vector<SimpleForm> simple_forms_;
  std::vector<SimpleCheck> simple_checks_;

  ir::IndexProof proof_;
  std::vector<Form> forms_;
  std::vector<Check> checks_;
};

}  // namespace tack::detail
