// The CUDA and HIP generators: every kernel compiled by NVRTC (dlopen'ed from /usr/local/cuda) to
// PTX for compute_90, then by ptxas for sm_90, and by hipRTC (inside libamdhip64.so.5, loaded with
// dlmopen) to a gfx90a code object; HIP's code is CUDA's but for the include.
#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "c_generators/support.hpp"
#include "codegen/c_family/c_generator.hpp"
#include "test_support.hpp"

namespace tack {
namespace cgen_test {
namespace {

// NVRTC and hipRTC have the same shape: create, compile, log, code, destroy.
class RuntimeCompiler {
 public:
  using Create = int (*)(void**, const char*, const char*, int, const char* const*,
                         const char* const*);
  using Compile = int (*)(void*, int, const char* const*);
  using Size = int (*)(void*, size_t*);
  using Get = int (*)(void*, char*);
  using Destroy = int (*)(void**);

  bool load(void* lib, const std::string& prefix, const char* code_size, const char* code) {
    auto sym = [&](const std::string& name) { return dlsym(lib, name.c_str()); };
    create_ = reinterpret_cast<Create>(sym(prefix + "CreateProgram"));
    compile_ = reinterpret_cast<Compile>(sym(prefix + "CompileProgram"));
    log_size_ = reinterpret_cast<Size>(sym(prefix + "GetProgramLogSize"));
    log_ = reinterpret_cast<Get>(sym(prefix + "GetProgramLog"));
    code_size_ = reinterpret_cast<Size>(sym(code_size));
    code_ = reinterpret_cast<Get>(sym(code));
    destroy_ = reinterpret_cast<Destroy>(sym(prefix + "DestroyProgram"));
    return create_ && compile_ && log_size_ && log_ && code_size_ && code_ && destroy_;
  }

  // The compiled code, or nothing with the log in `log`.
  bool compile(const std::string& source, const std::string& name,
               const std::vector<const char*>& options, std::string& code, std::string& log) {
    void* prog = nullptr;
    if (create_(&prog, source.c_str(), name.c_str(), 0, nullptr, nullptr) != 0) {
      log = "could not create the program";
      return false;
    }
    int rc = compile_(prog, static_cast<int>(options.size()), options.data());
    size_t n = 0;
    log_size_(prog, &n);
    log.assign(n, '\0');
    if (n) log_(prog, log.data());
    if (rc == 0) {
      code_size_(prog, &n);
      code.assign(n, '\0');
      if (n) code_(prog, code.data());
      while (!code.empty() && code.back() == '\0') code.pop_back();
    }
    destroy_(&prog);
    return rc == 0;
  }

 private:
  Create create_ = nullptr;
  Compile compile_ = nullptr;
  Size log_size_ = nullptr, code_size_ = nullptr;
  Get log_ = nullptr, code_ = nullptr;
  Destroy destroy_ = nullptr;
};

std::string cuda_root() {
  for (const char* var : {"CUDA_PATH", "CUDA_HOME"})
    if (const char* v = std::getenv(var); v && *v) return v;
  return "/usr/local/cuda";
}

struct Nvrtc {
  RuntimeCompiler rtc;
  std::string ptxas;
  std::string missing;  // why it cannot run, or ""

  Nvrtc() {
    std::string root = cuda_root();
    void* lib = nullptr;
    for (const char* rel : {"lib64/libnvrtc.so", "targets/x86_64-linux/lib/libnvrtc.so",
                            "lib64/libnvrtc.so.13", "lib64/libnvrtc.so.12"}) {
      lib = dlopen((fs::path(root) / rel).c_str(), RTLD_NOW | RTLD_LOCAL);
      if (lib) break;
    }
    if (!lib) {
      missing = fmt::format("NVRTC not found in {} (libnvrtc.so)", root);
      return;
    }
    if (!rtc.load(lib, "nvrtc", "nvrtcGetPTXSize", "nvrtcGetPTX")) {
      missing = "libnvrtc.so lacks the nvrtc* functions";
      return;
    }
    ptxas = (fs::path(root) / "bin/ptxas").string();
    if (access(ptxas.c_str(), X_OK) != 0) missing = fmt::format("ptxas not found in {}/bin", root);
  }
  static Nvrtc& get() {
    static Nvrtc n;
    return n;
  }
};

// hipRTC and PoCL both register options in one LLVM 15 library and abort when they share a
// namespace of libraries: hipRTC gets a namespace of its own.
struct HipRtc {
  RuntimeCompiler rtc;
  std::string missing;

