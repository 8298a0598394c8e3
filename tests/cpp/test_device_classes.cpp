// Device classes (@tack.data_oriented) from C++: a kernels file declares the classes, C++ builds
// objects by class name and passes them to kernels. The cell average of tests/kernels/cells.py
// against plain C++, the variant cache (instance numbers are arguments, class constants are
// compiled in), methods, nesting, inheritance, indexing and iteration, the errors, and the
// generated code of every C-family target, which is the plain-argument kernel's.
#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "codegen/c_family/c_generator.hpp"
#include "runtime/arguments.hpp"
#include "test_support.hpp"

namespace tack {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The mean of `values` over the points of each cell, in the kernel's order (f32, k ascending).
std::vector<float> cell_means(const std::vector<std::vector<int64_t>>& cells,
                              const std::vector<float>& values) {
  std::vector<float> out;
  for (const auto& points : cells) {
    float total = 0.0f;
    for (int64_t p : points) total += values[p];
    out.push_back(total / static_cast<float>(points.size()));
  }
  return out;
}

// The quads of an nx x ny grid of points, x fastest, counter-clockwise.
std::vector<std::vector<int64_t>> grid_quads(int64_t nx, int64_t ny) {
  std::vector<std::vector<int64_t>> cells;
  for (int64_t j = 0; j + 1 < ny; ++j)
    for (int64_t i = 0; i + 1 < nx; ++i)
      cells.push_back({j * nx + i, j * nx + i + 1, (j + 1) * nx + i + 1, (j + 1) * nx + i});
  return cells;
}

std::vector<float> point_values(int64_t n) {
  std::vector<float> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(0.25f * static_cast<float>(i * i % 17) - 1.5f);
  return v;
}

Array connectivity(const std::vector<std::vector<int64_t>>& cells) {
  std::vector<int32_t> flat;
  for (const auto& c : cells)
    for (int64_t p : c) flat.push_back(static_cast<int32_t>(p));
  Array a = empty({static_cast<int64_t>(cells.size()), static_cast<int64_t>(cells[0].size())}, i32);
  copyto(a, flat);
  return a;
}

Module cells_module() {
  return Module::from_file(test::kernels_dir() + "/cells.py");
}

TEST(DeviceClasses, CellAverageOverStructuredAndExplicitCells) {
  Module m = cells_module();
  Kernel average = m.kernel("cell_average");
  const int64_t nx = 7, ny = 5;
  std::vector<float> hv = point_values(nx * ny);
  Array values = empty({nx * ny});
  copyto(values, hv);
  auto quads = grid_quads(nx, ny);
  std::vector<float> expected = cell_means(quads, hv);

  // The structured set computes its connectivity; C++ gives the attributes __init__ would set.
  Object structured = m.object("StructuredCells", {{"nx", nx}, {"num_cells", (nx - 1) * (ny - 1)}});
  Array out = zeros({static_cast<int64_t>(quads.size())});
  average(structured, values, out);
  EXPECT_EQ(out.to_vector<float>(), expected);

  // The explicit set reads the same cells from an array.
  Object explicit_cells = m.object(
      "ExplicitCells",
      {{"connectivity", connectivity(quads)}, {"num_cells", static_cast<int64_t>(quads.size())}});
  Array out2 = zeros({static_cast<int64_t>(quads.size())});
  average(explicit_cells, values, out2);
  EXPECT_EQ(out2.to_vector<float>(), expected);

  // Triangles: the subclass's points_per_cell (3) sizes the local array and the loops.
  std::vector<std::vector<int64_t>> triangles = {{0, 1, 8}, {1, 9, 8}, {5, 6, 12}, {30, 31, 24}};
  Object tris = m.object("ExplicitTriangles", {{"connectivity", connectivity(triangles)},
                                               {"num_cells", static_cast<int64_t>(4)}});
  Array out3 = zeros({4});
  average(tris, values, out3);
  EXPECT_EQ(out3.to_vector<float>(), cell_means(triangles, hv));
}

TEST(DeviceClasses, InstanceNumbersReuseTheVariantClassConstantsCompileANewOne) {
  Module m = cells_module();
  Kernel average = m.kernel("cell_average");
  Array values = empty({64});
  copyto(values, point_values(64));
  Array out = zeros({64});
  auto compiled = [] {
    CacheStats s = cache_stats();
    return s.compiles + s.disk_hits;  // a new variant: compiled now, or loaded from disk
  };
  average(m.object("StructuredCells", {{"nx", 5}, {"num_cells", 12}}), values, out);
  uint64_t before = compiled();
  uint64_t hits = cache_stats().memory_hits;
  // Another grid: its numbers are arguments of the same variant.
  average(m.object("StructuredCells", {{"nx", 8}, {"num_cells", 49}}), values, out);
  EXPECT_EQ(compiled(), before);
  EXPECT_GT(cache_stats().memory_hits, hits);
  // Another class constant (points_per_cell 3 in ExplicitTriangles) is another variant.
  Array conn = empty({2, 3}, i32);
  copyto(conn, std::vector<int32_t>{0, 1, 2, 3, 4, 5});
  Object a = m.object("ExplicitCells", {{"connectivity", zeros({2, 4}, i32)}, {"num_cells", 2}});
  average(a, values, out);
  uint64_t explicit_quads = compiled();
  average(m.object("ExplicitTriangles", {{"connectivity", conn}, {"num_cells", 2}}), values, out);
  EXPECT_EQ(compiled(), explicit_quads + 1);
  EXPECT_EQ(
      out.to_vector<float>()[1],
      (values.to_vector<float>()[3] + values.to_vector<float>()[4] + values.to_vector<float>()[5]) /
          3.0f);
}

// The IR of a kernel of `path` for these arguments (objects included), for a GPU target.
ir::Kernel specialize_with(const std::string& path, const std::string& kernel,
                           std::span<const Arg> args) {
  detail::CallTypes c;
  detail::classify(args, c);
  auto module = test::resolve(read_file(path), path);
  return sema::specialize(*module, kernel, c.types, {"a GPU backend", true});
}

TEST(DeviceClasses, GeneratedCodeIsThePlainArgumentKernels) {
  Module m = cells_module();
  Array conn = empty({4, 4}, i32), values = empty({32}), out = empty({4});
  Object cells = m.object("ExplicitCells", {{"connectivity", conn}, {"num_cells", 4}});
  const Arg with_object[] = {cells, values, out};
  const Arg plain[] = {conn, 4, values, out};
  ir::Kernel a = specialize_with(test::kernels_dir() + "/cells.py", "cell_average", with_object);
  ir::Kernel b = specialize_with(test::kernels_dir() + "/cells_plain.py", "cell_average", plain);
  for (const char* target : {"cuda", "hip", "opencl", "level_zero", "metal"}) {
    std::string x = codegen::generate_source(a, target, "cell_average");
    EXPECT_EQ(x, codegen::generate_source(b, target, "cell_average")) << target;
    EXPECT_NE(x.find("cells_connectivity"), std::string::npos) << x;
  }
}

// ---- methods, nesting, inheritance, indexing, iteration ----

const char* const kShapes = R"(
import tack

@tack.func
def twice(x):
    return 2 * x

@tack.data_oriented
class Scale:
    factor = 3

