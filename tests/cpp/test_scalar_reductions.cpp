// Scalar reductions in the parallel loop (docs/language.md, "Reductions"): `s += x[i]` and the
// other update forms, read by the `return`, on the CPU and OpenCL, for every dtype, checked bit
// for bit against the documented order computed here in plain C++, and between 1 and 2 CPU
// threads (child processes with TACK_CPU_THREADS). Also the errors for other reads after the
// loop, and each iteration's own copy of the locals bound before the loop.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <random>

#include "test_support.hpp"

extern char** environ;

namespace tack {
namespace {

constexpr int64_t kLanes = 16, kBlock = 4096;

std::vector<Device> available_devices() {
  std::vector<Device> out;
  for (const BackendStatus& s : backend_status())
    if (s.available && (s.name == "cpu" || s.name == "opencl")) out.push_back(device(s.name));
  return out;
}

// NaN-propagating min and max, as Tack's.
template <typename T>
T tmin(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? a : b;
  return b < a ? b : a;
}
template <typename T>
T tmax(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? a : b;
  return b > a ? b : a;
}

// Integer arithmetic wraps (through the unsigned type, as Tack's does).
template <typename T>
T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) +
                          static_cast<std::make_unsigned_t<T>>(b));
  else
    return a + b;
}
template <typename T>
T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = std::make_unsigned_t<T>;
    using W = std::conditional_t<(sizeof(T) < 4), uint32_t, U>;  // no int promotion overflow
    return static_cast<T>(
        static_cast<U>(static_cast<W>(static_cast<U>(a)) * static_cast<W>(static_cast<U>(b))));
  } else {
    return a * b;
  }
}

// The documented order: lane j of block b combines iterations b*4096 + j + 16m in turn, starting
// at the identity; each block's lanes by the tree of steps 8, 4, 2, 1; the blocks pairwise level
// by level; then init op total.
template <typename T>
T reference(const std::vector<T>& x, T init, T identity, const std::function<T(T, T)>& op) {
  int64_t n = static_cast<int64_t>(x.size());
  int64_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<T> p;
  for (int64_t b = 0; b < blocks; ++b) {
    T v[kLanes];
    for (int64_t j = 0; j < kLanes; ++j) {
      v[j] = identity;
      for (int64_t g = b * kBlock + j; g < std::min(n, (b + 1) * kBlock); g += kLanes)
        v[j] = op(v[j], x[g]);
    }
    for (int64_t s = kLanes / 2; s >= 1; s /= 2)
      for (int64_t l = 0; l < s; ++l) v[l] = op(v[l], v[l + s]);
    p.push_back(v[0]);
  }
  while (p.size() > 1) {
    std::vector<T> next;
    for (size_t i = 0; i + 1 < p.size(); i += 2) next.push_back(op(p[i], p[i + 1]));
    if (p.size() % 2) next.push_back(p.back());
    p = next;
  }
  return p.empty() ? init : op(init, p[0]);
}

template <typename T>
uint64_t bits_of(T v) {
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof v);
  return b;
}

template <typename T>
T from_scalar(const Scalar& s) {
  if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(s.value);
  else
    return static_cast<T>(s.int_value);
}

// One kernel per operation, for the dtype `t` (the local's and the result's).
std::string kernels(const std::string& t) {
  return fmt::format(R"(import tack

@tack.kernel
def red_sum(x) -> tack.{0}:
    s = tack.{0}(0)
    for i in range(x.shape[0]):
        s += x[i]
    return s

@tack.kernel
def red_sub(x) -> tack.{0}:
    s = tack.{0}(0)
    for i in range(x.shape[0]):
        s -= x[i]
    return s

@tack.kernel
def red_prod(x) -> tack.{0}:
    s = tack.{0}(1)
    for i in range(x.shape[0]):
        s *= x[i]
    return s

@tack.kernel
def red_min(x) -> tack.{0}:
    s = x[0]
    for i in range(x.shape[0]):
        s = min(s, x[i])
    return s

@tack.kernel
def red_max(x) -> tack.{0}:
    s = x[0]
    for i in range(x.shape[0]):
        s = max(x[i], s)
    return s

@tack.kernel
def red_or(x) -> tack.{0}:
    s = tack.{0}(0)
    for i in range(x.shape[0]):
        s |= x[i]
    return s

@tack.kernel
def red_and(x) -> tack.{0}:
    s = ~tack.{0}(0)
    for i in range(x.shape[0]):
        s &= x[i]
    return s

@tack.kernel
def red_xor(x) -> tack.{0}:
    s = tack.{0}(0)
    for i in range(x.shape[0]):
        s ^= x[i]
    return s
)",
                     t);
}

