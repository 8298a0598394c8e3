// The calling convention between code generated for the CPU and the CPU backend that launches
// it. Both sides compute slot positions with ArgLayout, so they cannot disagree.
//
//   void <prefix>_chunk(const uint64_t* slots, int64_t begin, int64_t end)
//       runs iterations [begin, end) of the outermost loop dimension, all of the inner ones;
//       in a kernel with reductions (ir::Reduction), blocks [begin, end) of
//       ir::kReductionBlock iterations, storing each block's lane values to the partials;
//   void <prefix>_result(const uint64_t* slots, void* out)
//       computes the kernel's `return` value (kernels that have one), after the chunks: the
//       prelude, the epilogue (which combines the reductions' partials), the result.
//
// Slots are 8 bytes each: an array is its data pointer followed by one extent per dimension;
// a scalar is its value in the slot's low bytes; each loop dimension is (start, step, count);
// then comes the address of the DebugRecord (codegen/debug_record.hpp).
//
//   uint8_t <prefix>_streams
//       present where the widened chunk has whole-gang contiguous stores that a build for
//       streaming launches (LlvmOptions::stream_stores) writes past the caches: the backend asks
//       for that build in launches whose arrays are larger than the caches, where a store's
//       write-allocate read of the line it overwrites only costs bandwidth. Where it is absent,
//       the two builds are the same code.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/debug_record.hpp"
#include "ir/ir.hpp"

namespace tack::codegen {

struct ArgLayout {
  std::vector<int> param_slot;  // first slot of each parameter
  int loop_slot = 0;            // first slot of the loop dimensions
  int debug_slot = 0;
  int slot_count = 0;

  explicit ArgLayout(const ir::Kernel& k) {
    int n = 0;
    for (const ir::Param& p : k.params) {
      param_slot.push_back(n);
      if (!p.is_local_array()) n += p.type.is_array() ? 1 + p.type.rank : 1;
    }
    loop_slot = n;
    n += 3 * static_cast<int>(k.dims.size());
    debug_slot = n++;
    slot_count = n;
  }
};

inline std::string chunk_symbol(const std::string& prefix) {
  return prefix + "_chunk";
}
inline std::string result_symbol(const std::string& prefix) {
  return prefix + "_result";
}
inline std::string streams_symbol(const std::string& prefix) {
  return prefix + "_streams";
}

}  // namespace tack::codegen
