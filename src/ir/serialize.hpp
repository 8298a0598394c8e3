// A specialized kernel's IR as bytes, for the disk cache's front-end records
// (runtime/front_end_record.hpp), which spare a new process the parse and specialization of a
// kernel it has compiled before. A kernel read back prints and generates as the one written.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ir/index_ranges.hpp"
#include "ir/ir.hpp"

namespace tack::ir {

// Appends little-endian integers and length-prefixed strings to `out`.
class ByteWriter {
 public:
  explicit ByteWriter(std::string& out) : out_(out) {}
  void u8(uint8_t v) { out_ += static_cast<char>(v); }
  void u32(uint32_t v);
  void u64(uint64_t v);
  void str(std::string_view s);

 private:
  template <typename T>
  void word(T v);
  std::string& out_;
};

// Reads what ByteWriter wrote. A read past the end, or a length longer than what is left, sets
// failed() and returns zeros or an empty string, so that a damaged record reads as one to ignore.
class ByteReader {
 public:
  explicit ByteReader(std::string_view in) : in_(in) {}
  uint8_t u8();
  uint32_t u32();
  uint64_t u64();
  std::string_view str();
  // A count of items of at least one byte each: fails when more than the bytes left.
  uint32_t count();
  bool failed() const { return failed_; }
  bool at_end() const { return pos_ == in_.size(); }
  void fail() { failed_ = true; }

 private:
  bool take(size_t n);
  template <typename T>
  T word();
  std::string_view in_;
  size_t pos_ = 0;
  bool failed_ = false;
};

void write_kernel(ByteWriter& w, const Kernel& k);
// nullopt when the bytes are not a kernel that write_kernel wrote: cut short, an enumerator out of
// range, or nesting deeper than any kernel's. Indices into params and locals are checked by
// ir::verify, which the caller runs.
std::optional<Kernel> read_kernel(ByteReader& r);

// The index-range proof of a kernel (ir/index_ranges.hpp), which each launch checks.
void write_proof(ByteWriter& w, const IndexProof& proof);
// nullopt unless the bytes are a proof of `k` as write_proof wrote it: every array, dimension and
// variable it names exists, and every bound is a host expression of the kernel's scalars and
// extents, so that a launch's check can evaluate it.
std::optional<IndexProof> read_proof(ByteReader& r, const Kernel& k);

}  // namespace tack::ir
