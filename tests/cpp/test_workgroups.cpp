// The workgroup model in the language: the CPU's rejection of every workgroup primitive, the
// uniformity analysis of the workgroup contract (each rejected case names its line and column,
// and the accepted ones compile), the kernel flags that launches use, and the launch check for
// complete groups. Generated code for workgroups is compiled and run in test_c_generators.cpp.
#include <fmt/format.h>

#include "ir/printer.hpp"
#include "runtime/internals.hpp"
#include "test_support.hpp"

namespace tack {
namespace {

const sema::TargetRules kGpu{"OpenCL", true};

ir::Kernel gpu_kernel(const std::string& src, const std::string& args) {
  auto m = test::resolve(src);
  return sema::specialize(*m, "k", sema::parse_arg_types(args), kGpu);
}

CompileError gpu_error(const std::string& src, const std::string& args) {
  try {
    gpu_kernel(src, args);
  } catch (const CompileError& e) {
    return e;
  }
  ADD_FAILURE() << "expected a CompileError for:\n" << src;
  return CompileError("", "", 0, 0, "", "", "");
}

std::string kernel_with(const std::string& body) {
  return "import tack\n@tack.kernel\ndef k(x, out, n):\n    for i in range(x.shape[0]):\n" + body;
}

TEST(Workgroups, CpuRejectsEveryPrimitiveEvenInDeadCode) {
  std::string src =
      "import tack\n@tack.kernel\ndef k(x, out):\n    tile = tack.shared(tack.f32, 256)\n"
      "    for i in range(x.shape[0]):\n        if False:\n"
      "            out[i] = tack.block_sum(x[i]) + tack.thread_id()\n";
  CompileError e = test::compile_error(src, "f32[],f32[]");
  EXPECT_EQ(e.line(), 4);
  std::string what = e.what();
  for (const char* name : {"tack.shared", "tack.block_sum", "tack.thread_id", "the CPU"})
    EXPECT_NE(what.find(name), std::string::npos) << name << "\n" << what;
  EXPECT_NE(what.find("local_array"), std::string::npos) << what;
}

// A primitive inside a @tack.func the kernel calls counts too, named with the function.
TEST(Workgroups, CpuRejectsPrimitivesInCalledFunctions) {
  std::string src =
      "import tack\n@tack.func\ndef helper(v):\n    return v + tack.group_size()\n\n"
      "@tack.func\ndef outer(v):\n    return helper(v)\n\n@tack.kernel\ndef k(x, out):\n"
      "    for i in range(x.shape[0]):\n        out[i] = outer(x[i])\n";
  CompileError e = test::compile_error(src, "f32[],f32[]");
  EXPECT_EQ(e.line(), 4);
  std::string what = e.what();
  EXPECT_NE(what.find("tack.group_size (in @tack.func 'helper'"), std::string::npos) << what;
  EXPECT_NE(what.find("local_array"), std::string::npos) << what;
}

struct Divergent {
  const char* name;
  const char* body;
  int line, col;
  const char* words;
};

TEST(Workgroups, UniformityAnalysisRejectsDivergentCollectives) {
  const Divergent cases[] = {
      {"lane-dependent if", "        if x[i] > 0.0:\n            tack.barrier()\n", 6, 13,
       "tack.barrier() is under a condition that depends on the lane (line 5)"},
      {"thread id condition",
       "        if tack.thread_id() < 128:\n            out[i] = tack.block_sum(x[i])\n", 6, 22,
       "tack.block_sum() is under a condition that depends on the lane"},
      {"local from the index",
       "        m = i % 2\n        if m == 0:\n            tack.barrier()\n", 7, 13,
       "depends on the lane (line 6)"},
      {"after a lane-dependent break",
       "        for r in range(n):\n            if x[i] > r:\n                break\n"
       "            out[i] = tack.block_max(x[i])\n",
       8, 22, "break, continue or return under a lane-dependent condition (line 7)"},
      {"after a lane-dependent continue",
       "        for r in range(n):\n            if i == r:\n                continue\n"
       "            tack.barrier()\n",
       8, 13, "may leave early for some lanes only"},
      {"lane-dependent loop bounds", "        for r in range(i % 3):\n            tack.barrier()\n",
       6, 13, "in a loop whose bounds depend on the lane (line 5)"},
      {"lane-dependent while",
       "        v = x[i]\n        while v < 10.0:\n            v = v + tack.block_sum(v)\n", 7, 21,
       "in a while loop whose condition depends on the lane"},
      {"conditional expression", "        out[i] = tack.block_sum(x[i]) if n > 0 else 0.0\n", 5, 18,
       "in one arm of a conditional expression"},
      {"second operand of and",
       "        ok = n > 0 and tack.block_max(x[i]) > 0.0\n        out[i] = float(ok)\n", 5, 24,
       "in the second operand of and/or"},
      {"second operand of or",
       "        ok = n > 0 or tack.block_min(x[i]) > 0.0\n        out[i] = float(ok)\n", 5, 23,
       "in the second operand of and/or"},
      {"while condition",
       "        v = x[i]\n        while tack.block_sum(v) < 100.0:\n            v = v + 1.0\n"
       "        out[i] = v\n",
       6, 15, "while condition"},
      {"atomic result",
       "        old = tack.atomic_add(out, 0, 1.0)\n        if old > 3.0:\n"
       "            tack.barrier()\n",
       7, 13, "depends on the lane"},
      {"scan result",
       "        p = tack.block_scan(x[i])\n        if p > 1.0:\n            tack.barrier()\n", 7,
       13, "depends on the lane"},
  };
  for (const Divergent& c : cases) {
    SCOPED_TRACE(c.name);
    CompileError e = gpu_error(kernel_with(c.body), "f32[],f32[],i32");
    EXPECT_EQ(e.line(), c.line) << e.what();
    EXPECT_EQ(e.col(), c.col) << e.what();
    EXPECT_NE(std::string(e.what()).find(c.words), std::string::npos) << e.what();
    EXPECT_EQ(e.kernel(), "k");
  }
}

TEST(Workgroups, DivergenceInsideADeviceFunctionIsFound) {
  std::string src =
      "import tack\n@tack.func\ndef f(v):\n    if v > 0.0:\n        return v\n"
      "    return tack.block_sum(v)\n\n@tack.kernel\ndef k(x, out):\n"
      "    for i in range(x.shape[0]):\n        out[i] = f(x[i])\n";
  CompileError e = gpu_error(src, "f32[],f32[]");
  EXPECT_EQ(e.line(), 6) << e.what();
  EXPECT_NE(std::string(e.what()).find("tack.block_sum()"), std::string::npos) << e.what();
}

TEST(Workgroups, UniformCollectivesAreAccepted) {
  const char* bodies[] = {
      "        if n > 0:\n            tack.barrier()\n",
      "        if tack.group_id() == 0:\n            out[i] = tack.block_sum(x[i])\n",
      "        s = tack.block_sum(x[i])\n        if s > 1.0:\n            out[i] = "
      "tack.block_max(x[i])\n",
      "        for r in range(n):\n            out[i] = tack.block_min(x[i] + r)\n            if n "
      "> 4:\n"
      "                break\n",
      "        v = x[i]\n        if v > 0.0:\n            v = 0.0\n        out[i] = "
      "tack.block_scan(v)\n",
  };
  for (const char* body : bodies) {
    ir::Kernel k = gpu_kernel(kernel_with(body), "f32[],f32[],i32");
    EXPECT_EQ(k.workgroup_size, 256) << body;
    EXPECT_TRUE(k.collectives) << body;
  }
}

TEST(Workgroups, SharedMemoryAndLaneIdsAloneAllowPartialGroups) {
  std::string src =
      "import tack\n@tack.kernel\ndef k(x, out):\n    t = tack.thread_id()\n"
      "    buf = tack.shared_like(x, 256)\n    for i in range(x.shape[0]):\n"
      "        buf[t] = x[i]\n        out[i] = buf[t] + tack.group_size()\n";
  ir::Kernel k = gpu_kernel(src, "f32[],f32[]");
  EXPECT_EQ(k.workgroup_size, 256);
  EXPECT_FALSE(k.collectives);
  std::string ir = ir::print(k);
  EXPECT_NE(ir.find("workgroup 256\n"), std::string::npos) << ir;
  EXPECT_NE(ir.find("shared %buf: f32[256]"), std::string::npos) << ir;
  EXPECT_NO_THROW(detail::check_workgroup_launch(k, {300}, 256));
}

TEST(Workgroups, MisusedPrimitivesAreRejected) {
  struct Case {
    const char* src;
    int line;
    const char* words;
  };
  const Case cases[] = {
      {"import tack\n@tack.kernel\ndef k(x):\n    tack.barrier()\n    for i in range(4):\n"
       "        pass\n",
       4, "before the parallel loop"},
      {"import tack\n@tack.kernel\ndef k(x):\n    for i in range(4):\n"
       "        v = tack.barrier()\n",
       5, "statement"},
      {"import tack\n@tack.kernel\ndef k(x):\n    for i in range(4):\n"
       "        t = tack.shared(tack.f32, 100000)\n",
       5, "bytes of shared memory"},
      {"import tack\n@tack.kernel\ndef k(x):\n    for i in range(4):\n"
       "        t = tack.shared(tack.f32, x.shape[0])\n",
       5, "positive constant"},
      {"import tack\n@tack.kernel\ndef k(x) -> tack.f32:\n    for i in range(4):\n        pass\n"
       "    return tack.block_sum(x[0])\n",
       6, "only allowed inside the parallel loop"},
  };
  for (const Case& c : cases) {
    CompileError e = gpu_error(c.src, "f32[]");
    EXPECT_EQ(e.line(), c.line) << e.what();
    EXPECT_NE(std::string(e.what()).find(c.words), std::string::npos) << e.what();
  }
}

TEST(Workgroups, LaunchesWithCollectivesNeedCompleteGroups) {
  ir::Kernel k =
      gpu_kernel(kernel_with("        out[i] = tack.block_sum(x[i])\n"), "f32[],f32[],i32");
  EXPECT_NO_THROW(detail::check_workgroup_launch(k, {512}, 1024));
  EXPECT_NO_THROW(detail::check_workgroup_launch(k, {16, 16}, 1024));
  EXPECT_NO_THROW(detail::check_workgroup_launch(k, {0}, 1024));
  try {
    detail::check_workgroup_launch(k, {300}, 1024);
    FAIL() << "a partial group was accepted";
  } catch (const ValueError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("kernel 'k'"), std::string::npos) << what;
    EXPECT_NE(what.find("300 iterations"), std::string::npos) << what;
    EXPECT_NE(what.find("multiple of 256"), std::string::npos) << what;
  }
  // A device whose groups are smaller than 256 lanes refuses any workgroup kernel.
  EXPECT_THROW(detail::check_workgroup_launch(k, {512}, 128), ValueError);
  // Kernels without workgroups are not concerned.
  ir::Kernel plain = gpu_kernel(kernel_with("        out[i] = x[i]\n"), "f32[],f32[],i32");
  EXPECT_EQ(plain.workgroup_size, 0);
  EXPECT_NO_THROW(detail::check_workgroup_launch(plain, {300}, 1));
}

}  // namespace
}  // namespace tack
