#include "tack/array.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "runtime/host_values.hpp"
#include "runtime/internals.hpp"
#include "runtime/queue.hpp"
#include "tack/algorithms.hpp"

namespace tack {
namespace {

std::string shape_text(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += fmt::format("{}{}", i ? ", " : "", s[i]);
  return out + (s.size() == 1 ? ",)" : ")");
}

// The element count of a shape whose elements of `item` bytes all fit in int64_t byte counts
// (so that nbytes(), offsets and the backends' sizes never wrap).
int64_t element_count(const Shape& shape, int item = 1) {
  int64_t n = 1;
  for (int64_t d : shape)
    if (d < 0) throw ValueError(fmt::format("negative dimension in shape {}", shape_text(shape)));
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n)) n = -1;
  if (n < 0 || n > std::numeric_limits<int64_t>::max() / item)
    throw ValueError(fmt::format(
        "the shape {} is too large: its size in bytes ({}-byte elements) does not fit in 64 bits",
        shape_text(shape), item));
  return n;
}

Device resolve(const Device* d) {
  return d ? *d : get_default_device();
}

Array allocate(const Shape& shape, DType dtype, const Device& dev) {
  if (shape.size() > 8) throw ValueError("arrays have at most 8 dimensions");
  auto buffer = std::make_shared<detail::Buffer>();
  buffer->backend = dev.impl();
  buffer->device = dev.index();
  buffer->bytes = static_cast<size_t>(element_count(shape, dtype_size(dtype)) * dtype_size(dtype));
  buffer->ptr = buffer->backend->allocate(buffer->device, buffer->bytes);
  return Array(std::move(buffer), 0, shape, dtype);
}

}  // namespace

Array::Array(std::shared_ptr<detail::Buffer> buffer, int64_t offset, Shape shape, DType dtype)
    : buffer_(std::move(buffer)), offset_(offset), shape_(std::move(shape)), dtype_(dtype) {
  size_ = element_count(shape_, dtype_size(dtype_));
}

int64_t Array::size() const {
  return size_;
}

Device Array::device() const {
  if (!buffer_) return get_default_device();
  return buffer_->backend->device(buffer_->device);
}

bool Array::writable() const {
  return buffer_ && buffer_->writable;
}

void* Array::data() const {
  return buffer_ ? static_cast<char*>(buffer_->ptr) + offset_ : nullptr;
}

void Array::read(void* dst, size_t bytes) const {
  if (static_cast<int64_t>(bytes) != nbytes())
    throw TypeError(fmt::format("reading {} bytes from an array of {}", bytes, nbytes()));
  if (bytes == 0) return;  // an empty vector's data() may be null, which no copy may be given
  detail::wait_for_device(buffer_->backend, buffer_->device);
  buffer_->backend->copy_to_host(buffer_->device, dst, data(), bytes);
}

void Array::write(const void* src, size_t bytes) {
  if (!writable()) throw ValueError("this array is read-only");
  if (static_cast<int64_t>(bytes) != nbytes())
    throw TypeError(fmt::format("writing {} bytes into an array of {}", bytes, nbytes()));
  if (bytes == 0) return;
  buffer_->backend->copy_from_host(buffer_->device, data(), src, bytes);
}

void Array::check_host_type(DType t) const {
  if (t != dtype_)
    throw TypeError(
        fmt::format("the array's dtype is {}, not {}", dtype_name(dtype_), dtype_name(t)));
}

void Array::read_element(std::initializer_list<int64_t> index, void* out) const {
  if (static_cast<int>(index.size()) != ndim())
    throw IndexError(
        fmt::format("{} indices for an array of shape {}", index.size(), shape_text(shape_)));
  int64_t flat = 0;
  int d = 0;
  for (int64_t i : index) {
    if (i < 0 || i >= shape_[d])
      throw IndexError(fmt::format("index {} is out of bounds for dimension {} of shape {}", i, d,
                                   shape_text(shape_)));
    flat = flat * shape_[d] + i;
    ++d;
  }
  detail::wait_for_device(buffer_->backend, buffer_->device);
  buffer_->backend->copy_to_host(buffer_->device, out,
                                 static_cast<char*>(data()) + flat * dtype_size(dtype_),
                                 dtype_size(dtype_));
}

double Array::item(std::initializer_list<int64_t> index) const {
  alignas(8) unsigned char raw[8];
  read_element(index, raw);
  return detail::host_to_double(dtype_, raw);
}

Array Array::reshape(const Shape& shape) const {
  Shape s = shape;
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == -1) {
      if (infer >= 0) throw ValueError("reshape: only one dimension can be -1");
      infer = static_cast<int>(i);
    } else {
      if (s[i] < 0)
        throw ValueError(fmt::format("reshape: negative dimension in {}", shape_text(shape)));
      if (__builtin_mul_overflow(known, s[i], &known))
        throw ValueError(
            fmt::format("cannot reshape an array of {} elements into {}: that shape "
                        "has more elements than 64 bits count",
                        size(), shape_text(shape)));
    }
  }
  if (infer >= 0) {
    if (known == 0 || size() % known != 0)
      throw ValueError(
          fmt::format("cannot reshape an array of {} elements into {}", size(), shape_text(shape)));
    s[infer] = size() / known;
  }
  if (element_count(s) != size())
    throw ValueError(fmt::format("cannot reshape an array of shape {} ({} elements) into {}",
                                 shape_text(shape_), size(), shape_text(s)));
  return Array(buffer_, offset_, s, dtype_);
}

