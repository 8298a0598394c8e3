// The OpenCL C generator (the opencl and level_zero backends): every kernel compiled by ocloc to
// SPIR-V (checked by spirv-val) and a native binary for pvc, and by clang -x cl; and run on PoCL
// against the CPU backend.
#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "c_generators/support.hpp"
#include "codegen/c_family/c_generator.hpp"
#include "ir/passes.hpp"
#include "test_support.hpp"

namespace tack {
namespace cgen_test {

void compile_opencl_ocloc(const std::string& source, const std::string& name) {
  std::string ocloc = find_program({"ocloc"});
  if (ocloc.empty()) GTEST_SKIP() << "ocloc not found (apt-get install intel-opencl-icd)";
  std::string spirv_val = find_program({"spirv-val"});
  fs::path dir = scratch() / (name + "_ocloc");
  fs::create_directories(dir);
  fs::path cl = dir / "kernel.cl";
  write_text(cl, source);
  // One compile for pvc gives the native binary and the SPIR-V it came from.
  Output out =
      run(fmt::format("cd {} && {} compile -q -file kernel.cl -device pvc "
                      "-output_no_suffix -output kernel",
                      quote(dir.string()), quote(ocloc)));
  ASSERT_EQ(out.status, 0) << "ocloc rejected the generated OpenCL C:\n"
                           << out.text << "\n"
                           << numbered(source);
  ASSERT_TRUE(fs::exists(dir / "kernel.spv")) << "ocloc wrote no SPIR-V";
  bool native = false;
  for (const auto& f : fs::directory_iterator(dir))
    native |= f.path().filename() == "kernel" || f.path().extension() == ".bin";
  EXPECT_TRUE(native) << "ocloc wrote no native binary for pvc";
  if (spirv_val.empty()) GTEST_SKIP() << "spirv-val not found (apt-get install spirv-tools)";
  Output val = run(fmt::format("{} {}", quote(spirv_val), quote((dir / "kernel.spv").string())));
  EXPECT_EQ(val.status, 0) << "spirv-val rejected the SPIR-V:\n" << val.text;
}

void compile_opencl_clang(const std::string& source, const std::string& name) {
  std::string clang = find_program(
      {"clang-19", "clang-18", "clang-17", "clang-16", "clang-15", "clang-14", "clang"});
  if (clang.empty()) GTEST_SKIP() << "clang not found for the OpenCL C syntax check";
  fs::path cl = scratch() / (name + ".cl");
  write_text(cl, source);
  Output out =
      run(fmt::format("{} -x cl -cl-std=CL3.0 -fsyntax-only {}", quote(clang), quote(cl.string())));
  EXPECT_EQ(out.status, 0) << "clang rejected the generated OpenCL C:\n"
                           << out.text << "\n"
                           << numbered(source);
}

}  // namespace cgen_test

namespace {

using namespace cgen_test;

TEST_P(Compile, OpenClOcloc) {
  const Variant& v = GetParam();
  compile_opencl_ocloc(codegen::generate_source(specialize(v), "opencl", v.kernel), v.name);
}

TEST_P(Compile, OpenClClang) {
  const Variant& v = GetParam();
  compile_opencl_clang(codegen::generate_source(specialize(v), "opencl", v.kernel), v.name);
}

TEST(CGenerators, OpenClUsesGlobalIdAddressSpacesAndOverloadedMath) {
  const char* src =
      "import tack\n@tack.kernel\ndef k(x, out):\n    for i in range(x.shape[0]):\n"
      "        out[i] = sqrt(x[i]) + x[i] % 2.0\n";
  std::string s = source_of(src, "f32[],f32[]", "opencl");
  for (const char* want : {"__kernel void k(", "__global const float* x,", "__global float* out,",
                           "long x_shape0,", "__global int* tack_debug", "(long)get_global_id(0)",
                           "sqrt(x[i])", "fmod(a, b)", "#pragma OPENCL FP_CONTRACT OFF"})
    EXPECT_NE(s.find(want), std::string::npos) << want << "\n" << s;
  for (const char* not_want : {"blockIdx", "sqrtf", "long long", "cl_khr_fp64"})
    EXPECT_EQ(s.find(not_want), std::string::npos) << not_want << "\n" << s;
  std::string d = source_of(src, "f64[],f64[]", "opencl");
  EXPECT_NE(d.find("#pragma OPENCL EXTENSION cl_khr_fp64 : enable"), std::string::npos) << d;
  std::string c = source_of(src, "f32[],f32[]", "cuda");
  EXPECT_NE(c.find("sqrtf(x[i])"), std::string::npos) << c;
  EXPECT_NE(c.find("fmodf(a, b)"), std::string::npos) << c;
  std::string m = source_of(src, "f32[],f32[]", "metal");
  for (const char* want : {"kernel void k(", "device const float* x [[buffer(0)]]",
                           "constant long& x_shape0 [[buffer(1)]]",
                           "uint tack_thread [[thread_position_in_grid]]", "metal::sqrt(x[i])"})
    EXPECT_NE(m.find(want), std::string::npos) << want << "\n" << m;
}

// ---- running generated OpenCL C on PoCL ----
//
// The one place where generated code runs on this machine: PoCL runs OpenCL C on the CPU. The
// arithmetic kernels run there on edge values (MIN, -1, 0, NaN, infinities, -0.0...) and must
// give the CPU backend's results bit for bit, which checks the shared printer's semantics and
// the launch ABI. The ICD loader is loaded with dlopen; this is a test, not a backend.

struct OpenClApi {
  using Int = int32_t;
  using UInt = uint32_t;
  Int (*GetPlatformIDs)(UInt, void**, UInt*) = nullptr;
  Int (*GetPlatformInfo)(void*, UInt, size_t, void*, size_t*) = nullptr;
  Int (*GetDeviceIDs)(void*, uint64_t, UInt, void**, UInt*) = nullptr;
  void* (*CreateContext)(const intptr_t*, UInt, void* const*, void*, void*, Int*) = nullptr;
  void* (*CreateCommandQueue)(void*, void*, uint64_t, Int*) = nullptr;
  void* (*CreateProgramWithSource)(void*, UInt, const char**, const size_t*, Int*) = nullptr;
  Int (*BuildProgram)(void*, UInt, void* const*, const char*, void*, void*) = nullptr;
  Int (*GetProgramBuildInfo)(void*, void*, UInt, size_t, void*, size_t*) = nullptr;
  void* (*CreateKernel)(void*, const char*, Int*) = nullptr;
  void* (*CreateBuffer)(void*, uint64_t, size_t, void*, Int*) = nullptr;
  Int (*SetKernelArg)(void*, UInt, size_t, const void*) = nullptr;
  Int (*EnqueueNDRangeKernel)(void*, void*, UInt, const size_t*, const size_t*, const size_t*, UInt,
                              const void*, void*) = nullptr;
  Int (*EnqueueReadBuffer)(void*, void*, UInt, size_t, size_t, void*, UInt, const void*,
                           void*) = nullptr;
  Int (*Finish)(void*) = nullptr;
  Int (*ReleaseMemObject)(void*) = nullptr;
  Int (*ReleaseKernel)(void*) = nullptr;
  Int (*ReleaseProgram)(void*) = nullptr;

