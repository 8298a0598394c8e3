// The IR verifier, the printer, the debug pass and the CPU code generator.
#include <cstdlib>

#include "ir/builder.hpp"
#include "ir/passes.hpp"
#include "ir/printer.hpp"
#include "ir/verifier.hpp"
#include "test_support.hpp"

namespace tack {
namespace {

const char* const kSaxpy =
    "import tack\n@tack.kernel\ndef k(a, x, y, out):\n    for i in range(x.shape[0]):\n"
    "        out[i] = a * x[i] + y[i]\n";

TEST(Printer, ShowsTypesParametersAndTheLoop) {
  ir::Kernel k = test::specialize(kSaxpy, "f32,f32[],f32[],f32[]");
  std::string text = ir::print(k);
  EXPECT_NE(text.find("kernel k(a: f32, x: f32[], y: f32[], out: f32[] out)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("parallel for %i in range(0:i64, x.shape[0], 1:i64)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("out[%i] = (add:f32 (mul:f32 $a x[%i]) y[%i])"), std::string::npos) << text;
}

TEST(Verifier, AcceptsWhatSemaProducesAndRejectsBrokenIR) {
  ir::Kernel k = test::specialize(kSaxpy, "f32,f32[],f32[],f32[]");
  EXPECT_NO_THROW(ir::verify(k, "test"));

  ir::Kernel bad = test::specialize(kSaxpy, "f32,f32[],f32[],f32[]");
  // A store whose value has the wrong type.
  bad.body[0]->value = ir::make_int(ir::Type::scalar(i32), 1);
  try {
    ir::verify(bad, "a broken pass");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("after a broken pass"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("stored value type differs"), std::string::npos)
        << e.what();
  }

  ir::Kernel bad2 = test::specialize(kSaxpy, "f32,f32[],f32[],f32[]");
  bad2.params[3].written = false;  // a store to an array not marked written
  EXPECT_THROW(ir::verify(bad2, "test"), Error);

  ir::Kernel bad3 = test::specialize(kSaxpy, "f32,f32[],f32[],f32[]");
  bad3.body.push_back(std::make_unique<ir::Stmt>(ir::Stmt::Kind::Break, SourceLoc{}));
  EXPECT_THROW(ir::verify(bad3, "test"), Error);  // break outside a sequential loop

  ir::Kernel bad4 = test::specialize(kSaxpy, "f32,f32[],f32[],f32[]");
  bad4.dims[0].stop = ir::make_load(1, f32, {}, {});  // a bound the host cannot compute
  EXPECT_THROW(ir::verify(bad4, "test"), Error);
}

TEST(Passes, BoundsChecksMarkEveryAccess) {
  ir::Kernel k = test::specialize(kSaxpy, "f32,f32[],f32[],f32[]");
  ir::insert_bounds_checks(k);
  ir::verify(k, "bounds checks");
  std::string text = ir::print(k, {.locations = true});
  EXPECT_NE(text.find("out[%i]!5:9"), std::string::npos) << text;
  EXPECT_NE(text.find("x[%i]!5:22"), std::string::npos) << text;
  EXPECT_NE(text.find(" debug"), std::string::npos);
}

TEST(Passes, ConstantFoldingWrapsAtTheTypesWidth) {
  ir::Kernel k = test::specialize(
      "import tack\n@tack.kernel\ndef k(x):\n    for i in range(1):\n        x[i] = tack.u8(200) + "
      "tack.u8(100)\n",
      "u8[]");
  std::string text = ir::print(k);
  EXPECT_NE(text.find("x[%i] = 44:u8"), std::string::npos) << text;
}

TEST(HostEval, IterationCountsComeFromTheLaunch) {
  ir::Kernel k = test::specialize(
      "import tack\n@tack.kernel\ndef k(n, x):\n    m = n // 2 - 1\n    for i in range(m * 3):\n   "
      "     x[i] = 1\n",
      "i32,f32[]");
  ir::HostValues v{[](int) -> uint64_t { return 9; }, [](int, int) -> int64_t { return 0; }};
  EXPECT_EQ(ir::eval_host(*k.dims[0].stop, v), (9 / 2 - 1) * 3);
  ir::HostValues neg{[](int) -> uint64_t { return static_cast<uint64_t>(-7); },
                     [](int, int) -> int64_t { return 0; }};
  EXPECT_EQ(ir::eval_host(*k.dims[0].stop, neg), (-4 - 1) * 3);  // floor division
}

// The requirement: the generated loop vectorizes. The optimized LLVM IR of saxpy must hold
// vector loads, multiplies, adds and stores.
TEST(CpuCodegen, SaxpyVectorizes) {
  Module m = Module::from_source(kSaxpy);
  Array x = empty({0}), y = empty({0}), out = empty({0});
  std::string ir = inspect(m.kernel("k"), InspectMode::Optimized, 2.0f, x, y, out);
  EXPECT_NE(ir.find("load <"), std::string::npos) << ir;
  EXPECT_NE(ir.find("fmul <"), std::string::npos) << ir;
  EXPECT_NE(ir.find("fadd <"), std::string::npos) << ir;
  EXPECT_NE(ir.find("store <"), std::string::npos) << ir;
  // No fast math: neither reassociation flags nor contraction into FMAs.
  EXPECT_EQ(ir.find("fast"), std::string::npos);
  EXPECT_EQ(ir.find("reassoc"), std::string::npos);
  EXPECT_EQ(ir.find("llvm.fma"), std::string::npos);
  EXPECT_EQ(ir.find("fmuladd"), std::string::npos);
}

// The generated IR names the path its chunk took; the scalar one (TACK_CPU_SIMD=0) is plain scalar
// code that LLVM's vectorizer works on, the widened one vector code from the start.
TEST(CpuCodegen, GeneratedIRNamesItsPath) {
  Module m = Module::from_source(kSaxpy);
  Array x = empty({0});
  std::string ir = inspect(m.kernel("k"), InspectMode::Source, 2.0f, x, x, x);
  EXPECT_NE(ir.find("define void @tack_"), std::string::npos) << ir;
  EXPECT_NE(ir.find("_chunk(ptr noalias readonly"), std::string::npos) << ir;
  const char* simd = std::getenv("TACK_CPU_SIMD");
  if (simd && std::string(simd) == "0") {
    EXPECT_EQ(ir.rfind("; tack cpu chunk: scalar", 0), 0u) << ir;
    EXPECT_EQ(ir.find("x float>"), std::string::npos);
  } else {
    EXPECT_EQ(ir.rfind("; tack cpu chunk: widened", 0), 0u) << ir;
    EXPECT_NE(ir.find("x float>"), std::string::npos);
  }
}

TEST(CpuCodegen, StencilInnerLoopVectorizes) {
  Module m = Module::from_file(std::string(TACK_TEST_KERNELS_DIR) + "/../../examples/kernels.py");
  Array u = empty({0, 0}), out = empty({0, 0});
  std::string ir = inspect(m.kernel("stencil5"), InspectMode::Optimized, u, out);
  EXPECT_NE(ir.find("fadd <"), std::string::npos) << ir;
}

}  // namespace
}  // namespace tack