template <typename T>
std::vector<T> random_values(int64_t n, unsigned seed, bool for_product) {
  std::mt19937_64 rng(seed);
  std::vector<T> v(n);
  for (auto& x : v) {
    if constexpr (std::is_floating_point_v<T>) {
      std::uniform_real_distribution<double> d(-1, 1);
      x = static_cast<T>(for_product ? 1.0 + d(rng) * 1e-3 : d(rng));
    } else {
      x = static_cast<T>(for_product ? (rng() % 2 ? 3 : 1) : rng());
    }
  }
  return v;
}

const std::vector<int64_t> kSizes = {1, 15, 16, 17, 4095, 4096, 4097, 3 * 4096 + 5, 100003};

// The bits of every reduction of dtype T on `d`, and the check against the reference.
template <typename T>
std::vector<uint64_t> check_dtype(const Device& d, bool check) {
  DType dt = dtype_of<T>();
  std::string name(dtype_name(dt));
  Module m = Module::from_source(kernels(name), fmt::format("reductions_{}.py", name));
  std::vector<uint64_t> out;
  struct Op {
    const char* kernel;
    T init, identity;
    std::function<T(T, T)> op;
  };
  std::vector<Op> ops = {
      {"red_sum", T(0), std::is_floating_point_v<T> ? T(-0.0) : T(0), wrap_add<T>},
      {"red_sub", T(0), std::is_floating_point_v<T> ? T(-0.0) : T(0), wrap_add<T>},
      {"red_prod", T(1), T(1), wrap_mul<T>},
      {"red_min", T(0), T(0), tmin<T>},
      {"red_max", T(0), T(0), tmax<T>},
  };
  if constexpr (std::is_integral_v<T>) {
    ops.push_back({"red_or", T(0), T(0), [](T a, T b) { return T(a | b); }});
    ops.push_back({"red_and", T(~T(0)), T(~T(0)), [](T a, T b) { return T(a & b); }});
    ops.push_back({"red_xor", T(0), T(0), [](T a, T b) { return T(a ^ b); }});
  }
  for (const Op& op : ops) {
    for (int64_t n : kSizes) {
      std::string k = op.kernel;
      std::vector<T> x =
          random_values<T>(n, static_cast<unsigned>(n * 7 + k.size()), k == "red_prod");
      Array a = empty({n}, dt, &d);
      copyto(a, x);
      Scalar got = m.kernel(k)(a);
      T g = from_scalar<T>(got);
      out.push_back(bits_of(g));
      if (!check) continue;
      T init = op.init, identity = op.identity;
      std::vector<T> in = x;
      if (k == "red_min" || k == "red_max") {
        init = x[0];
        identity =
            k == "red_min"
                ? (std::is_floating_point_v<T> ? T(INFINITY) : std::numeric_limits<T>::max())
                : (std::is_floating_point_v<T> ? T(-INFINITY) : std::numeric_limits<T>::min());
      }
      if (k == "red_sub")  // a lane computes identity - x0 - x1 ...: adding the negations
        for (auto& v : in) {
          if constexpr (std::is_floating_point_v<T>)
            v = -v;
          else
            v = static_cast<T>(std::make_unsigned_t<T>(0) -
                               static_cast<std::make_unsigned_t<T>>(v));
        }
      T want = reference<T>(in, init, identity, op.op);
      EXPECT_EQ(bits_of(g), bits_of(want)) << d.name() << " " << k << " " << name << " n=" << n
                                           << ": got " << +g << ", want " << +want;
      if constexpr (std::is_floating_point_v<T>) {
        if (k == "red_sum") {  // and within the error bound of a double sum
          double exact = 0, mag = 0;
          for (T v : x) exact += v, mag += std::fabs(static_cast<double>(v));
          double levels = 256 + 4 + std::ceil(std::log2(static_cast<double>(n) / kBlock + 1)) + 1;
          EXPECT_LE(std::fabs(g - exact), levels * std::numeric_limits<T>::epsilon() * mag);
        }
      }
    }
  }
  return out;
}

