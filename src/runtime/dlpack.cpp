#include "tack/dlpack.hpp"

#include <dlpack/dlpack.h>
#include <fmt/format.h>

#include <memory>

#include "runtime/internals.hpp"
#include "runtime/queue.hpp"

namespace tack {
namespace {

// What a lent tensor owns: the array (its buffer) and the shape the DLTensor points at.
struct Lent {
  Array array;
  std::vector<int64_t> shape;
  DLManagedTensor tensor{};
};

DLDataType to_dl(DType t) {
  DLDataType d{};
  d.bits = static_cast<uint8_t>(dtype_bits(t));
  d.lanes = 1;
  d.code = is_float(t) ? kDLFloat : is_bool(t) ? kDLUInt : is_signed(t) ? kDLInt : kDLUInt;
  return d;
}

std::optional<DType> from_dl(DLDataType d) {
  if (d.lanes != 1) return std::nullopt;
  for (DType t : kAllDTypes)
    if (t != DType::Bool && to_dl(t).code == d.code && to_dl(t).bits == d.bits) return t;
  return std::nullopt;
}

}  // namespace

DLManagedTensor* to_dlpack(const Array& a) {
  if (!a.valid()) throw TypeError("to_dlpack: an empty tack::Array");
  // Host memory, and CUDA memory (a real device address, kDLCUDA): the backends that declare a
  // DLPack device type. OpenCL's addresses are Tack's own and no consumer could use them.
  const int type = a.device().backend().dlpack_device_type;
  if (type == 0)
    throw TypeError(fmt::format(
        "to_dlpack: arrays on {} cannot be exported through DLPack (only host and CUDA memory "
        "can): copy to the host first",
        a.device().name()));
  detail::wait_for_device(a.buffer()->backend, a.buffer()->device);
  a.buffer()->exported = true;  // from now on, launches that use it complete before returning
  auto lent = std::make_unique<Lent>();
  lent->array = a;
  lent->shape = a.shape();
  DLTensor& t = lent->tensor.dl_tensor;
  t.data = a.data();
  t.device = DLDevice{static_cast<DLDeviceType>(type), type == kDLCPU ? 0 : a.device().index()};
  t.ndim = a.ndim();
  t.dtype = to_dl(a.dtype());
  t.shape = lent->shape.data();
  t.strides = nullptr;  // C-contiguous
  t.byte_offset = 0;
  lent->tensor.manager_ctx = lent.get();
  lent->tensor.deleter = [](DLManagedTensor* self) {
    delete static_cast<Lent*>(self->manager_ctx);
  };
  return &lent.release()->tensor;
}

Array from_dlpack(DLManagedTensor* tensor) {
  if (!tensor) throw TypeError("from_dlpack: a null tensor");
  // Whatever happens below, the producer gets its tensor back exactly once.
  std::shared_ptr<DLManagedTensor> owner(tensor, [](DLManagedTensor* m) {
    if (m->deleter) m->deleter(m);
  });
  const DLTensor& t = tensor->dl_tensor;
  // Host memory (pinned and managed CUDA memory are host-accessible too) stays on the CPU;
  // device memory becomes an array on the device of the backend that declares its device type.
  DLDeviceType kind = t.device.device_type;
  if (kind == kDLCUDAHost || kind == kDLCUDAManaged) kind = kDLCPU;
  const BackendInfo* owner_backend = nullptr;
  for (const BackendInfo* declared : detail::declared_backends())
    if (declared->dlpack_device_type == kind) owner_backend = declared;
  if (!owner_backend)
    throw TypeError(
        fmt::format("from_dlpack: device type {} is neither host nor CUDA memory, the memory "
                    "this build of Tack can use",
                    static_cast<int>(t.device.device_type)));
  std::optional<DType> dt = from_dl(t.dtype);
  if (!dt)
    throw TypeError(
        fmt::format("from_dlpack: no Tack dtype has type code {} with {} bits and {} lanes",
                    t.dtype.code, t.dtype.bits, t.dtype.lanes));
  if (t.ndim < 0 || (t.ndim > 0 && !t.shape))
    throw TypeError(fmt::format("from_dlpack: a tensor of {} dimensions without a shape", t.ndim));
  Shape shape(t.shape, t.shape + t.ndim);
  void* data = static_cast<char*>(t.data) + t.byte_offset;
  Device where = kind == kDLCPU
                     ? device(owner_backend->name)
                     : device(fmt::format("{}:{}", owner_backend->name, t.device.device_id));
  // Checks the shape (its size must fit in 64 bits) before the strides are compared with it.
  Array out = array_from_ptr(data, shape, *dt, &where, /*writable=*/true, owner);
  if (t.strides) {
    int64_t expect = 1;
    for (int d = t.ndim - 1; d >= 0; --d) {
      if (shape[d] != 1 && t.strides[d] != expect)
        throw TypeError(
            "from_dlpack: the tensor is not C-contiguous; Tack arrays are (copy it first)");
      expect *= shape[d];
    }
  }
  return out;
}

}  // namespace tack