  void* context = nullptr;
  void* queue = nullptr;
  void* device = nullptr;
  std::string missing;

  OpenClApi() {
    void* lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      missing =
          "the OpenCL ICD loader is not installed (apt-get install ocl-icd-libopencl1 "
          "pocl-opencl-icd)";
      return;
    }
    bool ok = true;
    auto load = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      ok = ok && fn;
    };
    load(GetPlatformIDs, "clGetPlatformIDs");
    load(GetPlatformInfo, "clGetPlatformInfo");
    load(GetDeviceIDs, "clGetDeviceIDs");
    load(CreateContext, "clCreateContext");
    load(CreateCommandQueue, "clCreateCommandQueue");
    load(CreateProgramWithSource, "clCreateProgramWithSource");
    load(BuildProgram, "clBuildProgram");
    load(GetProgramBuildInfo, "clGetProgramBuildInfo");
    load(CreateKernel, "clCreateKernel");
    load(CreateBuffer, "clCreateBuffer");
    load(SetKernelArg, "clSetKernelArg");
    load(EnqueueNDRangeKernel, "clEnqueueNDRangeKernel");
    load(EnqueueReadBuffer, "clEnqueueReadBuffer");
    load(Finish, "clFinish");
    load(ReleaseMemObject, "clReleaseMemObject");
    load(ReleaseKernel, "clReleaseKernel");
    load(ReleaseProgram, "clReleaseProgram");
    if (!ok) {
      missing = "libOpenCL.so.1 lacks OpenCL 1.2 functions";
      return;
    }
    UInt n = 0;
    GetPlatformIDs(0, nullptr, &n);
    std::vector<void*> platforms(n);
    if (n) GetPlatformIDs(n, platforms.data(), nullptr);
    for (void* p : platforms) {
      char name[256] = {};
      GetPlatformInfo(p, 0x0902 /* CL_PLATFORM_NAME */, sizeof name - 1, name, nullptr);
      if (std::string(name).find("Portable Computing Language") == std::string::npos) continue;
      if (GetDeviceIDs(p, 0xFFFFFFFF /* CL_DEVICE_TYPE_ALL */, 1, &device, nullptr) == 0) break;
      device = nullptr;
    }
    if (!device) {
      missing = "PoCL is not installed (apt-get install pocl-opencl-icd)";
      return;
    }
    Int err = 0;
    context = CreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
    if (context) queue = CreateCommandQueue(context, device, 0, &err);
    if (!queue) missing = fmt::format("PoCL: no context or queue (error {})", err);
  }
  static OpenClApi& get() {
    static OpenClApi api;
    return api;
  }
};

// One argument of a run: an array (shape and contents as bytes) or a scalar (bits).
struct RunArg {
  DType dtype = f32;
  Shape shape;  // empty: a scalar
  std::vector<uint8_t> bytes;
  uint64_t scalar_bits = 0;
  double scalar_float = 0;
  bool is_array() const { return !shape.empty(); }
};

void put(std::vector<uint8_t>& bytes, DType t, double f, uint64_t bits) {
  size_t at = bytes.size();
  bytes.resize(at + dtype_size(t));
  if (t == f32) {
    float v = static_cast<float>(f);
    std::memcpy(&bytes[at], &v, 4);
  } else if (t == f64) {
    std::memcpy(&bytes[at], &f, 8);
  } else {
    std::memcpy(&bytes[at], &bits, dtype_size(t));  // little-endian: the low bytes
  }
}

const std::vector<double>& float_edges() {
  static const std::vector<double> v = {
      0.0, -0.0, 1.0,   -1.0,         1.5,           -1.5,         2.5,       -2.5,
      0.1, 7.25, -7.25, 1e30,         -1e30,         INFINITY,     -INFINITY, NAN,
      3.0, 0.5,  -0.5,  2147483648.0, -2147483904.0, 4294967296.0, 1e10,      1e-3};
  return v;
}

std::vector<uint64_t> int_edges(DType t) {
  int w = dtype_bits(t);
  uint64_t max = is_signed(t) ? (~uint64_t{0} >> (65 - w)) : (~uint64_t{0} >> (64 - w));
  uint64_t min = is_signed(t) ? ~max : 0;
  std::vector<uint64_t> v;
  for (int64_t x : {0, 1, -1, 2, -2, 3, -3, 5, 7, -7, 100, -100})
    v.push_back(ir::wrap_to(t, static_cast<uint64_t>(x)));
  for (uint64_t x : {min, max, min + 1, max - 1}) v.push_back(ir::wrap_to(t, x));
  return v;
}

