// Shapes whose element or byte counts do not fit in 64 bits are refused where an array is made
// (creation, reshape, array_from_ptr, DLPack import), with a ValueError naming the shape, instead
// of wrapping to a small size that a kernel would then overrun.
#include <dlpack/dlpack.h>

#include "tack/dlpack.hpp"
#include "test_support.hpp"

namespace tack {
namespace {

template <typename F>
std::string value_error(F&& f) {
  try {
    f();
  } catch (const ValueError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(ArrayLimits, CreationRefusesCountsThatWrap) {
  std::string w = value_error([] { empty({int64_t{1} << 32, int64_t{1} << 32}); });
  EXPECT_TRUE(contains(w, "(4294967296, 4294967296)")) << w;
  // 2^62 f32 elements: the element count fits, the byte count does not.
  w = value_error([] { empty({int64_t{1} << 62}, DType::F32); });
  EXPECT_TRUE(contains(w, "(4611686018427387904,)")) << w;
  EXPECT_TRUE(contains(w, "4-byte elements")) << w;
  w = value_error([] { zeros({3, int64_t{1} << 31, int64_t{1} << 31}, DType::U8); });
  EXPECT_TRUE(contains(w, "too large")) << w;
  // The largest shapes that do fit are not refused for their size (a zero dimension).
  EXPECT_EQ(empty({0, int64_t{1} << 62}, DType::F64).size(), 0);
  EXPECT_EQ(empty({0, int64_t{1} << 62}, DType::F64).nbytes(), 0);
}

TEST(ArrayLimits, ReshapeRefusesCountsThatWrap) {
  Array z = zeros({0});
  std::string w = value_error([&] { (void)z.reshape({int64_t{1} << 32, int64_t{1} << 32}); });
  EXPECT_TRUE(contains(w, "(4294967296, 4294967296)")) << w;
  w = value_error([&] { (void)z.reshape({-1, int64_t{1} << 32, int64_t{1} << 32}); });
  EXPECT_TRUE(contains(w, "(-1, 4294967296, 4294967296)")) << w;
  EXPECT_EQ(z.reshape({0, int64_t{1} << 40}).size(), 0);
}

TEST(ArrayLimits, ArrayFromPtrRefusesCountsThatWrap) {
  float one = 1;
  std::string w = value_error([&] { array_from_ptr(&one, {int64_t{1} << 62}, DType::F32); });
  EXPECT_TRUE(contains(w, "(4611686018427387904,)")) << w;
  w = value_error([&] { array_from_ptr(&one, {1, 1, 1, 1, 1, 1, 1, 1, 1}, DType::F32); });
  EXPECT_TRUE(contains(w, "at most 8 dimensions")) << w;
}

TEST(ArrayLimits, DlpackImportRefusesCountsThatWrapAndReturnsTheTensor) {
  struct Held {
    float value = 1;
    int64_t shape[2] = {int64_t{1} << 32, int64_t{1} << 32};
    int64_t strides[2] = {int64_t{1} << 32, 1};
    DLManagedTensor tensor{};
    int deleted = 0;
  } held;
  DLTensor& t = held.tensor.dl_tensor;
  t.data = &held.value;
  t.device = {kDLCPU, 0};
  t.ndim = 2;
  t.dtype = {kDLFloat, 32, 1};
  t.shape = held.shape;
  t.strides = held.strides;
  held.tensor.manager_ctx = &held;
  held.tensor.deleter = [](DLManagedTensor* self) {
    ++static_cast<Held*>(self->manager_ctx)->deleted;
  };
  std::string w = value_error([&] { from_dlpack(&held.tensor); });
  EXPECT_TRUE(contains(w, "(4294967296, 4294967296)")) << w;
  EXPECT_EQ(held.deleted, 1);
}

}  // namespace
}  // namespace tack