std::vector<uint64_t> all_bits(const Device& d, bool check) {
  std::vector<uint64_t> v;
  auto add = [&](std::vector<uint64_t> b) { v.insert(v.end(), b.begin(), b.end()); };
  add(check_dtype<int8_t>(d, check));
  add(check_dtype<uint8_t>(d, check));
  add(check_dtype<int16_t>(d, check));
  add(check_dtype<uint16_t>(d, check));
  add(check_dtype<int32_t>(d, check));
  add(check_dtype<uint32_t>(d, check));
  add(check_dtype<int64_t>(d, check));
  add(check_dtype<uint64_t>(d, check));
  add(check_dtype<float>(d, check));
  if (d.backend().supported_dtypes.count(DType::F64)) add(check_dtype<double>(d, check));
  return v;
}

TEST(ScalarReductions, EveryOperationAndDtypeInTheDocumentedOrder) {
  std::vector<std::vector<uint64_t>> per_device;
  for (const Device& d : available_devices()) per_device.push_back(all_bits(d, true));
  for (size_t i = 1; i < per_device.size(); ++i) EXPECT_EQ(per_device[i], per_device[0]);
}

TEST(ScalarReductions, BoolReductions) {
  const char* src = R"(import tack

@tack.kernel
def any_(x) -> bool:
    s = False
    for i in range(x.shape[0]):
        s |= x[i]
    return s

@tack.kernel
def all_(x) -> bool:
    s = True
    for i in range(x.shape[0]):
        s &= x[i]
    return s

@tack.kernel
def parity(x) -> bool:
    s = False
    for i in range(x.shape[0]):
        s ^= x[i]
    return s
)";
  Module m = Module::from_source(src, "bools.py");
  for (const Device& d : available_devices()) {
    for (int64_t n : {1, 4097, 20000}) {
      for (int64_t hot : {int64_t{-1}, n - 1, n / 2}) {
        std::vector<uint8_t> v(n, 0);
        if (hot >= 0) v[hot] = 1;
        Array u = empty({n}, DType::U8, &d);
        copyto(u, v);
        Array a = u.astype(DType::Bool);
        EXPECT_EQ(m.kernel("any_")(a).int_value, hot >= 0) << d.name();
        EXPECT_EQ(m.kernel("parity")(a).int_value, hot >= 0) << d.name();
        std::vector<uint8_t> w(n, 1);
        if (hot >= 0) w[hot] = 0;
        copyto(u, w);
        a = u.astype(DType::Bool);
        EXPECT_EQ(m.kernel("all_")(a).int_value, hot < 0) << d.name();
      }
    }
  }
}

// The issue's kernel, with several reductions, conditions, continue, an inner loop and ndrange.
TEST(ScalarReductions, KernelsAsUsersWriteThem) {
  const char* src = R"(import tack

@tack.kernel
def total(x) -> tack.f32:
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i]
    return s

@tack.kernel
def stats(x, lo) -> tack.f64:
    n = 0
    pos = 0.0
    big = -1.0e30
    for i in range(x.shape[0]):
        if x[i] < lo:
            continue
        n += 1
        pos += x[i]
        big = max(big, x[i])
    return pos + n * 1000.0 + big * 1.0e6

@tack.kernel
def rows(a) -> tack.i64:
    s = tack.i64(0)
    for i, j in tack.ndrange(a.shape[0], a.shape[1]):
        for k in range(3):
            s += a[i, j] * (k + 1)
    return s

@tack.kernel
def empty_loop(x, n) -> tack.f32:
    s = 2.5
    for i in range(n):
        s += x[i]
    return s
)";
  Module m = Module::from_source(src, "users.py");
  for (const Device& d : available_devices()) {
    SCOPED_TRACE(d.name());
    Array ones = full({1 << 20}, 1.0, DType::F32, &d);
    EXPECT_EQ(m.kernel("total")(ones).value, 1 << 20);  // was 0.0 (issue 11)
    std::vector<double> x(50000);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i % 100) - 20;
    Array xa = empty({50000}, DType::F64, &d);
    copyto(xa, x);
    double pos = 0, big = -1e30;
    int n = 0;
    for (double v : x)
      if (v >= 0) ++n, pos += v, big = std::max(big, v);
    EXPECT_EQ(m.kernel("stats")(xa, 0.0).value, pos + n * 1000.0 + big * 1e6);
    std::vector<int32_t> g(300 * 7);
    int64_t want = 0;
    for (size_t i = 0; i < g.size(); ++i)
      g[i] = static_cast<int32_t>(i * 31 % 1000), want += 6 * g[i];
    Array ga = empty({300, 7}, DType::I32, &d);
    copyto(ga, g);
    EXPECT_EQ(m.kernel("rows")(ga).int_value, want);
    EXPECT_EQ(m.kernel("empty_loop")(ones, 0).value, 2.5);
  }
}