// Arrays a[i] = values[i / n], b[i] = values[i % n]: every pair.
RunArg pairs(DType t, bool first, const std::vector<double>& f, const std::vector<uint64_t>& ints) {
  size_t n = is_float(t) ? f.size() : ints.size();
  RunArg a{t, {static_cast<int64_t>(n * n)}, {}, 0, 0};
  for (size_t i = 0; i < n * n; ++i) {
    size_t k = first ? i / n : i % n;
    put(a.bytes, t, is_float(t) ? f[k] : 0, is_float(t) ? 0 : ints[k]);
  }
  return a;
}
RunArg pair_arg(DType t, bool first) {
  return pairs(t, first, float_edges(), is_float(t) ? std::vector<uint64_t>{} : int_edges(t));
}
RunArg values(DType t, const std::vector<double>& f) {
  RunArg a{t, {static_cast<int64_t>(f.size())}, {}, 0, 0};
  for (double v : f) put(a.bytes, t, v, static_cast<uint64_t>(static_cast<int64_t>(v)));
  return a;
}
RunArg zeros(DType t, Shape shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return {t, shape, std::vector<uint8_t>(n * dtype_size(t), 0), 0, 0};
}
RunArg int_scalar(int32_t v) {
  return {i32, {}, {}, static_cast<uint64_t>(static_cast<int64_t>(v)), 0};
}
RunArg float_scalar(double v) {
  return {f32, {}, {}, 0, v};
}

std::string arg_types(const std::vector<RunArg>& args) {
  std::vector<std::string> items;
  for (const RunArg& a : args)
    items.push_back(fmt::format(
        "{}{}", dtype_name(a.dtype),
        a.is_array() ? fmt::format("[{}]", std::string(a.shape.size() - 1, ',')) : std::string()));
  std::string out;
  for (const std::string& item : items) out += fmt::format("{}{}", out.empty() ? "" : ",", item);
  return out;
}

struct RunCase {
  std::string name;
  const char* file;
  const char* kernel;
  std::vector<RunArg> args;
  bool debug = false;
};

std::vector<RunCase> run_cases() {
  std::vector<RunCase> cases;
  for (DType t : {i32, i8, u8, i64, u64, u16}) {
    auto a = pair_arg(t, true), b = pair_arg(t, false);
    Shape s = a.shape;
    cases.push_back(
        {fmt::format("int_binary_{}", dtype_name(t)),
         "arith.py",
         "int_binary",
         {a, b, zeros(t, s), zeros(t, s), zeros(t, s), zeros(t, s), zeros(t, s), zeros(t, s)}});
  }
  {
    auto a = pair_arg(i32, true), b = pair_arg(i32, false);
    Shape s = a.shape;
    cases.push_back({"int_binary_i32_debug",
                     "arith.py",
                     "int_binary",
                     {a, b, zeros(i32, s), zeros(i32, s), zeros(i32, s), zeros(i32, s),
                      zeros(i32, s), zeros(i32, s)},
                     true});
  }
  const std::vector<double> amounts = {-1, 0, 1, 2, 5, 7, 8, 15, 16, 31, 32, 33, 63, 64, 65, 100};
  for (auto [t, n] :
       {std::pair{i32, i32}, std::pair{u8, i64}, std::pair{i64, u32}, std::pair{i16, i8}}) {
    std::vector<uint64_t> vals = int_edges(t), amount_bits;
    for (double x : amounts) amount_bits.push_back(ir::wrap_to(n, static_cast<uint64_t>(x)));
    RunArg a{t, {static_cast<int64_t>(vals.size() * amounts.size())}, {}, 0, 0};
    RunArg b{n, a.shape, {}, 0, 0};
    for (size_t i = 0; i < vals.size() * amounts.size(); ++i) {
      put(a.bytes, t, 0, vals[i / amounts.size()]);
      put(b.bytes, n, 0, amount_bits[i % amounts.size()]);
    }
    cases.push_back({fmt::format("shifts_{}_{}", dtype_name(t), dtype_name(n)),
                     "arith.py",
                     "shifts",
                     {a, b, zeros(t, a.shape), zeros(t, a.shape)}});
  }
  for (DType t : {f32, f64}) {
    auto a = pair_arg(t, true), b = pair_arg(t, false);
    Shape s = a.shape;
    cases.push_back({fmt::format("float_binary_{}", dtype_name(t)),
                     "arith.py",
                     "float_binary",
                     {a, b, zeros(t, s), zeros(t, s), zeros(t, s), zeros(t, s)}});
    auto x = values(t, float_edges());
    cases.push_back(
        {fmt::format("to_i32_{}", dtype_name(t)), "arith.py", "to_i32", {x, zeros(i32, x.shape)}});
    cases.push_back({fmt::format("min_max_nan_{}", dtype_name(t)),
                     "arith.py",
                     "min_max_nan",
                     {a, b, zeros(t, s), zeros(t, s)}});
    cases.push_back(
        {fmt::format("rounding_{}", dtype_name(t)),
         "arith.py",
         "rounding",
         {x, zeros(t, x.shape), zeros(t, x.shape), zeros(t, x.shape), zeros(t, x.shape)}});
  }
  for (DType t : {i32, u64}) {
    auto a = pair_arg(t, true), b = pair_arg(t, false);
    cases.push_back({fmt::format("min_max_nan_{}", dtype_name(t)),
                     "arith.py",
                     "min_max_nan",
                     {a, b, zeros(t, a.shape), zeros(t, a.shape)}});
  }
  {
    auto a = pair_arg(i32, true), b = pair_arg(u32, false);
    cases.push_back({"mixed_compare_i32_u32",
                     "arith.py",
                     "mixed_compare",
                     {a, b, zeros(DType::Bool, a.shape)}});
    auto c = pair_arg(i32, true), d = pair_arg(i32, false);
    cases.push_back({"true_divide_i32", "arith.py", "true_divide", {c, d, zeros(f32, c.shape)}});
    cases.push_back(
        {"swap_and_chain_i32", "arith.py", "swap_and_chain", {c, d, zeros(i32, c.shape)}});
  }
  for (DType t : {f32, f64}) {
    RunArg x = values(t, float_edges()), y = values(t, float_edges());
    std::reverse(y.bytes.begin(), y.bytes.end());
    cases.push_back({fmt::format("glsl_helpers_{}", dtype_name(t)),
                     "arith.py",
                     "glsl_helpers",
                     {x, y, zeros(t, {x.shape[0], 8})}});
  }
  {
    RunArg x = values(i32, {0, 7, 12, 305, 98765, 123456789, 2147483647, -5, 10, 1000});
    cases.push_back(
        {"digits_reversed", "local_arrays.py", "digits_reversed", {x, zeros(i32, x.shape)}});
    cases.push_back({"digits_reversed_debug",
                     "local_arrays.py",
                     "digits_reversed",
                     {x, zeros(i32, x.shape)},
                     true});
    RunArg y = values(f32, float_edges());
    cases.push_back({"running_max", "local_arrays.py", "running_max", {y, zeros(f32, y.shape)}});
  }
  // Atomics: one thread runs every operation (the old values are deterministic), a histogram,
  // and float sums of integers (exact in any order).
  for (DType t : {i32, i64}) {
    RunArg x = values(t, {1, 2, 3, 4, 5, 6, 7, 8, 10, 5});
    cases.push_back(
        {fmt::format("every_op_{}", dtype_name(t)), "atomics.py", "every_op", {x, zeros(t, {10})}});
  }
  for (DType t : {f32, f64}) {
    RunArg x = values(t, {1.5, 2, -3, 4, 5, 10, 7});
    cases.push_back({fmt::format("float_ops_{}", dtype_name(t)),
                     "atomics.py",
                     "float_ops",
                     {x, zeros(t, {7})}});
    std::vector<double> ints;
    for (int i = 0; i < 1000; ++i) ints.push_back((i * 37) % 101 - 50);
    cases.push_back({fmt::format("float_sum_{}", dtype_name(t)),
                     "atomics.py",
                     "float_sum",
                     {values(t, ints), zeros(t, {1, 1})}});
  }
  {
    std::vector<double> v;
    for (int i = 0; i < 2000; ++i) v.push_back(std::fmod(i * 0.6180339887, 1.0));
    for (DType t : {i32, u32, i64, u64, f32, f64})
      cases.push_back({fmt::format("histogram_{}", dtype_name(t)),
                       "atomics.py",
                       "histogram",
                       {values(f32, v), int_scalar(17), zeros(t, {17})}});
  }
  cases.push_back(
      {"sequential_loops", "arith.py", "sequential_loops", {int_scalar(23), zeros(i64, {30})}});
  cases.push_back({"grid", "arith.py", "grid", {zeros(i32, {3, 4, 5})}});
  cases.push_back({"grid_debug", "arith.py", "grid", {zeros(i32, {3, 4, 5})}, true});
  {
    std::vector<double> u;
    for (int i = 0; i < 9 * 11; ++i) u.push_back(std::sin(i) * 10);
    RunArg grid = values(f32, u);
    grid.shape = {9, 11};
    cases.push_back({"stencil5", "kernels.py", "stencil5", {grid, zeros(f32, {9, 11})}});
    RunArg x = values(f32, float_edges()), y = values(f32, float_edges());
    std::reverse(y.bytes.begin(), y.bytes.end());
    cases.push_back(
        {"saxpy", "kernels.py", "saxpy", {float_scalar(-2.5), x, y, zeros(f32, x.shape)}});
    cases.push_back({"mandelbrot",
                     "kernels.py",
                     "mandelbrot",
                     {zeros(i32, {24, 32}), float_scalar(-2.0), float_scalar(-1.0),
                      float_scalar(3.0 / 32), float_scalar(2.0 / 24), int_scalar(50)}});
  }
  return cases;
}