    @tack.func
    def apply(self, x):
        return self.helper(x) * self.factor + self.offset

    @staticmethod
    @tack.func
    def helper(x):
        return x + 1

    def __init__(self, offset):
        self.offset = offset            # host code: never compiled

@tack.data_oriented
class Doubling(Scale):
    factor = 2

    @tack.func
    def apply(self, x):
        return self.factor * x

@tack.data_oriented
class Holder:
    """An object inside an object, and a function in an attribute."""

    @tack.func
    def __getitem__(self, i):
        return self.inner.apply(self.data[i])

    @tack.func
    def __len__(self):
        return len(self.data)

    @tack.kernel
    def fill(self, out):
        for i in range(len(self)):
            out[i] = self.f(self[i])

@tack.data_oriented
class Grid:
    __tack_iterate__ = ("nx", "ny")

@tack.kernel
def apply_all(s, x, out):
    for i in range(x.shape[0]):
        out[i] = s.apply(x[i])

@tack.kernel
def positions(g, out):
    for c in g:
        out[c.y, c.x] = c.x + 100 * c.y
)";

TEST(DeviceClasses, MethodsStaticMethodsAndOverrides) {
  Module m = Module::from_source(kShapes, "shapes.py");
  Array x = empty({5}, i32), out = empty({5}, i32);
  copyto(x, std::vector<int32_t>{0, 1, 2, 3, -4});
  m.kernel("apply_all")(m.object("Scale", {{"offset", 10}}), x, out);
  EXPECT_EQ(out.to_vector<int32_t>(), (std::vector<int32_t>{13, 16, 19, 22, 1}));
  m.kernel("apply_all")(m.object("Doubling", {{"offset", 10}}), x, out);
  EXPECT_EQ(out.to_vector<int32_t>(), (std::vector<int32_t>{0, 2, 4, 6, -8}));
}