// Several dimensions: the iterations are numbered row-major over the ranges (with their starts),
// rows that cross into the next row of the last dimension included.
TEST(ScalarReductions, NdrangeFollowsTheOrderOfTheLinearIndex) {
  const char* src = R"(import tack

@tack.kernel
def sum2(a) -> tack.f32:
    s = 0.0
    for i, j in tack.ndrange((1, a.shape[0]), (2, a.shape[1])):
        s += a[i, j]
    return s
)";
  Module m = Module::from_source(src, "ndrange.py");
  for (auto [h, w] : {std::pair<int64_t, int64_t>{5, 9}, {37, 100}, {300, 21}, {9, 4099}}) {
    std::vector<float> a(h * w);
    std::mt19937 rng(static_cast<unsigned>(h * w));
    std::uniform_real_distribution<float> d(-1, 1);
    for (auto& v : a) v = d(rng);
    std::vector<float> inner;
    for (int64_t i = 1; i < h; ++i)
      for (int64_t j = 2; j < w; ++j) inner.push_back(a[i * w + j]);
    float want = reference<float>(inner, 0.0f, -0.0f, wrap_add<float>);
    for (const Device& dev : available_devices()) {
      Array x = empty({h, w}, DType::F32, &dev);
      copyto(x, a);
      float got = static_cast<float>(m.kernel("sum2")(x).value);
      EXPECT_EQ(bits_of(got), bits_of(want)) << dev.name() << " " << h << "x" << w;
    }
  }
}

// Each iteration starts from the values bound before the loop: on the CPU, where a thread runs
// many iterations, an assignment in one must not reach the next.
TEST(ScalarReductions, EachIterationHasItsOwnCopy) {
  const char* src = R"(import tack

@tack.kernel
def k(x, out):
    s = 1.0
    for i in range(x.shape[0]):
        s += x[i]
        out[i] = s

@tack.kernel
def unassigned(x, out):
    for i in range(x.shape[0]):
        if x[i] > 0.0:
            t = x[i]
        out[i] = t
)";
  Module m = Module::from_source(src, "copies.py");
  for (const Device& d : available_devices()) {
    Array x = full({100000}, 2.0, DType::F32, &d), out = empty({100000}, DType::F32, &d);
    m.kernel("k")(x, out);
    auto v = out.to_vector<float>();
    for (size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], 3.0f) << d.name() << " i=" << i;
    // A local the iteration never assigned reads zero, not the previous iteration's value.
    std::vector<float> signs(100000);
    for (size_t i = 0; i < signs.size(); ++i) signs[i] = i % 2 ? -1.0f : 1.0f;
    copyto(x, signs);
    m.kernel("unassigned")(x, out);
    v = out.to_vector<float>();
    for (size_t i = 0; i < v.size(); ++i)
      ASSERT_EQ(v[i], i % 2 ? 0.0f : 1.0f) << d.name() << " i=" << i;
  }
}

std::string error_of(const std::string& body, const std::string& args = "f32[]") {
  std::string src = "import tack\n@tack.kernel\ndef k(x) -> tack.f32:\n" + body;
  CompileError e = test::compile_error(src, args);
  return fmt::format("{}:{}: {}", e.line(), e.col(), e.what());
}

