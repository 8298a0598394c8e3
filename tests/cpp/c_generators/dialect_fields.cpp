// Compiled, never linked, by two tests (tests/CMakeLists.txt): with every spelling it compiles;
// with one left out (FORGET_ONE) it must not, since the fields of a C-family dialect table have no
// defaults (src/codegen/c_family/c_dialect.hpp).
#include "codegen/c_family/c_dialect.hpp"

using namespace tack::codegen;

constexpr TypeNames kNames = {.bool_ = "t0",
                              .i8 = "t1",
                              .u8 = "t2",
                              .i16 = "t3",
                              .u16 = "t4",
                              .i32 = "t5",
                              .u32 = "t6",
                              .i64 = "t7",
                              .u64 = "t8",
                              .f32 = "t9",
#ifndef FORGET_ONE
                              .f64 = "t10"
#endif
};

int main() {
  return kNames.f32.value.empty() ? 1 : 0;
}