// Runs `k` (specialized for `args`) with the generated OpenCL C on PoCL; arrays are updated.
// Returns the debug record. A kernel with workgroups runs in groups of k.workgroup_size; a kernel
// that returns a value then runs its result entry with one thread, which writes `result`.
std::vector<int32_t> run_on_pocl(const ir::Kernel& k, std::vector<RunArg>& args,
                                 std::vector<uint8_t>* result = nullptr) {
  OpenClApi& cl = OpenClApi::get();
  std::vector<int32_t> record(22, 0);
  std::string source = codegen::generate_source(k, "opencl", k.name);
  const char* text = source.c_str();
  int32_t err = 0;
  void* program = cl.CreateProgramWithSource(cl.context, 1, &text, nullptr, &err);
  // Exact floats: correctly rounded division and sqrt (contraction is off in the source).
  if (cl.BuildProgram(program, 1, &cl.device, "-cl-fp32-correctly-rounded-divide-sqrt", nullptr,
                      nullptr) != 0) {
    size_t n = 0;
    cl.GetProgramBuildInfo(program, cl.device, 0x1183 /* CL_PROGRAM_BUILD_LOG */, 0, nullptr, &n);
    std::string log(n, '\0');
    cl.GetProgramBuildInfo(program, cl.device, 0x1183, n, log.data(), nullptr);
    ADD_FAILURE() << "PoCL could not build the generated OpenCL C:\n"
                  << log << "\n"
                  << numbered(source);
    cl.ReleaseProgram(program);
    return record;
  }
  constexpr uint64_t kReadWriteCopy = 1 | 32;  // CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR
  std::vector<void*> buffers(args.size(), nullptr);
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].is_array())
      buffers[i] = cl.CreateBuffer(cl.context, kReadWriteCopy, args[i].bytes.size(),
                                   args[i].bytes.data(), &err);
  void* rec = cl.CreateBuffer(cl.context, kReadWriteCopy, record.size() * 4, record.data(), &err);
  ir::HostValues host{[&](int p) { return args[p].scalar_bits; },
                      [&](int p, int d) { return args[p].shape[d]; }};
  std::vector<int64_t> starts, steps, counts;
  int64_t total = 1;
  for (const ir::LoopDim& dim : k.dims) {
    int64_t start = ir::eval_host(*dim.start, host), stop = ir::eval_host(*dim.stop, host),
            step = ir::eval_host(*dim.step, host);
    int64_t count = stop > start ? (stop - start + step - 1) / step : 0;
    starts.push_back(start);
    steps.push_back(step);
    counts.push_back(count);
    total *= count;
  }
  // Sets the launch ABI's arguments of `kernel`; returns the next slot.
  auto set_args = [&](void* kernel) {
    uint32_t slot = 0;
    auto set = [&](size_t size, const void* value) {
      EXPECT_EQ(cl.SetKernelArg(kernel, slot, size, value), 0) << "argument " << slot;
      ++slot;
    };
    for (size_t i = 0; i < args.size(); ++i) {
      RunArg& a = args[i];
      if (a.is_array()) {
        set(sizeof(void*), &buffers[i]);
        for (int64_t& d : a.shape) set(8, &d);
      } else if (a.dtype == f32) {
        float v = static_cast<float>(a.scalar_float);
        set(4, &v);
      } else {
        set(dtype_size(a.dtype), &a.scalar_bits);
      }
    }
    for (size_t d = 0; d < counts.size(); ++d) {
      set(8, &starts[d]);
      set(8, &steps[d]);
      set(8, &counts[d]);
    }
    set(sizeof(void*), &rec);
    return slot;
  };
  void* kernel = cl.CreateKernel(program, k.name.c_str(), &err);
  EXPECT_NE(kernel, nullptr) << "no kernel " << k.name << " (error " << err << ")";
  set_args(kernel);
  // Whole groups (of 64, or the kernel's workgroup size): the threads past the total must
  // return at once.
  size_t group = k.workgroup_size > 0 ? static_cast<size_t>(k.workgroup_size) : 64;
  size_t global = std::max<size_t>(group, (total + group - 1) / group * group);
  EXPECT_EQ(cl.EnqueueNDRangeKernel(cl.queue, kernel, 1, nullptr, &global,
                                    k.workgroup_size > 0 ? &group : nullptr, 0, nullptr, nullptr),
            0);
  void* result_buffer = nullptr;
  void* result_kernel = nullptr;
  if (k.result && result) {
    result->assign(8, 0);
    result_buffer =
        cl.CreateBuffer(cl.context, kReadWriteCopy, result->size(), result->data(), &err);
    result_kernel = cl.CreateKernel(program, (k.name + "_result").c_str(), &err);
    EXPECT_NE(result_kernel, nullptr) << "no result entry (error " << err << ")";
    uint32_t slot = set_args(result_kernel);
    EXPECT_EQ(cl.SetKernelArg(result_kernel, slot, sizeof(void*), &result_buffer), 0);
    size_t one = 1;
    EXPECT_EQ(cl.EnqueueNDRangeKernel(cl.queue, result_kernel, 1, nullptr, &one, nullptr, 0,
                                      nullptr, nullptr),
              0);
  }
  for (size_t i = 0; i < args.size(); ++i)
    if (buffers[i]) {
      cl.EnqueueReadBuffer(cl.queue, buffers[i], 1, 0, args[i].bytes.size(), args[i].bytes.data(),
                           0, nullptr, nullptr);
      cl.ReleaseMemObject(buffers[i]);
    }
  if (result_buffer) {
    cl.EnqueueReadBuffer(cl.queue, result_buffer, 1, 0, result->size(), result->data(), 0, nullptr,
                         nullptr);
    cl.ReleaseMemObject(result_buffer);
    cl.ReleaseKernel(result_kernel);
  }
  cl.EnqueueReadBuffer(cl.queue, rec, 1, 0, record.size() * 4, record.data(), 0, nullptr, nullptr);
  cl.ReleaseMemObject(rec);
  cl.Finish(cl.queue);
  cl.ReleaseKernel(kernel);
  cl.ReleaseProgram(program);
  return record;
}