TEST(ScalarReductions, OtherReadsAfterTheLoopAreErrors) {
  // Assigned, not updated.
  std::string e =
      error_of("    s = 0.0\n    for i in range(x.shape[0]):\n        s = x[i]\n    return s\n");
  EXPECT_NE(e.find("7:12:"), std::string::npos) << e;
  EXPECT_NE(e.find("each iteration has its own copy"), std::string::npos) << e;
  EXPECT_NE(e.find("s += e"), std::string::npos) << e;
  EXPECT_NE(e.find("`s = ...` at line 6"), std::string::npos) << e;
  // Read in the loop besides its update.
  e = error_of(
      "    s = 0.0\n    for i in range(x.shape[0]):\n        s += x[i]\n        x[i] = s\n"
      "    return s\n");
  EXPECT_NE(e.find("8:12:"), std::string::npos) << e;
  EXPECT_NE(e.find("read at line 7, column 16"), std::string::npos) << e;
  // Two operations.
  e = error_of(
      "    s = 1.0\n    for i in range(x.shape[0]):\n        s += x[i]\n        s *= 2.0\n"
      "    return s\n");
  EXPECT_NE(e.find("one operation"), std::string::npos) << e;
  // First assigned in the loop, and the loop variable.
  e = error_of("    for i in range(x.shape[0]):\n        t = x[i]\n    return t\n");
  EXPECT_NE(e.find("6:12:"), std::string::npos) << e;
  EXPECT_NE(e.find("first assigned in the loop"), std::string::npos) << e;
  e = error_of("    for i in range(x.shape[0]):\n        x[i] = 1.0\n    return i + 0.0\n");
  EXPECT_NE(e.find("'i' is assigned in the parallel loop"), std::string::npos) << e;
  // s += s is not a reduction update.
  e = error_of("    s = 1.0\n    for i in range(x.shape[0]):\n        s += s\n    return s\n");
  EXPECT_NE(e.find("not a reduction update"), std::string::npos) << e;
}

TEST(ScalarReductions, WorkgroupKernelsCannotReduce) {
  std::string src =
      "import tack\n@tack.kernel\ndef k(x) -> tack.f32:\n    s = 0.0\n"
      "    for i in range(x.shape[0]):\n        s += tack.block_sum(x[i])\n    return s\n";
  auto m = test::resolve(src);
  auto types = sema::parse_arg_types("f32[]");
  sema::TargetRules rules;
  rules.supports_workgroups = true;
  try {
    sema::specialize(*m, "k", types, rules);
    ADD_FAILURE() << "expected a CompileError";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("workgroups"), std::string::npos) << e.what();
  }
}

// ---- the same bits with 1 and 2 threads ----

namespace fs = std::filesystem;

// Run as a child (see ThreadCounts): writes the bits of every reduction on the CPU.
TEST(ScalarReductionsChild, WriteBits) {
  const char* out = std::getenv("TACK_TEST_CHILD_OUT");
  if (!out) GTEST_SKIP() << "runs only as a child of ScalarReductions.SameBitsWithOneAndTwoThreads";
  std::ofstream f(out);
  for (uint64_t b : all_bits(device("cpu"), false)) f << b << "\n";
}

std::string child_bits(int threads, const fs::path& dir) {
  fs::path out = dir / fmt::format("bits{}", threads);
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    if (kv.rfind("TACK_CPU_THREADS=", 0) == 0 || kv.rfind("TACK_TEST_CHILD_OUT=", 0) == 0) continue;
    env.push_back(kv);
  }
  env.push_back(fmt::format("TACK_CPU_THREADS={}", threads));
  env.push_back("TACK_TEST_CHILD_OUT=" + out.string());
  std::vector<char*> envp;
  for (auto& s : env) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string self = fs::read_symlink("/proc/self/exe").string();
  std::string filter = "--gtest_filter=ScalarReductionsChild.WriteBits";
  char* argv[] = {self.data(), filter.data(), nullptr};
  pid_t pid;
  EXPECT_EQ(posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv, envp.data()), 0);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  std::ifstream in(out);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(ScalarReductions, SameBitsWithOneAndTwoThreads) {
  fs::path dir = fs::temp_directory_path() / fmt::format("tack-reduce-{}", getpid());
  fs::create_directories(dir);
  std::string one = child_bits(1, dir), two = child_bits(2, dir);
  fs::remove_all(dir);
  EXPECT_FALSE(one.empty());
  EXPECT_EQ(one, two);
  std::string here;
  for (uint64_t b : all_bits(device("cpu"), false)) here += fmt::format("{}\n", b);
  EXPECT_EQ(one, here);
}

}  // namespace
}  // namespace tack
