// The shared C-family printer, across targets: the launch ABI, names, results, atomics,
// workgroups, literals, debug mode and print, as each dialect spells them.
#include <fmt/format.h>

#include "c_generators/support.hpp"
#include "codegen/c_family/c_generator.hpp"
#include "test_support.hpp"

#include <filesystem>

namespace tack {
namespace {

using namespace cgen_test;

TEST(CGenerators, ParametersFollowTheLaunchAbi) {
  std::string s = source_of(kSaxpy, "f32,f32[],f32[],f32[]", "cuda");
  EXPECT_NE(s.find("extern \"C\" __global__ void k(\n"
                   "    float a,\n"
                   "    const float* x,\n"
                   "    long long x_shape0,\n"
                   "    const float* y,\n"
                   "    long long y_shape0,\n"
                   "    float* out,\n"
                   "    long long out_shape0,\n"
                   "    long long tack_start0,\n"
                   "    long long tack_step0,\n"
                   "    long long tack_count0,\n"
                   "    int* tack_debug) {\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("if (tack_gid >= tack_count0) return;"), std::string::npos) << s;
  EXPECT_NE(s.find("out[i] = (a * x[i]) + y[i];"), std::string::npos) << s;
}

TEST(CGenerators, MultiDimensionalLoopsAreRowMajor) {
  const char* src =
      "import tack\n@tack.kernel\ndef k(out):\n"
      "    for i, j in tack.ndrange((1, out.shape[0]), out.shape[1]):\n"
      "        out[i, j] = 1.0\n";
  std::string s = source_of(src, "f32[,]", "opencl");
  EXPECT_NE(s.find("if (tack_gid >= tack_count0 * tack_count1) return;"), std::string::npos) << s;
  EXPECT_NE(s.find("long tack_idx1 = tack_rem % tack_count1;"), std::string::npos) << s;
  EXPECT_NE(s.find("out[i * out_shape1 + j] = 1.0f;"), std::string::npos) << s;
}

// Identifiers that are keywords, types or builtins in some target are renamed with a suffix, and
// the result compiles everywhere.
TEST(CGenerators, RenamesIdentifiersReservedByATarget) {
  const char* src =
      "import tack\n@tack.kernel\ndef k(kernel, half, local, out):\n"
      "    for i in range(out.shape[0]):\n"
      "        default = kernel[i] * half\n"
      "        private = default + 1.0\n"
      "        constant = private * 2.0\n"
      "        tack_gid = 1\n"
      "        float4 = 2.0\n"
      "        sqrt_ = 3.0\n"
      "        out[i] = private + constant + tack_gid + float4 + local + sqrt_\n";
  for (const char* target : {"cuda", "hip", "opencl", "metal"}) {
    std::string s = source_of(src, "f32[],f32,i32,f32[]", target);
    for (const char* renamed : {"kernel_[i]", "half_", "local_", "default_ =", "private_ =",
                                "constant_ =", "float4_ =", "vtack_gid =", "kernel_shape0"})
      EXPECT_NE(s.find(renamed), std::string::npos) << target << ": " << renamed << "\n" << s;
    for (const char* kept : {"sqrt_ =", " out[i] ="})
      EXPECT_NE(s.find(kept), std::string::npos) << target << ": " << kept << "\n" << s;
    EXPECT_EQ(s.find(" kernel["), std::string::npos) << s;
    EXPECT_EQ(s.find(" default ="), std::string::npos) << s;
  }
  // And the renamed code compiles (each skips when its compiler is missing).
  std::string args = "f32[],f32,i32,f32[]";
  {
    SCOPED_TRACE("cuda");
    compile_cuda(source_of(src, args, "cuda"), "rename_cuda");
  }
  {
    SCOPED_TRACE("opencl");
    compile_opencl_clang(source_of(src, args, "opencl"), "rename_opencl");
  }
  {
    SCOPED_TRACE("metal");
    compile_metal(source_of(src, args, "metal"), "rename_metal");
  }
}

// Lines of `b` not matched in `a` and lines of `a` not matched in `b`, by a longest common

TEST(CGenerators, KernelsThatReturnAValueGetAResultEntry) {
  const char* src =
      "import tack\n@tack.kernel\ndef k(x, n) -> tack.f32:\n    m = n * 2\n"
      "    for i in range(x.shape[0]):\n        x[i] = 1.0\n    return x[0] + m\n";
  for (const char* target : {"cuda", "opencl", "metal"}) {
    std::string s = source_of(src, "f32[],i32", target);
    size_t main = s.find(" k(\n"), result = s.find(" k_result(\n");
    ASSERT_NE(main, std::string::npos) << s;
    ASSERT_NE(result, std::string::npos) << s;
    std::string rest = s.substr(result);
    EXPECT_NE(rest.find("float* tack_result"), std::string::npos) << rest;
    EXPECT_NE(rest.find("tack_result[0] = x[0"), std::string::npos) << rest;
    EXPECT_NE(rest.find("] + ((float)(m));"), std::string::npos) << rest;
    EXPECT_NE(rest.find("m = "), std::string::npos) << "the prelude is recomputed\n" << rest;
  }
}

TEST(CGenerators, AtomicsOnUndeclaredDtypesAreRefusedNamingTheTarget) {
  const char* src =
      "import tack\n@tack.kernel\ndef k(x, total):\n    for i in range(x.shape[0]):\n"
      "        tack.atomic_add(total, 0, x[i])\n";
  struct Want {
    const char* target;
    const char* args;
    const char* words;
  };
  for (Want w : {Want{"metal", "i64[],i64[]", "Metal has no atomics on i64"},
                 Want{"level_zero", "f64[],f64[]", "Level Zero (OpenCL C) has no atomics on f64"},
                 Want{"level_zero", "u64[],u64[]", "has no atomics on u64"}}) {
    ir::Kernel k = test::specialize(src, w.args);
    try {
      codegen::generate_source(k, w.target, "k");
      FAIL() << w.target << " " << w.args;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(w.words), std::string::npos) << e.what();
    }
  }
  // The same kernels are fine where the dtype is declared.
  EXPECT_NO_THROW(codegen::generate_source(test::specialize(src, "f64[],f64[]"), "opencl", "k"));
  EXPECT_NO_THROW(codegen::generate_source(test::specialize(src, "f32[],f32[]"), "metal", "k"));
}

TEST(CGenerators, AtomicsAreNativeOrCompareAndSwapLoops) {
  const char* src =
      "import tack\n@tack.kernel\ndef k(x, total):\n    for i in range(x.shape[0]):\n"
      "        tack.atomic_add(total, 0, x[i])\n";
  std::string c = source_of(src, "i32[],i32[]", "cuda");
  EXPECT_NE(c.find("return atomicAdd(p, v);"), std::string::npos) << c;
  std::string o = source_of(src, "f32[],f32[]", "opencl");
  EXPECT_NE(o.find("atomic_cmpxchg((volatile __global uint*)p, e, d)"), std::string::npos) << o;
  std::string m = source_of(src, "u32[],u32[]", "metal");
  EXPECT_NE(m.find("metal::atomic_fetch_add_explicit((device metal::atomic_uint*)p, v, "
                   "metal::memory_order_relaxed)"),
            std::string::npos)
      << m;
  std::string d = source_of(src, "i64[],i64[]", "opencl");
  EXPECT_NE(d.find("#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable"),
            std::string::npos)
      << d;
}

TEST(CGenerators, WorkgroupsUseEachTargetsSpelling) {
  fs::path path = fs::path(TACK_TEST_KERNELS_DIR) / "workgroups.py";
  auto file = std::make_shared<const SourceFile>(path.string(), read_text(path));
  lang::ResolvedModule module(lang::parse_module(file));
  ir::Kernel k = sema::specialize(module, "reverse_tiles", sema::parse_arg_types("f32[],f32[]"),
                                  {"a GPU backend", true});
  ir::Kernel r =
      sema::specialize(module, "block_reductions", sema::parse_arg_types("f32[],f32[],f32[],f32[]"),
                       {"a GPU backend", true});
  struct Want {
    const char* target;
    std::vector<const char*> words;
  };
  for (const Want& w :
       {Want{"cuda", {"__shared__ float tile[256];", "__syncthreads();", "(int)threadIdx.x"}},
        Want{"opencl",
             {"__local float tile[256];", "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);",
              "(int)get_local_id(0)"}},
        Want{"metal",
             {"threadgroup float tile[256];", "metal::threadgroup_barrier(", "(int)tack_lane",
              "uint tack_lane [[thread_position_in_threadgroup]]"}}}) {
    std::string s = codegen::generate_source(k, w.target, "k");
    for (const char* word : w.words)
      EXPECT_NE(s.find(word), std::string::npos) << word << "\n" << s;
    std::string t = codegen::generate_source(r, w.target, "k");
    EXPECT_NE(t.find("tack_scratch_f32[256];"), std::string::npos) << t;
    EXPECT_NE(t.find("for (int h = 128; h > 0; h >>= 1)"), std::string::npos) << t;
  }
}

TEST(CGenerators, UnknownTargetIsAnError) {
  ir::Kernel k = test::specialize(kSaxpy, "f32,f32[],f32[],f32[]");
  EXPECT_THROW(codegen::generate_source(k, "vulkan", "k"), Error);
  // level_zero compiles OpenCL C.
  EXPECT_EQ(codegen::generate_source(k, "level_zero", "k"),
            codegen::generate_source(k, "opencl", "k"));
}

// Float literals print the shortest decimal that reads back as the same value; infinities are
// bit patterns.
TEST(CGenerators, FloatLiteralsRoundTrip) {
  const char* src =
      "import tack\nimport math\n@tack.kernel\ndef k(x, out):\n    for i in range(x.shape[0]):\n"
      "        out[i] = x[i] * 0.1 + 0.3333333333333333 + 1e-300 + 16777217.0 + math.inf\n";
  std::string f = source_of(src, "f32[],f32[]", "cuda");
  for (const char* want :
       {"0.1f", "0.33333334f", "0.0f", "16777216.0f", "__uint_as_float(0x7f800000U)"})
    EXPECT_NE(f.find(want), std::string::npos) << want << "\n" << f;
  std::string d = source_of(src, "f64[],f64[]", "cuda");
  for (const char* want : {"0.1", "0.3333333333333333", "1e-300", "16777217.0",
                           "__longlong_as_double((long long)0x7ff0000000000000ULL)"})
    EXPECT_NE(d.find(want), std::string::npos) << want << "\n" << d;
  EXPECT_EQ(d.find("0.1f"), std::string::npos) << d;
  std::string o = source_of(src, "f64[],f64[]", "opencl");
  EXPECT_NE(o.find("as_double(0x7ff0000000000000UL)"), std::string::npos) << o;
  std::string m = source_of(src, "f32[],f32[]", "metal");
  EXPECT_NE(m.find("as_type<float>(0x7f800000U)"), std::string::npos) << m;
}

TEST(CGenerators, DebugModeClaimsTheRecordWithCompareAndSwap) {
  EXPECT_EQ(source_of(kSaxpy, "f32,f32[],f32[],f32[]", "cuda").find("tack_report"),
            std::string::npos);
  struct Want {
    const char* target;
    const char* cas;
  };
  for (Want w : {Want{"cuda", "won = atomicCAS(rec, 0, 1) == 0;"},
                 Want{"hip", "won = atomicCAS(rec, 0, 1) == 0;"},
                 Want{"opencl", "won = atomic_cmpxchg((volatile __global int*)rec, 0, 1) == 0;"},
                 Want{"metal",
                      "metal::atomic_compare_exchange_weak_explicit((device "
                      "metal::atomic_int*)rec, &expected, 1"}}) {
    std::string s = source_of(kSaxpy, "f32,f32[],f32[],f32[]", w.target, true);
    EXPECT_NE(s.find(w.cas), std::string::npos) << w.target << "\n" << s;
    // Loads go through a checked helper (0 when out of bounds), the store is skipped.
    EXPECT_NE(s.find("tack_load1_f32(x, x_shape0, i, tack_debug, 1, 5, 22)"), std::string::npos)
        << s;
    EXPECT_NE(s.find("if (("), std::string::npos) << s;
    EXPECT_NE(s.find("tack_report1(tack_debug, 3, 5, 9, 1, tack_i);"), std::string::npos) << s;
  }
}

TEST(CGenerators, PrintIsPrintfAndIgnoredOnMetal) {
  const char* src =
      "import tack\n@tack.kernel\ndef k(x):\n    for i in range(x.shape[0]):\n"
      "        print(\"a\\\"b%\", i, x[i], x[i] > 0.0)\n";
  std::string c = source_of(src, "f32[]", "cuda");
  EXPECT_NE(c.find("printf(\"a\\\"b%% %lld %.7g %s\\n\", ((long long)(i)), (double)x[i], ((x[i] > "
                   "0.0f) ? \"True\" : \"False\"));"),
            std::string::npos)
      << c;
  std::string o = source_of(src, "f32[]", "opencl");
  EXPECT_NE(o.find("printf(\"a\\\"b%% %ld %.7g %s\\n\", ((long)(i)), x[i], "), std::string::npos)
      << o;
  std::string m = source_of(src, "f32[]", "metal");
  EXPECT_NE(m.find("// print(...) is ignored on Metal"), std::string::npos) << m;
  EXPECT_EQ(m.find("printf"), std::string::npos) << m;
}

// A texture sampled in hardware is a handle parameter (no address, no extents) and one call; Metal
// numbers textures apart from buffers. interp="linear_exact" keeps the software path: loads.
TEST(CGenerators, TexturesAreHandlesSampledByEachTargetsCall) {
  Variant v{"vectors.py", "sample3d", "tex3d,f32[,3],f32[]", false, "sample3d"};
  ir::Kernel k = specialize(v);
  auto gen = [&](const char* target) { return codegen::generate_source(k, target, "k"); };
  std::string cuda = gen("cuda"), hip = gen("hip"), cl = gen("opencl"), l0 = gen("level_zero"),
              msl = gen("metal");
  EXPECT_NE(cuda.find("    cudaTextureObject_t tex,\n    const float* coords,"), std::string::npos)
      << cuda;
  EXPECT_NE(cuda.find("tex3D<float>(tex, "), std::string::npos) << cuda;
  EXPECT_NE(hip.find("    hipTextureObject_t tex,\n"), std::string::npos) << hip;
  for (const std::string& s : {cl, l0}) {
    EXPECT_NE(s.find("__constant sampler_t tack_sampler = CLK_NORMALIZED_COORDS_TRUE | "
                     "CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_LINEAR;"),
              std::string::npos)
        << s;
    EXPECT_NE(s.find("    __read_only image3d_t tex,\n"), std::string::npos) << s;
    EXPECT_NE(s.find("read_imagef(tex, tack_sampler, (float4)("), std::string::npos) << s;
  }
  EXPECT_NE(msl.find("    metal::texture3d<float> tex [[texture(0)]],\n"
                     "    device const float* coords [[buffer(0)]],"),
            std::string::npos)
      << msl;
  EXPECT_NE(msl.find("tex.sample(tack_sampler, float3("), std::string::npos) << msl;
  EXPECT_EQ(cuda.find("tex_shape"), std::string::npos) << "a hardware texture has no extents";

  Variant exact{"vectors.py", "sample3d", "tex3d_exact,f32[,3],f32[]", false, "sample3d_exact"};
  std::string software = codegen::generate_source(specialize(exact), "opencl", "k");
  EXPECT_EQ(software.find("read_imagef"), std::string::npos) << software;
  EXPECT_NE(software.find("__global const float* tex,"), std::string::npos) << software;
}

}  // namespace
}  // namespace tack