Array Array::rows(int64_t begin, int64_t end) const {
  if (ndim() == 0) throw IndexError("a 0-d array has no rows");
  int64_t n = shape_[0];
  begin = std::clamp<int64_t>(begin < 0 ? begin + n : begin, 0, n);
  end = std::clamp<int64_t>(end < 0 ? end + n : end, 0, n);
  if (end < begin) end = begin;
  Shape s = shape_;
  s[0] = end - begin;
  int64_t row_bytes = nbytes() / std::max<int64_t>(n, 1);
  return Array(buffer_, offset_ + begin * row_bytes, s, dtype_);
}

Array Array::copy() const {
  Array out = allocate(shape_, dtype_, device());
  buffer_->backend->copy_on_device(buffer_->device, out.data(), data(),
                                   static_cast<size_t>(nbytes()));
  return out;
}

Array Array::astype(DType t) const {
  std::vector<unsigned char> src(static_cast<size_t>(nbytes()));
  read(src.data(), src.size());
  std::vector<unsigned char> dst(static_cast<size_t>(size() * dtype_size(t)));
  for (int64_t i = 0; i < size(); ++i)
    detail::host_convert(dtype_, src.data() + i * dtype_size(dtype_), t,
                         dst.data() + i * dtype_size(t));
  Array out = allocate(shape_, t, device());
  out.write(dst.data(), dst.size());
  return out;
}

void Array::fill(double value) {
  if (!writable()) throw ValueError("this array is read-only");
  alignas(8) unsigned char pattern[8];
  detail::host_from_double(value, dtype_, pattern);
  buffer_->backend->fill(buffer_->device, data(), pattern, dtype_size(dtype_),
                         static_cast<size_t>(size()));
}

// The reductions are tack.algorithms' (docs/algorithms.md), on the array's device.
double Array::sum() const {
  return algorithms::sum(*this).as<double>();
}

double Array::min() const {
  return algorithms::min(*this).as<double>();
}

double Array::max() const {
  return algorithms::max(*this).as<double>();
}

double Array::mean() const {
  return algorithms::mean(*this);
}

Array empty(const Shape& shape, DType dtype, const Device* device) {
  return allocate(shape, dtype, resolve(device));
}

Array zeros(const Shape& shape, DType dtype, const Device* device) {
  Array a = empty(shape, dtype, device);
  a.fill(0);
  return a;
}

Array ones(const Shape& shape, DType dtype, const Device* device) {
  return full(shape, 1, dtype, device);
}

Array full(const Shape& shape, double value, DType dtype, const Device* device) {
  Array a = empty(shape, dtype, device);
  a.fill(value);
  return a;
}

Array arange(int64_t n, DType dtype, const Device* device) {
  Array a = empty({n}, dtype, device);
  std::vector<unsigned char> raw(static_cast<size_t>(a.nbytes()));
  for (int64_t i = 0; i < n; ++i)
    detail::host_from_double(static_cast<double>(i), dtype, raw.data() + i * dtype_size(dtype));
  a.write(raw.data(), raw.size());
  return a;
}

Array empty_like(const Array& a) {
  Device d = a.device();
  return empty(a.shape(), a.dtype(), &d);
}

Array zeros_like(const Array& a) {
  Device d = a.device();
  return zeros(a.shape(), a.dtype(), &d);
}

Array array_from_ptr(void* ptr, const Shape& shape, DType dtype, const Device* device,
                     bool writable) {
  return array_from_ptr(ptr, shape, dtype, device, writable, nullptr);
}

Array array_from_ptr(void* ptr, const Shape& shape, DType dtype, const Device* device,
                     bool writable, std::shared_ptr<const void> owner) {
  if (shape.size() > 8) throw ValueError("arrays have at most 8 dimensions");
  int64_t count = element_count(shape, dtype_size(dtype));
  if (!ptr && count > 0) throw ValueError("array_from_ptr: null pointer");
  Device dev = resolve(device);
  auto buffer = std::make_shared<detail::Buffer>();
  buffer->backend = dev.impl();
  buffer->device = dev.index();
  buffer->bytes = static_cast<size_t>(count * dtype_size(dtype));
  // The backend's address for the memory (the pointer itself on the CPU; see Backend::wrap).
  buffer->ptr = ptr ? buffer->backend->wrap(buffer->device, ptr, buffer->bytes) : nullptr;
  buffer->owned = false;
  buffer->writable = writable;
  buffer->owner = std::move(owner);
  return Array(std::move(buffer), 0, shape, dtype);
}

std::string memory_space(const void* ptr) {
  // Host memory unless a device backend claims the address. Addresses Tack makes up are asked
  // about first: a driver could take one for an address of its own.
  using A = BackendInfo::Addresses;
  for (A claim : {A::Tack, A::Driver})
    for (const BackendInfo* declared : detail::declared_backends())
      if (declared->claims_addresses == claim)
        if (detail::Backend* b = detail::find_backend(declared->name))
          if (std::string space = b->memory_space(ptr); !space.empty()) return space;
  return "cpu";
}

void copyto(Array& dst, const Array& src) {
  if (dst.shape() != src.shape() || dst.dtype() != src.dtype())
    throw TypeError(fmt::format("copyto: source {} {} does not match destination {} {}",
                                dtype_name(src.dtype()), shape_text(src.shape()),
                                dtype_name(dst.dtype()), shape_text(dst.shape())));
  if (!dst.writable()) throw ValueError("copyto: the destination is read-only");
  if (dst.device() == src.device()) {
    // Queued in order after the launches that write `src`: no wait.
    dst.buffer()->backend->copy_on_device(dst.buffer()->device, dst.data(), src.data(),
                                          static_cast<size_t>(src.nbytes()));
    return;
  }
  std::vector<unsigned char> staging(static_cast<size_t>(src.nbytes()));
  src.read(staging.data(), staging.size());
  dst.write(staging.data(), staging.size());
}

}  // namespace tack