  HipRtc() {
    void* lib = nullptr;
    for (const char* name : {"libamdhip64.so.5", "libamdhip64.so"}) {
      lib = dlmopen(LM_ID_NEWLM, name, RTLD_NOW | RTLD_LOCAL);
      if (lib) break;
    }
    if (!lib) {
      missing =
          "hipRTC not found (libamdhip64.so.5: apt-get install libamdhip64-dev "
          "rocm-device-libs)";
      return;
    }
    if (!rtc.load(lib, "hiprtc", "hiprtcGetCodeSize", "hiprtcGetCode"))
      missing = "libamdhip64.so lacks the hiprtc* functions";
  }
  static HipRtc& get() {
    static HipRtc h;
    return h;
  }
};

}  // namespace

void compile_cuda(const std::string& source, const std::string& name) {
  Nvrtc& nv = Nvrtc::get();
  if (!nv.missing.empty()) GTEST_SKIP() << nv.missing;
  // No fast math: --fmad=false forbids contracting a * b + c into an FMA, and division and sqrt
  // stay correctly rounded (NVRTC's default without --use_fast_math). The CUDA backend passes
  // the same options.
  std::vector<const char*> options = {"--gpu-architecture=compute_90", "--fmad=false"};
  std::string ptx, log;
  ASSERT_TRUE(nv.rtc.compile(source, name + ".cu", options, ptx, log))
      << "NVRTC rejected the generated CUDA C:\n"
      << log << "\n"
      << numbered(source);
  fs::path file = scratch() / (name + ".ptx");
  write_text(file, ptx);
  Output out = run(fmt::format("{} -arch=sm_90 {} -o {}", quote(nv.ptxas), quote(file.string()),
                               quote((scratch() / (name + ".cubin")).string())));
  EXPECT_EQ(out.status, 0) << "ptxas rejected the PTX:\n" << out.text << "\n" << ptx;
}

void compile_hip(const std::string& source, const std::string& name) {
  HipRtc& hip = HipRtc::get();
  if (!hip.missing.empty()) GTEST_SKIP() << hip.missing;
  // -ffp-contract=off: clang contracts into FMAs by default for HIP.
  std::vector<const char*> options = {"--offload-arch=gfx90a", "-ffp-contract=off"};
  std::string code, log;
  ASSERT_TRUE(hip.rtc.compile(source, name + ".hip", options, code, log))
      << "hipRTC rejected the generated HIP C:\n"
      << log << "\n"
      << numbered(source);
  ASSERT_GE(code.size(), 4u);
  EXPECT_EQ(code.substr(0, 4),
            "\x7f"
            "ELF")
      << "hipRTC's output is not a code object";
}

}  // namespace cgen_test

namespace {

using namespace cgen_test;

TEST_P(Compile, CudaNvrtcAndPtxas) {
  const Variant& v = GetParam();
  compile_cuda(codegen::generate_source(specialize(v), "cuda", v.kernel), v.name);
}

TEST_P(Compile, HipRtc) {
  const Variant& v = GetParam();
  compile_hip(codegen::generate_source(specialize(v), "hip", v.kernel), v.name);
}

std::pair<std::vector<std::string>, std::vector<std::string>> line_diff(const std::string& a,
                                                                        const std::string& b) {
  auto split = [](const std::string& s) {
    std::vector<std::string> lines;
    std::stringstream in(s);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    return lines;
  };
  std::vector<std::string> x = split(a), y = split(b);
  std::vector<std::vector<int>> lcs(x.size() + 1, std::vector<int>(y.size() + 1, 0));
  for (size_t i = x.size(); i-- > 0;)
    for (size_t j = y.size(); j-- > 0;)
      lcs[i][j] = x[i] == y[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  std::vector<std::string> only_a, only_b;
  size_t i = 0, j = 0;
  while (i < x.size() || j < y.size()) {
    if (i < x.size() && j < y.size() && x[i] == y[j]) {
      ++i, ++j;
    } else if (j < y.size() && (i == x.size() || lcs[i][j + 1] >= lcs[i + 1][j])) {
      only_b.push_back(y[j++]);
    } else {
      only_a.push_back(x[i++]);
    }
  }
  return {only_a, only_b};
}

// Beyond the include, a texture kernel's HIP differs in its parameters' handle type only: each
// line only in HIP is a line only in CUDA with cudaTextureObject_t spelled hipTextureObject_t.
TEST(CGenerators, HipDiffersFromCudaOnlyInIncludeAndTextureType) {
  int texture_kernels = 0;
  for (const Variant& v : variants()) {
    ir::Kernel k = specialize(v);
    auto [only_cuda, only_hip] = line_diff(codegen::generate_source(k, "cuda", v.kernel),
                                           codegen::generate_source(k, "hip", v.kernel));
    ASSERT_EQ(only_hip.size(), only_cuda.size() + 1) << v.name;
    EXPECT_EQ(only_hip[0], "#include <hip/hip_runtime.h>") << v.name;
    for (size_t i = 0; i < only_cuda.size(); ++i) {
      std::string line = only_cuda[i];
      size_t at = line.find("cudaTextureObject_t");
      ASSERT_NE(at, std::string::npos) << v.name << ": only in CUDA: " << line;
      line.replace(at, std::string_view("cudaTextureObject_t").size(), "hipTextureObject_t");
      EXPECT_EQ(only_hip[i + 1], line) << v.name;
    }
    texture_kernels += !only_cuda.empty();
  }
  // sample3d, sample2d and march_volume, each also in debug mode.
  EXPECT_EQ(texture_kernels, 6);
}

// Compiles `program` (static_asserts of a backend's own declarations against a vendor's headers
// in `includes`) with the first C++ compiler on PATH; the test fails with the compiler's output.
void check_layouts(const char* name, const char* includes, const char* program) {
  std::string cxx = find_program({"clang++", "g++", "c++"});
  if (cxx.empty()) GTEST_SKIP() << "no C++ compiler on PATH";
  fs::path file = scratch() / name;
  write_text(file, program);
  Output out = run(fmt::format("{} -std=c++17 -fsyntax-only -I {} -I {} {}", quote(cxx),
                               quote(includes), quote(TACK_SOURCE_DIR), quote(file.string())));
  EXPECT_EQ(out.status, 0) << out.text;
}

// The CUDA backend declares cuda.h's texture structures itself (it needs no CUDA header to
// build): each must have the toolkit's size and field offsets.
TEST(CudaApi, TextureStructuresHaveTheLayoutOfCudaH) {
  const char* cuda_h = "/usr/local/cuda/include/cuda.h";
  if (!fs::exists(cuda_h)) GTEST_SKIP() << cuda_h << " not found (the CUDA toolkit)";
  // cu_api.hpp first: CU_TRSF_NORMALIZED_COORDINATES is a macro in cuda.h.
  check_layouts("cuda_layout.cpp", "/usr/local/cuda/include", R"(#include <cstddef>
#include "backends/cuda/cu_api.hpp"
constexpr unsigned kNormalized = tack::cuda::CU_TRSF_NORMALIZED_COORDINATES;
#include <cuda.h>
using namespace tack::cuda;
#define SAME(ours, theirs, a, b) static_assert(offsetof(ours, a) == offsetof(theirs, b), #a);
static_assert(sizeof(CuArray3dDescriptor) == sizeof(CUDA_ARRAY3D_DESCRIPTOR));
SAME(CuArray3dDescriptor, CUDA_ARRAY3D_DESCRIPTOR, depth, Depth)
SAME(CuArray3dDescriptor, CUDA_ARRAY3D_DESCRIPTOR, format, Format)
SAME(CuArray3dDescriptor, CUDA_ARRAY3D_DESCRIPTOR, flags, Flags)
static_assert(sizeof(CuMemcpy3d) == sizeof(CUDA_MEMCPY3D));
SAME(CuMemcpy3d, CUDA_MEMCPY3D, src_memory_type, srcMemoryType)
SAME(CuMemcpy3d, CUDA_MEMCPY3D, src_device, srcDevice)
SAME(CuMemcpy3d, CUDA_MEMCPY3D, src_pitch, srcPitch)
SAME(CuMemcpy3d, CUDA_MEMCPY3D, src_height, srcHeight)
SAME(CuMemcpy3d, CUDA_MEMCPY3D, dst_memory_type, dstMemoryType)
SAME(CuMemcpy3d, CUDA_MEMCPY3D, dst_array, dstArray)
SAME(CuMemcpy3d, CUDA_MEMCPY3D, width_bytes, WidthInBytes)
SAME(CuMemcpy3d, CUDA_MEMCPY3D, depth, Depth)
static_assert(sizeof(CuResourceDesc) == sizeof(CUDA_RESOURCE_DESC));
SAME(CuResourceDesc, CUDA_RESOURCE_DESC, res, res)
SAME(CuResourceDesc, CUDA_RESOURCE_DESC, flags, flags)
static_assert(sizeof(CuTextureDesc) == sizeof(CUDA_TEXTURE_DESC));
SAME(CuTextureDesc, CUDA_TEXTURE_DESC, filter_mode, filterMode)
SAME(CuTextureDesc, CUDA_TEXTURE_DESC, flags, flags)
SAME(CuTextureDesc, CUDA_TEXTURE_DESC, border_color, borderColor)
SAME(CuTextureDesc, CUDA_TEXTURE_DESC, reserved, reserved)
static_assert(tack::cuda::CU_AD_FORMAT_FLOAT == ::CU_AD_FORMAT_FLOAT);
static_assert(tack::cuda::CU_MEMORYTYPE_ARRAY == ::CU_MEMORYTYPE_ARRAY);
static_assert(tack::cuda::CU_MEMORYTYPE_DEVICE == ::CU_MEMORYTYPE_DEVICE);
static_assert(tack::cuda::CU_RESOURCE_TYPE_ARRAY == ::CU_RESOURCE_TYPE_ARRAY);
static_assert(tack::cuda::CU_TR_ADDRESS_MODE_CLAMP == ::CU_TR_ADDRESS_MODE_CLAMP);
static_assert(tack::cuda::CU_TR_FILTER_MODE_LINEAR == ::CU_TR_FILTER_MODE_LINEAR);
static_assert(kNormalized == CU_TRSF_NORMALIZED_COORDINATES);
)");
}

// The HIP backend declares hip/driver_types.h's texture structures itself (it needs no ROCm
// header to build): each must have the installed headers' size and field offsets.
TEST(HipApi, TextureStructuresHaveTheLayoutOfTheHipHeaders) {
  const char* header = "/usr/include/hip/hip_runtime_api.h";
  if (!fs::exists(header)) GTEST_SKIP() << header << " not found (Debian: libamdhip64-dev)";
  // hip_api.hpp first: HIP_TRSF_NORMALIZED_COORDINATES is a macro in driver_types.h.
  check_layouts("hip_layout.cpp", "/usr/include", R"(#include <cstddef>
#include "backends/hip/hip_api.hpp"
constexpr unsigned kNormalized = tack::hip::HIP_TRSF_NORMALIZED_COORDINATES;
#define __HIP_PLATFORM_AMD__
#include <hip/hip_runtime_api.h>
namespace ours = tack::hip;
#define SAME(a, b, x, y) static_assert(offsetof(ours::a, x) == offsetof(b, y), #x);
static_assert(sizeof(ours::HipArray3dDescriptor) == sizeof(HIP_ARRAY3D_DESCRIPTOR));
SAME(HipArray3dDescriptor, HIP_ARRAY3D_DESCRIPTOR, depth, Depth)
SAME(HipArray3dDescriptor, HIP_ARRAY3D_DESCRIPTOR, format, Format)
SAME(HipArray3dDescriptor, HIP_ARRAY3D_DESCRIPTOR, num_channels, NumChannels)
SAME(HipArray3dDescriptor, HIP_ARRAY3D_DESCRIPTOR, flags, Flags)
static_assert(sizeof(ours::HipMemcpy3dParms) == sizeof(hipMemcpy3DParms));
SAME(HipMemcpy3dParms, hipMemcpy3DParms, src_pos, srcPos)
SAME(HipMemcpy3dParms, hipMemcpy3DParms, src_ptr, srcPtr)
SAME(HipMemcpy3dParms, hipMemcpy3DParms, dst_array, dstArray)
SAME(HipMemcpy3dParms, hipMemcpy3DParms, dst_ptr, dstPtr)
SAME(HipMemcpy3dParms, hipMemcpy3DParms, extent, extent)
SAME(HipMemcpy3dParms, hipMemcpy3DParms, kind, kind)
static_assert(sizeof(ours::HipPitchedPtr) == sizeof(hipPitchedPtr));
SAME(HipPitchedPtr, hipPitchedPtr, pitch, pitch)
SAME(HipPitchedPtr, hipPitchedPtr, ysize, ysize)
static_assert(sizeof(ours::HipExtent) == sizeof(hipExtent));
static_assert(sizeof(ours::HipResourceDesc) == sizeof(HIP_RESOURCE_DESC));
SAME(HipResourceDesc, HIP_RESOURCE_DESC, res, res)
SAME(HipResourceDesc, HIP_RESOURCE_DESC, flags, flags)
static_assert(sizeof(ours::HipTextureDesc) == sizeof(HIP_TEXTURE_DESC));
SAME(HipTextureDesc, HIP_TEXTURE_DESC, filter_mode, filterMode)
SAME(HipTextureDesc, HIP_TEXTURE_DESC, flags, flags)
SAME(HipTextureDesc, HIP_TEXTURE_DESC, border_color, borderColor)
SAME(HipTextureDesc, HIP_TEXTURE_DESC, reserved, reserved)
static_assert(ours::HIP_AD_FORMAT_FLOAT == ::HIP_AD_FORMAT_FLOAT);
static_assert(ours::HIP_RESOURCE_TYPE_ARRAY == ::HIP_RESOURCE_TYPE_ARRAY);
static_assert(ours::HIP_TR_ADDRESS_MODE_CLAMP == ::HIP_TR_ADDRESS_MODE_CLAMP);
static_assert(ours::HIP_TR_FILTER_MODE_LINEAR == ::HIP_TR_FILTER_MODE_LINEAR);
static_assert(int(ours::hipMemcpyDeviceToDevice) == int(::hipMemcpyDeviceToDevice));
static_assert(kNormalized == HIP_TRSF_NORMALIZED_COORDINATES);
// The functions the backend binds, with the types it calls them through.
static_assert(sizeof(ours::hipArray_t) == sizeof(::hipArray_t));
static_assert(sizeof(ours::hipTextureObject_t) == sizeof(::hipTextureObject_t));
)");
}

}  // namespace
}  // namespace tack
