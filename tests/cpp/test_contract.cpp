// Every rejection of the kernel contract: the error's kind, kernel, line, column, message and fix.
#include "test_support.hpp"

namespace tack {
namespace {

struct Case {
  const char* name;
  const char* source;  // a whole kernels file; the kernel is `k`
  const char* args;
  int line, col;
  const char* message;  // a part of the message
  const char* hint;     // a part of the hint
};

const char* const kHeader =
    "import tack\nimport math\nimport numpy as np\nN = 64\nC = tack.constant(2.5)\n";

// Line numbers below count from the first line of each source, after the 5-line header.
const Case kCases[] = {
    {"no parallel loop", "@tack.kernel\ndef k(x):\n    y = 1\n", "f32[]", 7, 1,
     "has no parallel loop", "for _ in range(1)"},
    {"two parallel loops",
     "@tack.kernel\ndef k(x):\n    for i in range(4):\n        x[i] = 1\n    for j in range(4):\n"
     "        x[j] = 2\n",
     "f32[]", 10, 5, "exactly one parallel loop; the first is at line 8", "second kernel"},
    {"loop inside if",
     "@tack.kernel\ndef k(x):\n    if 1 > 0:\n        for i in range(4):\n            x[i] = 1\n",
     "f32[]", 8, 5, "directly in the kernel's body", "top level"},
    {"store before the loop",
     "@tack.kernel\ndef k(x):\n    x[0] = 1\n    for i in range(4):\n        x[i] = 2\n", "f32[]",
     8, 5, "stores are only allowed inside the parallel loop", "into the loop"},
    {"if before the loop",
     "@tack.kernel\ndef k(x):\n    if 1 > 0:\n        y = 1\n    for i in range(4):\n        x[i] "
     "= 2\n",
     "f32[]", 8, 5, "may only assign local names", "inside the loop"},
    {"statement after the loop",
     "@tack.kernel\ndef k(x):\n    for i in range(4):\n        x[i] = 2\n    y = 3\n", "f32[]", 10,
     5, "only `return expr` may follow", "inside the loop"},
    {"return without a type",
     "@tack.kernel\ndef k(x):\n    for i in range(4):\n        x[i] = 2\n    return x[0]\n",
     "f32[]", 10, 5, "must declare its type", "-> tack.f32"},
    {"return inside the loop", "@tack.kernel\ndef k(x):\n    for i in range(4):\n        return\n",
     "f32[]", 9, 9, "only allowed after the parallel loop", "if/else"},
    {"captured host value", "@tack.kernel\ndef k(x):\n    for i in range(4):\n        x[i] = N\n",
     "f32[]", 9, 16, "module-level host value", "tack.constant"},
    {"undefined name", "@tack.kernel\ndef k(x):\n    for i in range(4):\n        x[i] = scale\n",
     "f32[]", 9, 16, "name 'scale' is not defined", "tack.constant"},
    {"numpy in a kernel",
     "@tack.kernel\ndef k(x):\n    for i in range(4):\n        x[i] = np.sin(x[i])\n", "f32[]", 9,
     16, "module 'numpy' cannot be used", "math"},
    {"bounds from array data",
     "@tack.kernel\ndef k(x):\n    for i in range(int(x[0])):\n        x[i] = 1\n", "f32[]", 8, 20,
     "must be computable before the loop runs", "shape"},
    {"zero step", "@tack.kernel\ndef k(x):\n    for i in range(0, 8, 0):\n        x[i] = 1\n",
     "f32[]", 8, 26, "step must be positive", "iterate upwards"},
    {"negative step", "@tack.kernel\ndef k(x):\n    for i in range(8, 0, -1):\n        x[i] = 1\n",
     "f32[]", 8, 26, "step must be positive", "iterate upwards"},
    {"break in the parallel loop",
     "@tack.kernel\ndef k(x):\n    for i in range(4):\n        break\n", "f32[]", 9, 9,
     "`break` directly in the parallel loop", "use `continue`"},
    {"assign to an argument", "@tack.kernel\ndef k(a, x):\n    for i in range(4):\n        a = 2\n",
     "f32,f32[]", 9, 9, "cannot assign to the argument 'a'", "new local"},
    {"assign to a constant", "@tack.kernel\ndef k(x):\n    for i in range(4):\n        C = 2\n",
     "f32[]", 9, 9, "cannot assign to the constant 'C'", "new local"},
    {"workgroup primitive on the CPU",
     "@tack.kernel\ndef k(x):\n    for i in range(4):\n        if False:\n            "
     "tack.barrier()\n",
     "f32[]", 10, 13, "the CPU has no workgroups, so this kernel cannot use tack.barrier",
     "local_array"},
    {"float index", "@tack.kernel\ndef k(x):\n    for i in range(4):\n        x[i * 0.5] = 1\n",
     "f32[]", 9, 11, "must be an integer", "int("},
    {"float stored into an int array",
     "@tack.kernel\ndef k(x, y):\n    for i in range(4):\n        y[i] = x[i]\n", "f32[],i32[]", 9,
     9, "cannot store f32 into array 'y' of dtype i32", "tack.i32"},
    {"literal out of the array's range",
     "@tack.kernel\ndef k(y):\n    for i in range(4):\n        y[i] = 300\n", "u8[]", 9, 9,
     "does not fit the dtype u8", "cast"},
    {"negative integer exponent",
     "@tack.kernel\ndef k(a, y):\n    for i in range(4):\n        y[i] = a ** -1\n", "i32,i32[]", 9,
     16, "negative integer exponent", "2.0 ** -1"},
    {"signed with u64",
     "@tack.kernel\ndef k(a, b, y):\n    for i in range(4):\n        y[i] = a + b\n",
     "i32,u64,i64[]", 9, 16, "no common type", "cast"},
    {"bitwise on floats",
     "@tack.kernel\ndef k(x):\n    for i in range(4):\n        x[i] = x[i] & 1\n", "f32[]", 9, 16,
     "needs integers or bools, not floats", "int("},
    {"matrix product",
     "@tack.kernel\ndef k(x):\n    for i in range(4):\n        x[i] = x[i] @ x[i]\n", "f32[]", 9,
     16, "@ operator", "*"},
    {"unknown builtin",
     "@tack.kernel\ndef k(x):\n    for i in range(4):\n        x[i] = tack.frobnicate(x[i])\n",
     "f32[]", 9, 16, "'frobnicate' is not a function", "math builtins"},
    {"range outside a for",
     "@tack.kernel\ndef k(x):\n    for i in range(4):\n        x[i] = range(3)\n", "f32[]", 9, 16,
     "only allowed as the iterable", "for i in range"},
    {"tack.constant inside a kernel",
     "@tack.kernel\ndef k(x):\n    for i in range(4):\n        x[i] = tack.constant(1)\n", "f32[]",
     9, 16, "declared at module level", "tack.constant(value)"},
    {"expression statement", "@tack.kernel\ndef k(x):\n    for i in range(4):\n        x[i] + 1\n",
     "f32[]", 9, 9, "has no effect", "assign"},
    {"use before assignment", "@tack.kernel\ndef k(x):\n    for i in range(4):\n        s += 1\n",
     "f32[]", 9, 9, "used before it is assigned", "s = 0"},
    {"narrowing a local",
     "@tack.kernel\ndef k(x):\n    for i in range(4):\n        s = 0\n        s = i\n", "f32[]", 10,
     9, "cannot assign i64 to 's', a local of type i32", "tack.i32"},
    {"tuple as a value", "@tack.kernel\ndef k(x):\n    for i in range(4):\n        x[i] = (1, 2)\n",
     "f32[]", 9, 16, "tuple is only allowed", "a, b = x, y"},
    {"unpacking mismatch",
     "@tack.kernel\ndef k(x):\n    for i in range(4):\n        a, b = 1, 2, 3\n", "f32[]", 9, 9,
     "cannot unpack", "as many values"},
    {"loop variable reuse", "@tack.kernel\ndef k(x):\n    for x in range(4):\n        y = 1\n",
     "f32[]", 8, 9, "already bound", "fresh name"},
    {"ndrange arity",
     "@tack.kernel\ndef k(x):\n    for i in tack.ndrange(4, 4):\n        x[i] = 1\n", "f32[]", 8, 9,
     "1 variable for 2 dimensions", "for i, j in"},
    {"not range", "@tack.kernel\ndef k(x):\n    for i in x:\n        x[i] = 1\n", "f32[]", 8, 14,
     "must iterate over range", "tack.ndrange"},
    {"kernel called from a kernel",
     "@tack.kernel\ndef g(x):\n    for i in range(1):\n        x[i] = 1\n@tack.kernel\ndef k(x):\n "
     "   for i in range(1):\n        g(x)\n",
     "f32[]", 13, 9, "cannot be called from a kernel", "@tack.func"},
    {"a texture made in a kernel",
     "@tack.kernel\ndef k(x):\n    for i in range(4):\n        v = tack.texture3d(x)\n", "f32[]", 9,
     13, "makes a texture on the host", "pass it as an argument"},
};

// Test names and failure messages show the case's name rather than its bytes.
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

class ContractTest : public testing::TestWithParam<Case> {};

TEST_P(ContractTest, RejectsWithPositionMessageAndHint) {
  const Case& c = GetParam();
  std::string src = std::string(kHeader) + c.source;
  CompileError e = test::compile_error(src, c.args);
  EXPECT_EQ(e.kernel(), "k") << e.what();
  EXPECT_EQ(e.file(), "test.py");
  EXPECT_EQ(e.line(), c.line) << e.what();
  EXPECT_EQ(e.col(), c.col) << e.what();
  EXPECT_NE(e.message().find(c.message), std::string::npos) << e.what();
  EXPECT_NE(e.hint().find(c.hint), std::string::npos) << e.what();
  // The report shows the position, the source line and a caret under the column.
  std::string what = e.what();
  EXPECT_NE(what.find("test.py:" + std::to_string(c.line) + ":" + std::to_string(c.col)),
            std::string::npos);
  EXPECT_NE(what.find("\n    " + std::string(c.col - 1, ' ') + "^"), std::string::npos) << what;
}

INSTANTIATE_TEST_SUITE_P(Contract, ContractTest, testing::ValuesIn(kCases),
                         [](const testing::TestParamInfo<Case>& info) {
                           std::string n = info.param.name;
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

// An array where the kernel uses a scalar, and a scalar where it uses an array, are argument
// mismatches too (docs/language.md, "Errors"): TypeErrors naming the argument and the position.
TEST(ContractArguments, ArgumentKindMismatchesAreTypeErrors) {
  struct KindCase {
    const char* body;
    const char* args;
    const char* where;
    const char* message;
  };
  const KindCase cases[] = {
      {"    for i in range(4):\n        y[i] = x\n", "f32[],f32[]", "test.py:5:16",
       "argument 'x' is an array but is used as a scalar value"},
      {"    for i in range(x):\n        y[i] = 1\n", "f32[],f32[]", "test.py:4:20",
       "argument 'x' is an array but is used as a scalar value"},
      {"    for i in range(x.shape[0]):\n        y[i] = 1\n", "i32,f32[]", "test.py:4:20",
       "argument 'x' is a scalar but its shape is read"},
      {"    for i in range(len(x)):\n        y[i] = 1\n", "i32,f32[]", "test.py:4:24",
       "argument 'x' is a scalar but len() of it is taken"},
  };
  for (const KindCase& c : cases) {
    std::string src = std::string("import tack\n@tack.kernel\ndef k(x, y):\n") + c.body;
    try {
      test::specialize(src, c.args);
      ADD_FAILURE() << "accepted: " << c.body;
    } catch (const TypeError& e) {
      std::string w = e.what();
      EXPECT_NE(w.find(c.where), std::string::npos) << w;
      EXPECT_NE(w.find("in kernel 'k'"), std::string::npos) << w;
      EXPECT_NE(w.find(c.message), std::string::npos) << w;
    }
  }
  // A local array used as a value is a mistake in the kernel itself: still a CompileError.
  CompileError e = test::compile_error(
      "import tack\n@tack.kernel\ndef k(y):\n    buf = tack.local_array(tack.f32, 4)\n"
      "    for i in range(4):\n        y[i] = buf\n",
      "f32[]");
  EXPECT_NE(e.message().find("array 'buf' is used as a value"), std::string::npos) << e.what();
}

// Argument mismatches are TypeErrors at the call, naming the argument.
TEST(ContractArguments, WrongIndexCountNamesTheArgument) {
  std::string src =
      "import tack\n@tack.kernel\ndef k(img):\n    for i in range(4):\n        img[i] = 1\n";
  try {
    test::specialize(src, "f32[,]");
    FAIL();
  } catch (const TypeError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "array argument 'img' has 2 dimensions but is indexed with 1 index"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("test.py:5:9"), std::string::npos) << e.what();
  }
}

TEST(ContractArguments, WrongArgumentCount) {
  std::string src =
      "import tack\n@tack.kernel\ndef k(x, y):\n    for i in range(4):\n        y[i] = x[i]\n";
  try {
    test::specialize(src, "f32[]");
    FAIL();
  } catch (const TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("takes 2 arguments (x, y), but 1 was given"),
              std::string::npos)
        << e.what();
  }
}

TEST(ContractArguments, ScalarIndexedLikeAnArray) {
  std::string src =
      "import tack\n@tack.kernel\ndef k(x, y):\n    for i in range(4):\n        y[i] = x[i]\n";
  EXPECT_THROW(test::specialize(src, "f32,f32[]"), TypeError);
}

// Launch-time rejections: nothing runs and nothing is written.
TEST(ContractLaunch, ReadOnlyOutputRefusedBeforeLaunch) {
  Module m = Module::from_source(
      "import tack\n@tack.kernel\ndef fill(x):\n    for i in range(x.shape[0]):\n        x[i] = "
      "7\n");
  std::vector<float> host(16, 1.0f);
  Array ro = array_from_ptr(host.data(), {16}, f32, nullptr, /*writable=*/false);
  try {
    m.kernel("fill")(ro);
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("writes to 'x', but that array is read-only"),
              std::string::npos);
  }
  for (float v : host) EXPECT_EQ(v, 1.0f);
}

TEST(ContractLaunch, NonPositiveRuntimeStepRefused) {
  Module m = Module::from_source(
      "import tack\n@tack.kernel\ndef k(s, x):\n    for i in range(0, x.shape[0], s):\n        "
      "x[i] = 7\n");
  Array x = zeros({8});
  EXPECT_THROW(m.kernel("k")(0, x), ValueError);
  EXPECT_THROW(m.kernel("k")(-2, x), ValueError);
  EXPECT_EQ(x.sum(), 0.0);
  m.kernel("k")(3, x);
  EXPECT_EQ(x.sum(), 21.0);  // indices 0, 3, 6
}

TEST(ContractLaunch, MissingKernelNamesTheOnesThatExist) {
  Module m = Module::from_source(
      "import tack\n@tack.kernel\ndef a(x):\n    for i in range(1):\n        x[i] = 1\n", "f.py");
  try {
    m.kernel("b");
    FAIL();
  } catch (const TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("f.py has no kernel named 'b' (its kernels: a)"),
              std::string::npos);
  }
}

TEST(ContractModule, MalformedConstantIsAModuleError) {
  try {
    Module::from_source("import tack\nK = tack.constant(x + 1)\n", "m.py");
    FAIL();
  } catch (const CompileError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.col(), 19);
    EXPECT_NE(e.message().find("'x' is not a constant declared above"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tack