// The same call on the CPU backend, through the public API.
Scalar run_on_cpu(const RunCase& c, std::vector<RunArg>& args) {
  fs::path dir = std::string(c.file) == "kernels.py" ? TACK_EXAMPLES_DIR : TACK_TEST_KERNELS_DIR;
  tack::Module m = tack::Module::from_file((dir / c.file).string());
  std::vector<Array> arrays;
  arrays.reserve(args.size());
  std::vector<Arg> call;
  for (RunArg& a : args) {
    if (a.is_array()) {
      arrays.push_back(array_from_ptr(a.bytes.data(), a.shape, a.dtype, nullptr, true));
      call.emplace_back(arrays.back());
    } else if (a.dtype == f32) {
      call.emplace_back(static_cast<float>(a.scalar_float));
    } else {
      call.emplace_back(static_cast<int32_t>(a.scalar_bits));
    }
  }
  return m.kernel(c.kernel).call(call);
}

bool same_element(DType t, const uint8_t* a, const uint8_t* b, bool approximate) {
  if (t == f32 || t == f64) {
    double x, y;
    if (t == f32) {
      float fx, fy;
      std::memcpy(&fx, a, 4);
      std::memcpy(&fy, b, 4);
      x = fx, y = fy;
    } else {
      std::memcpy(&x, a, 8);
      std::memcpy(&y, b, 8);
    }
    if (std::isnan(x) && std::isnan(y)) return true;
    if (approximate && std::isfinite(x) && std::isfinite(y))
      return std::fabs(x - y) <= 4 * (t == f32 ? 1.2e-7 : 2.3e-16) * std::fabs(x);
  }
  return std::memcmp(a, b, dtype_size(t)) == 0;
}

void PrintTo(const RunCase& c, std::ostream* os) {
  *os << c.name;
}

class PoclRun : public ::testing::TestWithParam<RunCase> {};

