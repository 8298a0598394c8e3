// DLPack from C++: lending arrays and borrowing tensors without copies.
#include <dlpack/dlpack.h>

#include "tack/dlpack.hpp"
#include "test_support.hpp"

namespace tack {
namespace {

TEST(DLPack, LendingKeepsTheArrayAlive) {
  DLManagedTensor* t = nullptr;
  const void* data = nullptr;
  {
    Array a = arange(6, i32).reshape({2, 3});
    data = a.data();
    t = to_dlpack(a);
  }
  EXPECT_EQ(t->dl_tensor.data, data);
  EXPECT_EQ(t->dl_tensor.ndim, 2);
  EXPECT_EQ(t->dl_tensor.shape[1], 3);
  EXPECT_EQ(t->dl_tensor.dtype.code, kDLInt);
  EXPECT_EQ(t->dl_tensor.dtype.bits, 32);
  EXPECT_EQ(t->dl_tensor.device.device_type, kDLCPU);
  EXPECT_EQ(static_cast<int32_t*>(t->dl_tensor.data)[5], 5);  // still alive
  t->deleter(t);
}

TEST(DLPack, RoundTripSharesMemory) {
  Array a = arange(4, f64);
  Array b = from_dlpack(to_dlpack(a));
  EXPECT_EQ(b.data(), a.data());
  b.fill(7);
  EXPECT_EQ(a.sum(), 28);
}

struct Foreign {
  std::vector<float> data = {1, 2, 3, 4, 5, 6};
  std::vector<int64_t> shape = {2, 3};
  std::vector<int64_t> strides;
  DLManagedTensor tensor{};
  int* deleted;
};

DLManagedTensor* make_foreign(int* deleted, std::vector<int64_t> strides = {}) {
  auto* f = new Foreign;
  f->deleted = deleted;
  f->strides = std::move(strides);
  DLTensor& t = f->tensor.dl_tensor;
  t.data = f->data.data();
  t.device = {kDLCPU, 0};
  t.ndim = 2;
  t.dtype = {kDLFloat, 32, 1};
  t.shape = f->shape.data();
  t.strides = f->strides.empty() ? nullptr : f->strides.data();
  f->tensor.manager_ctx = f;
  f->tensor.deleter = [](DLManagedTensor* self) {
    auto* f = static_cast<Foreign*>(self->manager_ctx);
    ++*f->deleted;
    delete f;
  };
  return &f->tensor;
}

TEST(DLPack, BorrowedTensorRunsInKernelsAndIsReturnedOnce) {
  int deleted = 0;
  {
    Array a = from_dlpack(make_foreign(&deleted));
    Array view = a.rows(1, 2);
    Module m = Module::from_source(
        "import tack\n@tack.kernel\ndef twice(x):\n    for i, j in tack.ndrange(x.shape[0], "
        "x.shape[1]):\n"
        "        x[i, j] = 2 * x[i, j]\n");
    m.kernel("twice")(a);
    EXPECT_EQ(view.to_vector<float>(), (std::vector<float>{8, 10, 12}));
    EXPECT_EQ(deleted, 0);
  }
  EXPECT_EQ(deleted, 1);
}

TEST(DLPack, RefusedTensorsAreReturnedToo) {
  int deleted = 0;
  EXPECT_THROW(from_dlpack(make_foreign(&deleted, {1, 2})), TypeError);  // column-major
  EXPECT_EQ(deleted, 1);
  EXPECT_NO_THROW(from_dlpack(make_foreign(&deleted, {3, 1})));  // row-major strides are fine
  EXPECT_EQ(deleted, 2);
}

}  // namespace
}  // namespace tack
