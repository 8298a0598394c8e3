// The debug record: where the code of a variant compiled in debug mode (index checks) records the
// first out-of-bounds access, on every target. The generators write it (the CPU generator through
// a struct type, the C-family printers as an int array), the runtime allocates it zeroed in the
// device's memory for each launch and reads it back to raise the IndexError.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tack::codegen {

// `hit` goes from 0 to 1 once (an atomic compare-and-swap), and the thread that wins fills in
// the rest. As an int array: hit, array, line, col, rank, is_store, then each index as two ints,
// low word first.
constexpr int kDebugRecordIndices = 8;  // the indices of the first 8 dimensions are kept
struct DebugRecord {
  int32_t hit;
  int32_t array;  // parameter index
  int32_t line;
  int32_t col;
  int32_t rank;
  int32_t is_store;
  int64_t index[kDebugRecordIndices];
};

// Where the indices start, counted in ints (the C-family code indexes the record so).
constexpr int kDebugRecordIndexInts = 6;
static_assert(offsetof(DebugRecord, index) == kDebugRecordIndexInts * sizeof(int32_t));

}  // namespace tack::codegen