TEST(DeviceClasses, NestedObjectsFunctionAttributesIndexingAndKernelMethods) {
  Module m = Module::from_source(kShapes, "shapes.py");
  Array data = empty({4}, i32), out = empty({4}, i32);
  copyto(data, std::vector<int32_t>{1, 2, 3, 4});
  Object holder = m.object(
      "Holder",
      {{"inner", m.object("Scale", {{"offset", 1}})}, {"data", data}, {"f", m.function("twice")}});
  m.kernel("Holder.fill")(holder, out);
  // f(inner.apply(data[i])) = 2 * ((data[i] + 1) * 3 + 1)
  EXPECT_EQ(out.to_vector<int32_t>(), (std::vector<int32_t>{14, 20, 26, 32}));
  std::vector<std::string> kernels = m.kernel_names();
  EXPECT_NE(std::find(kernels.begin(), kernels.end(), "Holder.fill"), kernels.end());
}

TEST(DeviceClasses, IteratingTwoNamesGivesAnIndexVector) {
  Module m = Module::from_source(kShapes, "shapes.py");
  Array out = zeros({3, 4}, i64);
  m.kernel("positions")(m.object("Grid", {{"nx", 4}, {"ny", 3}}), out);
  std::vector<int64_t> expected;
  for (int64_t y = 0; y < 3; ++y)
    for (int64_t x = 0; x < 4; ++x) expected.push_back(x + 100 * y);
  EXPECT_EQ(out.to_vector<int64_t>(), expected);
}

TEST(DeviceClasses, TuplesOfNumbersAreReadOneConstantIndexAtATime) {
  const std::string box = R"(
import tack

@tack.data_oriented
class Box:
    pass

@tack.kernel
def fill(b, out):
    for i, j in tack.ndrange(b.shape[0], b.shape[-1]):
        out[i, j] = b.shape[0] * 10 + len(b.shape) + b.scale[1] + i
)";
  Module m = Module::from_source(box, "box.py");
  Array out = zeros({3, 2}, i64);
  Object b =
      m.object("Box", {{"shape", Attribute::tuple({3, 2})}, {"scale", Attribute::tuple({1.5, 2})}});
  m.kernel("fill")(b, out);
  EXPECT_EQ(out.to_vector<int64_t>(), (std::vector<int64_t>{34, 34, 35, 35, 36, 36}));
  for (const char* misuse : {"b.shape[2]", "b.shape[i]", "b.shape"}) {
    std::string src = box;
    src.replace(src.rfind("b.scale[1]"), 10, misuse);
    try {
      Module::from_source(src, "box.py").kernel("fill")(b, out);
      ADD_FAILURE() << misuse;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("tuple"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(Attribute::tuple({1, Attribute::unsupported("a list")}).kind(),
            Attribute::Kind::Unsupported);
}

TEST(DeviceClasses, TheImplicitArraysOfTackArraysAreAKernelsFileToo) {
  // python/tack/arrays.py: its classes from C++, their __new__ and __init__ skipped as host code.
  Module arrays = Module::from_file(test::kernels_dir() + "/../../python/tack/arrays.py");
  Module m = Module::from_source(R"(
import tack

@tack.kernel
def saxpy(a, x, y, out):
    for i in range(x.shape[0]):
        out[i] = a * x[i] + y[len(y) - 1 - i]
)",
                                 "saxpy.py");
  Object counting = arrays.object("CountingArray1", {{"start", 1.0f},
                                                     {"step", 0.5f},
                                                     {"shape", Attribute::tuple({4})},
                                                     {"n0", 4},
                                                     {"n1", 1},
                                                     {"n2", 1}});
  Object ones = arrays.object(
      "ConstantArray1",
      {{"value", 1.0f}, {"shape", Attribute::tuple({4})}, {"n0", 4}, {"n1", 1}, {"n2", 1}});
  Array out = empty({4});
  m.kernel("saxpy")(2.0f, counting, ones, out);
  EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{3.0f, 4.0f, 5.0f, 6.0f}));
}

// ---- errors ----

template <typename E, typename F>
E error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e;
  }
  ADD_FAILURE() << "no error";
  return E("", "", 0, 0, "", "", "");
}

TEST(DeviceClasses, AnAttributeOfAKindKernelsCannotTakeIsATypeErrorNamingIt) {
  Module m = Module::from_source(kShapes, "shapes.py");
  Array x = empty({5}, i32), out = empty({5}, i32);
  Object s = m.object("Scale", {{"offset", Attribute::unsupported("a list")}});
  try {
    m.kernel("apply_all")(s, x, out);
    FAIL() << "no error";
  } catch (const TypeError& e) {
    std::string w = e.what();
    EXPECT_NE(w.find("attribute 'offset' of class 'Scale' is a list"), std::string::npos) << w;
    EXPECT_NE(w.find("shapes.py:14:"), std::string::npos) << w;
  }
  // An attribute the kernel does not read may be anything.
  Object d = m.object("Doubling", {{"offset", Attribute::unsupported("a list")}});
  EXPECT_NO_THROW(m.kernel("apply_all")(d, x, out));
}