TEST_P(PoclRun, MatchesTheCpuBackend) {
  OpenClApi& cl = OpenClApi::get();
  if (!cl.missing.empty()) GTEST_SKIP() << cl.missing;
  const RunCase& c = GetParam();
  fs::path dir = std::string(c.file) == "kernels.py" ? TACK_EXAMPLES_DIR : TACK_TEST_KERNELS_DIR;
  fs::path path = dir / c.file;
  auto file = std::make_shared<const SourceFile>(path.string(), read_text(path));
  lang::ResolvedModule module(lang::parse_module(file));
  std::vector<RunArg> gpu = c.args, cpu = c.args;
  ir::Kernel k = sema::specialize(module, c.kernel, sema::parse_arg_types(arg_types(c.args)),
                                  {"OpenCL", true});
  if (c.debug) ir::insert_bounds_checks(k);
  std::vector<int32_t> record = run_on_pocl(k, gpu);
  EXPECT_EQ(record[0], 0) << "an in-bounds kernel reported an index violation";
  run_on_cpu(c, cpu);
  for (size_t p = 0; p < c.args.size(); ++p) {
    if (!c.args[p].is_array()) continue;
    DType t = c.args[p].dtype;
    // pow is a libm call on both sides, which may differ in the last bits.
    bool approximate = std::string(c.kernel) == "float_binary" && p == 5;
    size_t size = dtype_size(t), mismatches = 0;
    for (size_t at = 0; at < cpu[p].bytes.size(); at += size) {
      if (same_element(t, &gpu[p].bytes[at], &cpu[p].bytes[at], approximate)) continue;
      if (++mismatches > 5) continue;
      uint64_t g = 0, h = 0;
      std::memcpy(&g, &gpu[p].bytes[at], size);
      std::memcpy(&h, &cpu[p].bytes[at], size);
      ADD_FAILURE() << c.name << ": argument " << k.params[p].name << "[" << at / size
                    << "]: OpenCL gives bits " << std::hex << g << ", the CPU " << h;
    }
    EXPECT_EQ(mismatches, 0u) << c.name << ": argument " << k.params[p].name;
    // The comparison means something only if the kernel wrote its outputs.
    if (k.params[p].written) {
      EXPECT_NE(gpu[p].bytes, c.args[p].bytes) << c.name << ": " << k.params[p].name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, PoclRun, ::testing::ValuesIn(run_cases()),
                         [](const ::testing::TestParamInfo<RunCase>& info) {
                           return info.param.name;
                         });

// Debug mode on the device: an out-of-bounds store is skipped and recorded (array, line, column,
// rank, store, index), in-bounds ones happen.
TEST(PoclRunDebug, RecordsTheFirstOutOfBoundsAccess) {
  OpenClApi& cl = OpenClApi::get();
  if (!cl.missing.empty()) GTEST_SKIP() << cl.missing;
  const char* src =
      "import tack\n@tack.kernel\ndef k(x, out):\n    for i in range(x.shape[0]):\n"
      "        out[i + 1] = x[i] * 2.0\n";
  ir::Kernel k = test::specialize(src, "f32[],f32[]");
  ir::insert_bounds_checks(k);
  std::vector<RunArg> args = {values(f32, {1, 2, 3, 4}), zeros(f32, {4})};
  std::vector<int32_t> r = run_on_pocl(k, args);
  EXPECT_EQ(r[0], 1);  // hit
  EXPECT_EQ(r[1], 1);  // the array: parameter 1, out
  EXPECT_EQ(r[2], 5);  // line
  EXPECT_EQ(r[3], 9);  // column
  EXPECT_EQ(r[4], 1);  // rank
  EXPECT_EQ(r[5], 1);  // a store
  EXPECT_EQ(r[6], 4);  // index, low word
  EXPECT_EQ(r[7], 0);  // index, high word
  std::vector<float> out(4);
  std::memcpy(out.data(), args[1].bytes.data(), 16);
  EXPECT_EQ(out, (std::vector<float>{0, 2, 4, 6}));
}

// A local array indexed out of bounds in debug mode: the store is skipped and recorded against
// the local array (parameter 1 here), whichever thread got there first.
TEST(PoclRunDebug, RecordsLocalArrayViolations) {
  OpenClApi& cl = OpenClApi::get();
  if (!cl.missing.empty()) GTEST_SKIP() << cl.missing;
  fs::path path = fs::path(TACK_TEST_KERNELS_DIR) / "local_arrays.py";
  auto file = std::make_shared<const SourceFile>(path.string(), read_text(path));
  lang::ResolvedModule module(lang::parse_module(file));
  ir::Kernel k =
      sema::specialize(module, "overflow", sema::parse_arg_types("f32[]"), {"OpenCL", true});
  ir::insert_bounds_checks(k);
  std::vector<RunArg> args = {zeros(f32, {10})};
  std::vector<int32_t> r = run_on_pocl(k, args);
  EXPECT_EQ(r[0], 1);  // hit
  EXPECT_EQ(r[1], 1);  // the local array buf, after the one parameter
  EXPECT_EQ(r[4], 1);  // rank
  EXPECT_EQ(r[5], 1);  // a store
  EXPECT_GE(r[6], 4);  // the index: one of 4..9
  EXPECT_LT(r[6], 10);
  std::vector<float> out(10);
  std::memcpy(out.data(), args[0].bytes.data(), 40);
  EXPECT_EQ(out, (std::vector<float>{1, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
}

// print from the device: PoCL's printf prints the CPU's lines (in any order across threads).
TEST(PoclRunPrint, PrintsWhatTheCpuPrints) {
  OpenClApi& cl = OpenClApi::get();
  if (!cl.missing.empty()) GTEST_SKIP() << cl.missing;
  fs::path path = fs::path(TACK_TEST_KERNELS_DIR) / "arith.py";
  auto file = std::make_shared<const SourceFile>(path.string(), read_text(path));
  lang::ResolvedModule module(lang::parse_module(file));
  ir::Kernel k =
      sema::specialize(module, "show", sema::parse_arg_types("f32[],i32"), {"OpenCL", true});
  RunArg x = values(f32, {0.5, 2.0, -1.25});
  auto sorted_lines = [](const std::string& text) {
    std::vector<std::string> lines;
    std::stringstream in(text);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    std::sort(lines.begin(), lines.end());
    return lines;
  };
  std::vector<RunArg> gpu = {x, int_scalar(3)};
  fflush(stdout);
  ::testing::internal::CaptureStdout();
  run_on_pocl(k, gpu);
  fflush(stdout);
  std::string device = ::testing::internal::GetCapturedStdout();
  std::vector<RunArg> cpu = {x, int_scalar(3)};
  ::testing::internal::CaptureStdout();
  run_on_cpu({"show", "arith.py", "show", cpu}, cpu);
  fflush(stdout);
  std::string host = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(host.find("x[ 1 ] = 2 True 100%"), std::string::npos) << host;
  // PoCL's printf formats doubles at float precision (the value itself is the right double):
  // its f64 line is compared as a number.
  std::vector<std::string> d = sorted_lines(device), h = sorted_lines(host);
  ASSERT_EQ(d.size(), h.size()) << "device:\n" << device << "host:\n" << host;
  for (size_t i = 0; i < d.size(); ++i) {
    if (h[i] == "4,0.1;" && d[i].rfind("4,", 0) == 0) {
      EXPECT_NEAR(std::stod(d[i].substr(2)), 0.1, 1e-8) << d[i];
      continue;
    }
    EXPECT_EQ(d[i], h[i]);
  }
}

// ---- return kernels on PoCL ----

// The result entry gives the value the CPU backend returns.
TEST(PoclRunResult, ResultEntryMatchesTheCpuBackend) {
  OpenClApi& cl = OpenClApi::get();
  if (!cl.missing.empty()) GTEST_SKIP() << cl.missing;
  fs::path path = fs::path(TACK_TEST_KERNELS_DIR) / "arith.py";
  auto file = std::make_shared<const SourceFile>(path.string(), read_text(path));
  lang::ResolvedModule module(lang::parse_module(file));
  for (DType t : {f64, f32, i32}) {
    RunArg x = values(t, {0.1, 2, 3, -7.25});
    if (!is_float(t)) x = values(t, {5, 2, 3, -7});
    ir::Kernel k =
        sema::specialize(module, "sum_of", sema::parse_arg_types(arg_types({x})), {"OpenCL", true});
    std::vector<RunArg> gpu = {x}, cpu = {x};
    std::vector<uint8_t> bytes;
    run_on_pocl(k, gpu, &bytes);
    Scalar want = run_on_cpu({"sum_of", "arith.py", "sum_of", cpu}, cpu);
    ASSERT_TRUE(want.has_value);
    ASSERT_EQ(bytes.size(), 8u);
    DType rt = k.result->type.dtype;
    if (rt == f64) {
      double got;
      std::memcpy(&got, bytes.data(), 8);
      EXPECT_EQ(got, want.value) << dtype_name(t);
    } else if (rt == f32) {
      float got;
      std::memcpy(&got, bytes.data(), 4);
      EXPECT_EQ(got, static_cast<float>(want.value)) << dtype_name(t);
    } else {
      int32_t got;
      std::memcpy(&got, bytes.data(), 4);
      EXPECT_EQ(got, want.int_value) << dtype_name(t);
    }
  }
}

// ---- workgroups on PoCL, against plain C++ references ----

constexpr int kGroup = 256;

std::vector<RunArg> run_workgroup_kernel(const char* kernel, std::vector<RunArg> args) {
  fs::path path = fs::path(TACK_TEST_KERNELS_DIR) / "workgroups.py";
  auto file = std::make_shared<const SourceFile>(path.string(), read_text(path));
  lang::ResolvedModule module(lang::parse_module(file));
  ir::Kernel k =
      sema::specialize(module, kernel, sema::parse_arg_types(arg_types(args)), {"OpenCL", true});
  EXPECT_EQ(k.workgroup_size, kGroup);
  std::vector<int32_t> record = run_on_pocl(k, args);
  EXPECT_EQ(record[0], 0);
  return args;
}

template <typename T>
std::vector<T> elements(const RunArg& a) {
  std::vector<T> v(a.bytes.size() / sizeof(T));
  std::memcpy(v.data(), a.bytes.data(), a.bytes.size());
  return v;
}

template <typename T>
RunArg array_of(DType t, const std::vector<T>& v, Shape shape = {}) {
  RunArg a{t, shape.empty() ? Shape{static_cast<int64_t>(v.size())} : shape, {}, 0, 0};
  a.bytes.resize(v.size() * sizeof(T));
  std::memcpy(a.bytes.data(), v.data(), a.bytes.size());
  return a;
}

// The collectives' fixed order (ir::Collective): a tree for sum/min/max, Hillis-Steele scans.
template <typename T, typename F>
T tree_reduce(std::vector<T> v, F op) {
  for (int h = kGroup / 2; h > 0; h >>= 1)
    for (int l = 0; l < h; ++l) v[l] = op(v[l], v[l + h]);
  return v[0];
}

template <typename T>
std::vector<T> inclusive_scan(std::vector<T> v) {
  for (int d = 1; d < kGroup; d <<= 1) {
    std::vector<T> old = v;
    for (int l = d; l < kGroup; ++l) v[l] = old[l - d] + old[l];
  }
  return v;
}

#define SKIP_WITHOUT_POCL()                              \
  do {                                                   \
    OpenClApi& cl = OpenClApi::get();                    \
    if (!cl.missing.empty()) GTEST_SKIP() << cl.missing; \
  } while (0)

TEST(PoclWorkgroups, SharedMemoryTilesWithABarrier) {
  SKIP_WITHOUT_POCL();
  std::vector<float> x(3 * kGroup);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.5f;
  auto out = run_workgroup_kernel("reverse_tiles", {array_of(f32, x), zeros(f32, {3 * kGroup})});
  std::vector<float> got = elements<float>(out[1]);
  for (size_t i = 0; i < x.size(); ++i) {
    size_t g = i / kGroup, t = i % kGroup;
    ASSERT_EQ(got[i], x[g * kGroup + kGroup - 1 - t]) << i;
  }
}

TEST(PoclWorkgroups, BlockSumMinMaxGiveEveryLaneTheTreeResult) {
  SKIP_WITHOUT_POCL();
  int n = 4 * kGroup;
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i) x[i] = std::sin(i * 0.37f) * 1000.0f + 1.0f / (i + 1);
  auto out = run_workgroup_kernel(
      "block_reductions", {array_of(f32, x), zeros(f32, {n}), zeros(f32, {n}), zeros(f32, {n})});
  std::vector<float> sums = elements<float>(out[1]), mins = elements<float>(out[2]),
                     maxs = elements<float>(out[3]);
  for (int g = 0; g < n / kGroup; ++g) {
    std::vector<float> v(x.begin() + g * kGroup, x.begin() + (g + 1) * kGroup);
    float s = tree_reduce(v, [](float a, float b) { return a + b; });
    float lo = tree_reduce(v, [](float a, float b) { return std::min(a, b); });
    float hi = tree_reduce(v, [](float a, float b) { return std::max(a, b); });
    for (int t = 0; t < kGroup; ++t) {
      int i = g * kGroup + t;
      // Bit for bit: the same order of additions as the tree.
      ASSERT_EQ(std::memcmp(&sums[i], &s, 4), 0) << i << ": " << sums[i] << " vs " << s;
      ASSERT_EQ(mins[i], lo) << i;
      ASSERT_EQ(maxs[i], hi) << i;
    }
  }
  // Integers wrap.
  std::vector<int32_t> xi(2 * kGroup);
  for (int i = 0; i < 2 * kGroup; ++i) xi[i] = (i % 3 == 0 ? 2000000000 : -i * 7919);
  auto outi = run_workgroup_kernel(
      "block_reductions", {array_of(i32, xi), zeros(i32, {2 * kGroup}), zeros(i32, {2 * kGroup}),
                           zeros(i32, {2 * kGroup})});
  std::vector<int32_t> si = elements<int32_t>(outi[1]);
  for (int g = 0; g < 2; ++g) {
    uint32_t s = 0;
    for (int t = 0; t < kGroup; ++t) s += static_cast<uint32_t>(xi[g * kGroup + t]);
    EXPECT_EQ(si[g * kGroup + 5], static_cast<int32_t>(s));
  }
}

TEST(PoclWorkgroups, BlockScanIsAnInclusivePrefixSum) {
  SKIP_WITHOUT_POCL();
  int n = 2 * kGroup;
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i) x[i] = std::cos(i * 1.3f) * 3.0f;
  auto out = run_workgroup_kernel("block_prefix", {array_of(f32, x), zeros(f32, {n})});
  std::vector<float> got = elements<float>(out[1]);
  for (int g = 0; g < 2; ++g) {
    std::vector<float> want =
        inclusive_scan(std::vector<float>(x.begin() + g * kGroup, x.begin() + (g + 1) * kGroup));
    for (int t = 0; t < kGroup; ++t)
      ASSERT_EQ(std::memcmp(&got[g * kGroup + t], &want[t], 4), 0)
          << g * kGroup + t << ": " << got[g * kGroup + t] << " vs " << want[t];
  }
  std::vector<int32_t> xi(kGroup);
  for (int i = 0; i < kGroup; ++i) xi[i] = i - 100;
  auto outi = run_workgroup_kernel("block_prefix", {array_of(i32, xi), zeros(i32, {kGroup})});
  std::vector<int32_t> gi = elements<int32_t>(outi[1]);
  int32_t acc = 0;
  for (int i = 0; i < kGroup; ++i) {
    acc += xi[i];
    ASSERT_EQ(gi[i], acc) << i;
  }
}

TEST(PoclWorkgroups, TiledMatrixProduct) {
  SKIP_WITHOUT_POCL();
  const int m = 32, kk = 48, n = 48;
  std::vector<float> a(m * kk), b(kk * n);
  for (int i = 0; i < m * kk; ++i) a[i] = static_cast<float>((i * 7) % 11 - 5);
  for (int i = 0; i < kk * n; ++i) b[i] = static_cast<float>((i * 5) % 13 - 6);
  auto out = run_workgroup_kernel(
      "matmul_tiled", {array_of(f32, a, {m, kk}), array_of(f32, b, {kk, n}), zeros(f32, {m, n})});
  std::vector<float> c = elements<float>(out[2]);
  for (int r = 0; r < m; ++r)
    for (int col = 0; col < n; ++col) {
      float acc = 0;  // small integers: exact in any order
      for (int k = 0; k < kk; ++k) acc += a[r * kk + k] * b[k * n + col];
      ASSERT_EQ(c[r * n + col], acc) << r << "," << col;
    }
}

TEST(PoclWorkgroups, CollectivesInsideSequentialLoops) {
  SKIP_WITHOUT_POCL();
  int n = 2 * kGroup, rounds = 4;
  std::vector<int32_t> x(n);
  for (int i = 0; i < n; ++i) x[i] = (i * 13) % 9;
  RunArg r = int_scalar(rounds);
  auto out = run_workgroup_kernel("iterated_sums", {array_of(i32, x), zeros(i32, {n}), r});
  std::vector<int32_t> got = elements<int32_t>(out[1]);
  for (int g = 0; g < 2; ++g) {
    std::vector<int32_t> v(x.begin() + g * kGroup, x.begin() + (g + 1) * kGroup);
    for (int k = 0; k < rounds; ++k) {
      int32_t total = 0;
      for (int32_t e : v) total += e;
      for (int32_t& e : v) e = total > 1000 ? e % 7 : e + total % 5;
    }
    for (int t = 0; t < kGroup; ++t) ASSERT_EQ(got[g * kGroup + t], v[t]) << g * kGroup + t;
  }
}

// Atomics on shared memory: a histogram per group, then added to the global one.
TEST(PoclWorkgroups, SharedMemoryHistogramWithAtomics) {
  SKIP_WITHOUT_POCL();
  int n = 3 * kGroup;
  std::vector<int32_t> v(n);
  for (int i = 0; i < n; ++i) v[i] = (i * 7919) % 1000 - 500;
  auto out = run_workgroup_kernel("shared_histogram", {array_of(i32, v), zeros(i32, {16})});
  std::vector<int32_t> got = elements<int32_t>(out[1]), want(16, 0);
  for (int32_t x : v) ++want[((x % 16) + 16) % 16];
  EXPECT_EQ(got, want);
}

// Without collectives a launch may end in a partial group: 300 iterations.
TEST(PoclWorkgroups, LaneIdsAndSharedMemoryAllowPartialGroups) {
  SKIP_WITHOUT_POCL();
  int n = 300;
  auto out = run_workgroup_kernel("lane_ids", {zeros(i32, {n}), zeros(i64, {n}), zeros(i32, {n})});
  std::vector<int32_t> lanes = elements<int32_t>(out[0]), sizes = elements<int32_t>(out[2]);
  std::vector<int64_t> groups = elements<int64_t>(out[1]);
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(lanes[i], i % kGroup) << i;
    ASSERT_EQ(groups[i], i / kGroup) << i;
    ASSERT_EQ(sizes[i], kGroup) << i;
  }
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i) x[i] = i * 0.25f;
  auto s = run_workgroup_kernel("shared_scratch", {array_of(f32, x), zeros(f32, {n})});
  std::vector<float> got = elements<float>(s[1]);
  for (int i = 0; i < n; ++i) ASSERT_EQ(got[i], x[i] * 2.0f + 1.0f) << i;
}

}  // namespace
}  // namespace tack
