// The Metal Shading Language generator: every kernel checked by clang++ -fsyntax-only as C++17
// with tests/msl_shim.h standing in for Metal's headers (Metal's own compiler runs on Apple
// platforms only), and what Metal refuses.
#include <fmt/format.h>

#include <functional>

#include "c_generators/support.hpp"
#include "codegen/c_family/c_generator.hpp"
#include "test_support.hpp"

namespace tack {
namespace cgen_test {

void compile_metal(const std::string& source, const std::string& name) {
  std::string clang = find_program({"clang++-19", "clang++-18", "clang++-17", "clang++-16",
                                    "clang++-15", "clang++-14", "clang++"});
  if (clang.empty()) GTEST_SKIP() << "clang++ not found for the Metal syntax check";
  // The generated code includes <metal_stdlib>: an empty stand-in, the shim does the rest.
  fs::path include = scratch() / "msl_include";
  fs::create_directories(include);
  write_text(include / "metal_stdlib", "");
  fs::path file = scratch() / (name + ".metal");
  write_text(file, source);
  Output out = run(fmt::format(
      "{} -fsyntax-only -std=c++17 -include {} -I {} -x c++ -Wno-unknown-attributes {}",
      quote(clang), quote(TACK_MSL_SHIM), quote(include.string()), quote(file.string())));
  EXPECT_EQ(out.status, 0) << "the generated MSL does not compile as C++17 with the shim:\n"
                           << out.text << "\n"
                           << numbered(source);
}

}  // namespace cgen_test

namespace {

using namespace cgen_test;

bool has_atomic_beyond_metal(const ir::Kernel& k) {
  std::function<bool(const ir::Expr&)> in_expr = [&](const ir::Expr& e) {
    if (e.op == ir::Op::Atomic) {
      DType t = k.params[e.index].type.dtype;
      if (t != i32 && t != u32 && t != f32) return true;
    }
    for (const auto& o : e.operands)
      if (in_expr(*o)) return true;
    return false;
  };
  std::function<bool(const ir::Block&)> in_block = [&](const ir::Block& b) {
    for (const auto& s : b) {
      for (const ir::Expr* e : {s->value.get(), s->cond.get()})
        if (e && in_expr(*e)) return true;
      if (in_block(s->body) || in_block(s->orelse)) return true;
    }
    return false;
  };
  return in_block(k.body);
}

TEST_P(Compile, MetalShim) {
  const Variant& v = GetParam();
  ir::Kernel k = specialize(v);
  if (codegen::uses_dtype(k, f64, /*in_print=*/false) || has_atomic_beyond_metal(k)) {
    // Metal has no f64: the generator refuses, naming Metal.
    try {
      codegen::generate_source(k, "metal", v.kernel);
      FAIL() << "an f64 kernel or a 64-bit atomic was generated for Metal";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("Metal"), std::string::npos) << e.what();
    }
    return;
  }
  compile_metal(codegen::generate_source(k, "metal", v.kernel), v.name);
}

TEST(CGenerators, MetalRefusesF64) {
  try {
    source_of(kSaxpy, "f64,f64[],f64[],f64[]", "metal");
    FAIL() << "an f64 kernel was generated for Metal";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("Metal"), std::string::npos) << what;
    EXPECT_NE(what.find("f64"), std::string::npos) << what;
  }
  // f64 is fine elsewhere.
  for (const char* target : {"cuda", "hip", "opencl"})
    EXPECT_NO_THROW(source_of(kSaxpy, "f64,f64[],f64[],f64[]", target));
}

// A kernel that returns a value gets a second entry, <entry>_result, with the main entry's

}  // namespace
}  // namespace tack
