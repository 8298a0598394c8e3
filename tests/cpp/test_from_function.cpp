// Module::from_function: one definition out of a larger file, its free names answered by the host
// (as the Python package does with a function's globals).
#include "test_support.hpp"

namespace tack {
namespace {

ExternalName resolve(const std::string& name) {
  ExternalName n;
  if (name == "tack") n.kind = ExternalName::Kind::TackModule;
  if (name == "SCALE") {
    n.kind = ExternalName::Kind::Constant;
    n.is_float = true;
    n.float_value = 2.5;
  }
  if (name == "OFFSET") {
    n.kind = ExternalName::Kind::Constant;
    n.int_value = 3;
    n.dtype = "i64";
  }
  if (name == "captured") n.kind = ExternalName::Kind::HostValue;
  if (name == "np") {
    n.kind = ExternalName::Kind::ForeignModule;
    n.member = "numpy";
  }
  return n;
}

// As inspect.getsource gives a method: indented, starting at line 40 of the user's file.
const char* const kIndented =
    "    @tack.kernel\n"
    "    def scale(x, out):\n"
    "        for i in range(x.shape[0]):\n"
    "            out[i] = x[i] * SCALE + OFFSET\n";

TEST(FromFunction, ResolvesConstantsThroughTheHost) {
  Module m = Module::from_function(kIndented, "user.py", 40, resolve);
  Array x = arange(4), out = empty({4});
  m.kernel("scale")(x, out);
  EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{3.0f, 5.5f, 8.0f, 10.5f}));
}

TEST(FromFunction, ErrorsPointIntoTheUsersFile) {
  std::string src =
      "    @tack.kernel\n"
      "    def bad(x):\n"
      "        for i in range(x.shape[0]):\n"
      "            x[i] = captured\n";
  Module m = Module::from_function(src, "user.py", 40, resolve);
  Array x = empty({4});
  try {
    m.kernel("bad")(x);
    FAIL();
  } catch (const CompileError& e) {
    EXPECT_EQ(e.file(), "user.py");
    EXPECT_EQ(e.line(), 43);
    EXPECT_EQ(e.col(), 20);  // the column in the user's (indented) file
    EXPECT_NE(std::string(e.what()).find("\n" + std::string(4 + 19, ' ') + "^"), std::string::npos)
        << e.what();
    EXPECT_NE(e.message().find("'captured' is a module-level host value"), std::string::npos);
  }
}

TEST(FromFunction, SyntaxErrorsToo) {
  try {
    Module::from_function("def k(x):\n    for i in range(4)\n        x[i] = 1\n", "user.py", 10,
                          resolve);
    FAIL();
  } catch (const CompileError& e) {
    EXPECT_EQ(e.line(), 11);
  }
}

TEST(FromFunction, ForeignModulesAreNamed) {
  std::string src =
      "@tack.kernel\ndef k(x):\n    for i in range(x.shape[0]):\n        x[i] = np.cos(x[i])\n";
  Module m = Module::from_function(src, "user.py", 1, resolve);
  Array x = empty({4});
  try {
    m.kernel("k")(x);
    FAIL();
  } catch (const CompileError& e) {
    EXPECT_NE(e.message().find("module 'numpy' cannot be used"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tack
