// Arrays: n-dimensional, row-major, contiguous, on one device.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

#include "tack/device.hpp"
#include "tack/dtype.hpp"
#include "tack/error.hpp"

namespace tack {

namespace detail {
struct Buffer;
}

using Shape = std::vector<int64_t>;

class Array {
 public:
  Array() = default;

  const Shape& shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  int64_t size() const;  // number of elements
  int ndim() const { return static_cast<int>(shape_.size()); }
  // Never wraps: an array whose byte count would not fit in int64_t cannot be made (ValueError).
  int64_t nbytes() const { return size() * dtype_size(dtype_); }
  Device device() const;
  bool writable() const;
  bool valid() const { return buffer_ != nullptr; }

  // The address of the first element in the device's memory space.
  void* data() const;

  // A view with another shape and the same elements (-1 infers one dimension).
  Array reshape(const Shape& shape) const;
  // A view of rows [begin, end) of the first dimension.
  Array rows(int64_t begin, int64_t end) const;
  Array copy() const;
  Array astype(DType t) const;
  void fill(double value);

  // Copies to the host (waiting for queued work first).
  template <typename T>
  std::vector<T> to_vector() const {
    check_host_type(dtype_of<T>());
    if constexpr (std::is_same_v<T, bool>) {  // std::vector<bool> has no contiguous storage
      std::vector<uint8_t> bytes(static_cast<size_t>(size()));
      read(bytes.data(), bytes.size());
      return std::vector<bool>(bytes.begin(), bytes.end());
    } else {
      std::vector<T> out(static_cast<size_t>(size()));
      read(out.data(), out.size() * sizeof(T));
      return out;
    }
  }
  // One element, by index per dimension.
  template <typename T>
  T at(std::initializer_list<int64_t> index) const {
    check_host_type(dtype_of<T>());
    T v;
    read_element(index, &v);
    return v;
  }
  double item(std::initializer_list<int64_t> index) const;  // any dtype, as a double

  double sum() const;
  double min() const;
  double max() const;
  double mean() const;

  // Internal.
  Array(std::shared_ptr<detail::Buffer> buffer, int64_t offset_bytes, Shape shape, DType dtype);
  const std::shared_ptr<detail::Buffer>& buffer() const { return buffer_; }
  int64_t offset_bytes() const { return offset_; }
  void read(void* dst, size_t bytes) const;
  void write(const void* src, size_t bytes);

 private:
  void check_host_type(DType t) const;
  void read_element(std::initializer_list<int64_t> index, void* out) const;

  std::shared_ptr<detail::Buffer> buffer_;
  int64_t offset_ = 0;
  int64_t size_ = 1;  // the element count, checked when the array is made
  Shape shape_;
  DType dtype_ = DType::F32;
};

// Creation, on `device` (the default device when none is given). f32 unless a dtype is given.
Array empty(const Shape& shape, DType dtype = DType::F32, const Device* device = nullptr);
Array zeros(const Shape& shape, DType dtype = DType::F32, const Device* device = nullptr);
Array ones(const Shape& shape, DType dtype = DType::F32, const Device* device = nullptr);
Array full(const Shape& shape, double value, DType dtype = DType::F32,
           const Device* device = nullptr);
Array arange(int64_t n, DType dtype = DType::F32, const Device* device = nullptr);
Array empty_like(const Array& a);
Array zeros_like(const Array& a);

// Wraps memory that Tack does not own (no copy). The memory must outlive the array.
Array array_from_ptr(void* ptr, const Shape& shape, DType dtype, const Device* device = nullptr,
                     bool writable = false);
// The same, keeping `owner` alive for as long as any array (or view) uses the memory: how another
// library's object (a DLPack producer, a Python object) stays alive while Tack uses its memory.
Array array_from_ptr(void* ptr, const Shape& shape, DType dtype, const Device* device,
                     bool writable, std::shared_ptr<const void> owner);
// "cpu" for host memory; a GPU backend answers its own spaces.
std::string memory_space(const void* ptr);

// Host to device, device to host, device to device. Sizes (and for host data, the element type)
// must match; throws TypeError otherwise.
void copyto(Array& dst, const Array& src);
template <typename T>
void copyto(Array& dst, std::span<const T> src) {
  if (dtype_of<T>() != dst.dtype())
    throw TypeError("copyto: host data of type " + std::string(dtype_name(dtype_of<T>())) +
                    " into an array of dtype " + std::string(dtype_name(dst.dtype())));
  if (static_cast<int64_t>(src.size()) != dst.size())
    throw TypeError("copyto: " + std::to_string(src.size()) + " host elements into an array of " +
                    std::to_string(dst.size()));
  dst.write(src.data(), src.size_bytes());
}
template <typename T>
void copyto(Array& dst, const std::vector<T>& src) {
  copyto(dst, std::span<const T>(src));
}
template <typename T>
void copyto(std::span<T> dst, const Array& src) {
  if (dtype_of<T>() != src.dtype() || static_cast<int64_t>(dst.size()) != src.size())
    throw TypeError("copyto: host buffer does not match the array's dtype and size");
  src.read(dst.data(), dst.size_bytes());
}

}  // namespace tack
