#include "c_generators/support.hpp"

#include <fmt/format.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "codegen/c_family/c_generator.hpp"
#include "ir/passes.hpp"
#include "test_support.hpp"

namespace tack::cgen_test {
namespace {

// A directory for this process's files, removed at exit.
class Scratch {
 public:
  Scratch() {
    std::string t = (fs::temp_directory_path() / "tack_c_generators_XXXXXX").string();
    if (mkdtemp(t.data())) dir_ = t;
  }
  ~Scratch() {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  const fs::path& dir() const { return dir_; }

 private:
  fs::path dir_;
};

}  // namespace

// ---- files and processes ----

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

const fs::path& scratch() {
  static Scratch s;
  return s.dir();
}

Output run(const std::string& command) {
  Output out;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.text.append(buf, n);
  int status = pclose(p);
  out.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

std::string quote(const std::string& s) {
  return "'" + s + "'";
}

std::string find_program(std::initializer_list<const char*> names) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin");
  std::vector<std::string> list;
  for (std::string d; std::getline(dirs, d, ':');) list.push_back(d);
  for (const char* name : names)
    for (const std::string& d : list)
      if (!d.empty() && access((fs::path(d) / name).c_str(), X_OK) == 0)
        return (fs::path(d) / name).string();
  return "";
}

std::string numbered(const std::string& source) {
  std::stringstream in(source);
  std::string out, l;
  for (int n = 1; std::getline(in, l); ++n) out += fmt::format("{:4} {}\n", n, l);
  return out;
}

// ---- the kernels ----

std::vector<Variant> variants() {
  struct Entry {
    const char* file;
    const char* kernel;
    std::vector<const char*> args;
  };
  const std::vector<Entry> entries = {
      {"arith.py",
       "int_binary",
       {"i32[],i32[],i32[],i32[],i32[],i32[],i32[],i32[]",
        "i64[],i64[],i64[],i64[],i64[],i64[],i64[],i64[]",
        "u8[],u8[],u8[],u8[],u8[],u8[],u8[],u8[]", "i8[],i8[],i8[],i8[],i8[],i8[],i8[],i8[]",
        "u64[],u64[],u64[],u64[],u64[],u64[],u64[],u64[]",
        "i16[],i16[],i16[],i16[],i16[],i16[],i16[],i16[]"}},
      {"arith.py",
       "shifts",
       {"i32[],i32[],i32[],i32[]", "u8[],i64[],u8[],u8[]", "i64[],u32[],i64[],i64[]"}},
      {"arith.py",
       "float_binary",
       {"f32[],f32[],f32[],f32[],f32[],f32[]", "f64[],f64[],f64[],f64[],f64[],f64[]"}},
      {"arith.py", "to_i32", {"f32[],i32[]", "f64[],i32[]"}},
      {"arith.py", "true_divide", {"i32[],i32[],f32[]", "f64[],f64[],f64[]", "i64[],i64[],f64[]"}},
      {"arith.py",
       "mixed_compare",
       {"i32[],u32[],bool[]", "u8[],i8[],bool[]", "f32[],i64[],bool[]"}},
      {"arith.py",
       "min_max_nan",
       {"f32[],f32[],f32[],f32[]", "f64[],f64[],f64[],f64[]", "i32[],i32[],i32[],i32[]",
        "u64[],u64[],u64[],u64[]"}},
      {"arith.py", "rounding", {"f32[],f32[],f32[],f32[],f32[]", "f64[],f64[],f64[],f64[],f64[]"}},
      {"arith.py", "sequential_loops", {"i32,i64[]", "i64,i64[]"}},
      {"arith.py", "swap_and_chain", {"i32[],i32[],i32[]", "f32[],f32[],i64[]", "u8[],u8[],i32[]"}},
      {"arith.py", "grid", {"i32[,,]", "f64[,,]"}},
      {"arith.py", "glsl_helpers", {"f32[],f32[],f32[,]", "f64[],f64[],f64[,]"}},
      {"arith.py", "show", {"f32[],i32", "f64[],i64"}},
      {"local_arrays.py", "digits_reversed", {"i32[],i32[]", "i64[],i64[]"}},
      {"local_arrays.py", "running_max", {"f32[],f32[]", "f64[],f64[]"}},
      {"local_arrays.py", "overflow", {"f32[]"}},
      // The plain-argument form of device-class kernels (test_device_classes.cpp: same code).
      {"cells_plain.py", "cell_average", {"i32[,],i32,f32[],f32[]", "i64[,],i64,f64[],f64[]"}},
      {"cells_plain.py", "structured_average", {"i32,i32,f32[],f32[]"}},
      {"kernels.py", "vector_add", {"f32[],f32[],f32[]", "i64[],i64[],i64[]"}},
      {"kernels.py", "saxpy", {"f32,f32[],f32[],f32[]", "f64,f64[],f64[],f64[]"}},
      {"kernels.py", "stencil5", {"f32[,],f32[,]", "f64[,],f64[,]"}},
      {"kernels.py",
       "mandelbrot",
       {"i32[,],f32,f32,f32,f32,i32", "f64[,],f64,f64,f64,f64,i64", "u16[,],f32,f32,f32,f32,i32"}},
      {"kernels.py",
       "nbody_step",
       {"f32[,],f32[,],f32[],f32[,],f32[,],f32", "f64[,],f64[,],f64[],f64[,],f64[,],f64"}},
      // Vectors reach the generators as scalar operations on their components.
      {"vectors.py", "geometry", {"f32[,3],f32[,3],f32[],f32[,3],f32[],f32[],f32[,3],f32[,3]"}},
      {"vectors.py", "dynamic_index", {"f32[,3],i32[],f32[],f32[,3]"}},
      {"vectors.py", "matrix_sizes", {"f32[,,],f32[,,],f32[],f32[],f32[,,]"}},
      {"vectors.py", "int_vectors", {"i32[,3],i32[,3]"}},
      // Textures: sampled by the texture unit, and in software (interp="linear_exact").
      {"vectors.py", "sample3d", {"tex3d,f32[,3],f32[]", "tex3d_exact,f32[,3],f32[]"}},
      {"vectors.py", "sample2d", {"tex2d,f32[,],f32[]"}},
      {"vectors.py", "march_volume", {"tex3d,f32[,],i32"}},
      // Kernels that return a value: a second entry computes the result.
      {"arith.py", "sum_of", {"f64[]", "f32[]", "i32[]"}},
      // Scalar reductions: one thread per lane, the epilogue in the result entry.
      {"reductions.py", "total", {"f32[]", "f64[]", "i32[]", "u8[]"}},
      {"reductions.py", "several", {"f32[,],f32", "f64[,],f64"}},
      {"reductions.py", "any_above", {"f32[],f32", "i64[],i32"}},
      // Atomics on every dtype each target declares.
      {"atomics.py",
       "histogram",
       {"f32[],i32,i32[]", "f64[],i32,u32[]", "f32[],i32,i64[]", "f32[],i32,f32[]",
        "f32[],i32,u64[]", "f32[],i32,f64[]"}},
      {"atomics.py", "every_op", {"i32[],i32[]", "i64[],i64[]"}},
      {"atomics.py", "float_ops", {"f32[],f32[]", "f64[],f64[]"}},
      {"atomics.py", "float_sum", {"f32[],f32[,]", "f64[],f64[,]"}},
      // Workgroups: shared memory, barriers, lane ids, block collectives.
      {"workgroups.py", "reverse_tiles", {"f32[],f32[]", "i64[],i64[]", "u8[],u8[]"}},
      {"workgroups.py",
       "block_reductions",
       {"f32[],f32[],f32[],f32[]", "f64[],f64[],f64[],f64[]", "i32[],i32[],i32[],i32[]",
        "u64[],u64[],u64[],u64[]", "i8[],i8[],i8[],i8[]"}},
      {"workgroups.py", "block_prefix", {"f32[],f32[]", "i32[],i32[]", "f64[],f64[]"}},
      {"workgroups.py", "matmul_tiled", {"f32[,],f32[,],f32[,]", "f64[,],f64[,],f64[,]"}},
      {"workgroups.py", "iterated_sums", {"i32[],i32[],i32", "i64[],i64[],i32"}},
      {"workgroups.py", "lane_ids", {"i32[],i64[],i32[]"}},
      {"workgroups.py", "shared_scratch", {"f32[],f32[]"}},
      {"workgroups.py", "shared_histogram", {"i32[],i32[]", "i32[],u32[]", "i64[],f32[]"}},
      // tack.algorithms (python/tack/algorithms/kernels.py): what every GPU backend runs.
      {"algorithms", "sum_float", {"f32[]", "f64[]"}},
      {"algorithms", "sum_signed", {"i32[]", "bool[]"}},
      {"algorithms", "min_unsigned", {"u8[]", "u64[]"}},
      {"algorithms", "absmax_signed", {"i64[]"}},
      {"algorithms", "dot_float", {"f32[],f32[]"}},
      {"algorithms", "sum_squared_deviations", {"i32[],f64[]", "f32[],f32[]"}},
      {"algorithms", "scan_block_totals", {"f32[],f32[],i32", "i32[],i64[],i32"}},
      {"algorithms", "scan_exclusive_in_place", {"f32[]", "i64[]"}},
      {"algorithms", "scan_inclusive_blocks", {"f32[],f32[],f32[],f32[],i32"}},
      {"algorithms",
       "histogram_bins",
       {"f32[],f32[],i16[],i64,f32,f32,f32", "i32[],f64[],i32[],i64,f64,f64,f64"}},
      {"algorithms", "histogram_count", {"i16[],i32[,],i64", "i32[],i32[,],i64"}},
      {"algorithms", "histogram_total", {"i32[,],i64[]"}},
      {"algorithms", "order_keys_float32", {"u32[],u32[]"}},
      {"algorithms", "order_keys_float64", {"u64[],u64[]"}},
      {"algorithms", "order_keys_signed64", {"i64[],u64[]"}},
      {"algorithms", "radix_count", {"u32[],i64[,],i32,i32"}},
      {"algorithms", "radix_scatter", {"u32[],i64[],i64[,],u32[],i64[],i32,i32"}},
      {"algorithms", "gather_checked", {"f32[],i64[],f32[]"}},
      {"algorithms", "segmented_min", {"f32[],i64[],f32[],f32[]"}},
      {"algorithms", "segmented_inclusive_scan", {"i64[],i64[],i64[]"}},
  };
  std::vector<Variant> out;
  for (const Entry& e : entries) {
    for (size_t i = 0; i < e.args.size(); ++i)
      out.push_back({e.file, e.kernel, e.args[i], false, fmt::format("{}_{}", e.kernel, i)});
    // Debug mode (index checks) for the first specialization of each kernel.
    out.push_back({e.file, e.kernel, e.args[0], true, fmt::format("{}_0_debug", e.kernel)});
  }
  return out;
}

ir::Kernel specialize(const Variant& v) {
  fs::path dir = std::string(v.file) == "kernels.py" ? TACK_EXAMPLES_DIR : TACK_TEST_KERNELS_DIR;
  fs::path path =
      std::string(v.file) == "algorithms" ? fs::path(TACK_ALGORITHMS_KERNELS) : dir / v.file;
  auto file = std::make_shared<const SourceFile>(path.string(), read_text(path));
  lang::ResolvedModule module(lang::parse_module(file));
  sema::TargetRules rules{"a GPU backend", true};
  rules.hardware_textures = true;
  ir::Kernel k = sema::specialize(module, v.kernel, sema::parse_arg_types(v.args), rules);
  if (v.debug) ir::insert_bounds_checks(k);
  return k;
}

std::string source_of(const char* src, const std::string& args, const std::string& target,
                      bool debug) {
  ir::Kernel k = test::specialize(src, args);
  if (debug) ir::insert_bounds_checks(k);
  return codegen::generate_source(k, target, "k");
}

void PrintTo(const Variant& v, std::ostream* os) {
  *os << v.name;
}

const char* const kSaxpy =
    "import tack\n@tack.kernel\ndef k(a, x, y, out):\n    for i in range(x.shape[0]):\n"
    "        out[i] = a * x[i] + y[i]\n";

// The variants are instantiated here, for the compilers of every target file.
INSTANTIATE_TEST_SUITE_P(Kernels, Compile, ::testing::ValuesIn(variants()),
                         [](const ::testing::TestParamInfo<Variant>& info) {
                           return info.param.name;
                         });

}  // namespace tack::cgen_test
