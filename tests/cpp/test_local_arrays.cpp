// tack.local_array and tack.local_array_like on the CPU.
#include "test_support.hpp"

namespace tack {
namespace {

Module locals() {
  return Module::from_file(test::kernels_dir() + "/local_arrays.py");
}

TEST(LocalArrays, StackInAFunctionAndFreshPerIteration) {
  std::vector<int32_t> hx = {0, 7, 123, 4560, 98765, 12345678, 5, 90};
  Array x = empty({8}, i32), out = empty({8}, i64);
  copyto(x, hx);
  locals().kernel("digits_reversed")(x, out);
  auto r = out.to_vector<int64_t>();
  for (size_t i = 0; i < hx.size(); ++i) {
    // Digits least significant first into 8 slots (the rest zero), read back as a number.
    int32_t n = hx[i];
    int digits[8] = {};
    for (int top = 0; n > 0 && top < 8; ++top, n /= 10) digits[top] = n % 10;
    int64_t want = 0;
    for (int d : digits) want = want * 10 + d;
    EXPECT_EQ(r[i], want) << hx[i];
  }
}

TEST(LocalArrays, LikeAnArgumentsDtype) {
  std::vector<double> hx = {1, 5, 2, 8, 3, 0, 0, 9};
  Array x = empty({8}, f64), out = empty({8}, f64);
  copyto(x, hx);
  locals().kernel("running_max")(x, out);
  auto r = out.to_vector<double>();
  for (int i = 0; i < 8; ++i) {
    double m = hx[i];
    for (int k = 1; k < 4; ++k) m = std::max(m, i - k >= 0 ? hx[i - k] : 0.0);
    EXPECT_EQ(r[i], m) << i;
  }
}

TEST(LocalArrays, DebugModeReportsTheLocalArray) {
  Array out = zeros({6});
  set_debug(true);
  try {
    locals().kernel("overflow")(out);
    sync();  // where an asynchronous backend raises it
    set_debug(false);
    FAIL();
  } catch (const IndexError& e) {
    set_debug(false);
    EXPECT_NE(std::string(e.what()).find("out of bounds for array 'buf' of shape (4,)"),
              std::string::npos)
        << e.what();
  }
}

TEST(LocalArrays, Rejections) {
  auto err = [](const std::string& body) {
    return test::compile_error(
        "import tack\n@tack.kernel\ndef k(n, x):\n    for i in range(4):\n        " + body + "\n",
        "i32,f32[]");
  };
  EXPECT_NE(err("b = tack.local_array(tack.f32, n)").message().find("positive constant"),
            std::string::npos);
  EXPECT_NE(err("b = tack.local_array(3, 4)").message().find("is a dtype"), std::string::npos);
  EXPECT_NE(err("b = tack.local_array(tack.f64, 1000000)").message().find("at most 1048576 bytes"),
            std::string::npos);
  EXPECT_NE(err("x = tack.local_array(tack.f32, 4)").message().find("already bound"),
            std::string::npos);
}

}  // namespace
}  // namespace tack