TEST(DeviceClasses, CallingAMethodThatIsNotATackFuncIsACompileErrorNamingIt) {
  Module m = Module::from_source(std::string(kShapes) + R"(
@tack.kernel
def init_again(s, out):
    for i in range(out.shape[0]):
        out[i] = s.__init__(i)
)",
                                 "shapes.py");
  Array out = empty({5}, i32);
  try {
    m.kernel("init_again")(m.object("Scale", {{"offset", 1}}), out);
    FAIL() << "no error";
  } catch (const CompileError& e) {
    EXPECT_NE(e.message().find("'Scale.__init__' is not a @tack.func"), std::string::npos)
        << e.what();
    EXPECT_EQ(e.kernel(), "init_again");
    EXPECT_EQ(e.line(), 66);
  }
}

struct Case {
  const char* body;     // a kernel `k(s, out)` over objects of Scale
  const char* message;  // in the error
};

TEST(DeviceClasses, MisusesAreRefusedWithTheirReason) {
  const Case cases[] = {
      {"out[i] = s", "'s' (an object of class 'Scale') is used as a value"},
      {"out[i] = s.nothing", "has no attribute 'nothing'"},
      {"out[i] = s.apply", "is a method of class 'Scale', used as a value"},
      {"s.offset = 1", "cannot assign to the attribute 'offset'"},
      {"s[i] = 1", "cannot store into 's'"},
      {"out[i] = s[i]", "class 'Scale' has no __getitem__"},
      {"out[i] = s.missing(1)", "class 'Scale' has no method 'missing'"},
      {"out[i] = len(s)", "class 'Scale' has no __len__"},
      {"out[i] = s.apply(1, 2)", "takes 1 argument besides 'self', not 2"},
  };
  for (const Case& c : cases) {
    Module m = Module::from_source(std::string(kShapes) + fmt::format(R"(
@tack.kernel
def k(s, out):
    for i in range(out.shape[0]):
        {}
)",
                                                                      c.body),
                                   "shapes.py");
    Array out = empty({2}, i32);
    try {
      m.kernel("k")(m.object("Scale", {{"offset", 1}}), out);
      ADD_FAILURE() << "no error for " << c.body;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << c.body << "\n"
                                                                          << e.what();
      EXPECT_NE(std::string(e.what()).find("shapes.py:66:"), std::string::npos) << e.what();
    }
  }
  // Iterating a class without __tack_iterate__.
  Module m = Module::from_source(std::string(kShapes) + R"(
@tack.kernel
def k(s, out):
    for i in s:
        out[i] = 1
)",
                                 "shapes.py");
  Array out = empty({2}, i32);
  auto e = error_of<CompileError>([&] { m.kernel("k")(m.object("Scale", {{"offset", 1}}), out); });
  EXPECT_NE(e.message().find("does not declare __tack_iterate__"), std::string::npos) << e.what();
}

TEST(DeviceClasses, TheApiRefusesUnknownClassesAndRepeatedAttributes) {
  Module m = cells_module();
  try {
    m.object("Nope", {});
    FAIL();
  } catch (const TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("no device class named 'Nope'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("StructuredCells, ExplicitCells, ExplicitTriangles"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(m.object("ExplicitCells", {{"num_cells", 1}, {"num_cells", 2}}), TypeError);
  EXPECT_THROW(m.function("cell_average"), TypeError);
}

// ---- the kernels file's classes ----

CompileError resolve_error(const std::string& src) {
  try {
    test::resolve(src, "classes.py");
  } catch (const CompileError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for:\n" << src;
  return CompileError("", "", 0, 0, "", "", "");
}

TEST(DeviceClassFiles, ClassesAreResolvedWithTheirConstantsMethodsAndBases) {
  auto m = test::resolve(R"(
import tack
import numpy as np

N = tack.constant(3)

class Host:
    items = [x for x in range(3)]
    def go(self, *args, **kw):
        raise ValueError(f"{args}")

@tack.data_oriented
class Base:
    """A docstring."""
    n = N * 2
    half = 0.5
    wide = tack.constant(7, dtype=tack.i64)
    name = "base"
    host = np
    __slots__ = ()
    __tack_iterate__ = ("count",)

    def __init__(self, count):
        self.count = [count] * 2

    @tack.func
    def f(self, x):
        return x

    @staticmethod
    @tack.func
    def g(x):
        return x

    @tack.kernel
    def run(self, out):
        for i in range(1):
            out[i] = self.f(1)

@tack.data_oriented
class Derived(Base):
    n = 5
    __tack_iterate__ = "other"
)",
                         "classes.py");
  EXPECT_EQ(m->class_names(), (std::vector<std::string>{"Base", "Derived"}));
  EXPECT_EQ(m->lookup("Host").kind, lang::Symbol::Kind::HostValue);
  const lang::DeviceClass* base = m->device_class("Base");
  const lang::DeviceClass* derived = m->device_class("Derived");
  ASSERT_TRUE(base && derived);
  EXPECT_EQ(base->constants().at("n").int_value, 6);
  EXPECT_EQ(base->constants().at("half").float_value, 0.5);
  EXPECT_EQ(base->constants().at("wide").dtype, DType::I64);
  EXPECT_EQ(base->other_attributes().at("name"), "a str");
  EXPECT_EQ(base->other_attributes().at("host"), "'np', a host value");
  EXPECT_EQ(base->iterate(), (std::vector<std::string>{"count"}));
  EXPECT_EQ(derived->constants().at("n").int_value, 5);
  EXPECT_EQ(derived->constants().at("half").float_value, 0.5);
  EXPECT_EQ(derived->iterate(), (std::vector<std::string>{"other"}));
  EXPECT_EQ(base->method("f")->kind, lang::Method::Kind::Func);
  EXPECT_EQ(derived->method("g")->kind, lang::Method::Kind::Static);
  EXPECT_EQ(derived->method("run")->kind, lang::Method::Kind::Kernel);
  EXPECT_EQ(derived->method("__init__")->kind, lang::Method::Kind::Host);
  EXPECT_FALSE(derived->method("nothing"));
  EXPECT_EQ(m->kernel_names(), (std::vector<std::string>{"Base.run"}));
}

TEST(DeviceClassFiles, MalformedClassesAreCompileErrors) {
  struct Bad {
    const char* src;
    int line;
    const char* message;
  };
  const Bad cases[] = {
      {"@tack.data_oriented\nclass A:\n    x = [1]\n", 3, "list literals"},
      {"@tack.data_oriented\nclass A:\n    @tack.func\n    def f(self, x=1):\n        pass\n", 4,
       "default parameter values"},
      {"@tack.data_oriented\nclass A:\n    __tack_iterate__ = ()\n", 3, "__tack_iterate__"},
      {"@tack.data_oriented\nclass A:\n    __tack_iterate__ = ('a', 'b', 'c', 'd')\n", 3,
       "one to three"},
      {"class H:\n    pass\n@tack.data_oriented\nclass A(H):\n    pass\n", 4,
       "is not a device class of this file"},
      {"@tack.data_oriented\nclass A:\n    pass\n@tack.data_oriented\nclass B:\n    pass\n"
       "@tack.data_oriented\nclass C(A, B):\n    pass\n",
       8, "one base class"},
      {"@tack.data_oriented\nclass A:\n    @tack.func\n    def f():\n        return 1\n", 4,
       "no parameter for its object"},
      {"@tack.data_oriented\nclass A:\n    @tack.func\n    def f(self):\n        return 1\n"
       "    @tack.func\n    def f(self):\n        return 2\n",
       7, "defined twice in class 'A'"},
      {"@tack.kernel\nclass A:\n    pass\n", 1, "not a class decorator"},
      {"@tack.data_oriented\ndef f(x):\n    pass\n", 1, "not a decorator of functions"},
      {"@tack.data_oriented\nclass A:\n    @staticmethod\n    @tack.kernel\n    def k(out):\n"
       "        pass\n",
       5, "not as a static method"},
      {"@tack.kernel\ndef k(a: int):\n    pass\n", 2, "parameter annotations are not supported"},
      {"@tack.data_oriented\nclass A:\n    n = 1 << 4\n", 3, "not supported in tack.constant"},
  };
  for (const Bad& b : cases) {
    CompileError e = resolve_error(std::string("import tack\n") + b.src);
    EXPECT_EQ(e.line(), b.line + 1) << b.src << e.what();
    EXPECT_NE(e.message().find(b.message), std::string::npos) << b.src << e.what();
    EXPECT_FALSE(e.hint().empty()) << e.what();
  }
  // tack.template() is the one annotation, on any parameter.
  EXPECT_NO_THROW(
      test::resolve("import tack\n@tack.kernel\ndef k(a: tack.template(), b):\n"
                    "    pass\n"));
}

}  // namespace
}  // namespace tack
