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

TEST(CGenerators, HipDiffersFromCudaOnlyInIncludeAndTextureType) {
  for (const Variant& v : variants()) {
    ir::Kernel k = specialize(v);
    auto [only_cuda, only_hip] = line_diff(codegen::generate_source(k, "cuda", v.kernel),
                                           codegen::generate_source(k, "hip", v.kernel));
    EXPECT_TRUE(only_cuda.empty()) << v.name << ": " << only_cuda.size() << " lines only in CUDA";
    ASSERT_EQ(only_hip.size(), 1u) << v.name;
    EXPECT_EQ(only_hip[0], "#include <hip/hip_runtime.h>") << v.name;
  }
  // No kernel uses a texture yet: the dialects' spellings differ.
  EXPECT_EQ(codegen::cuda_dialect().texture_type.value, "cudaTextureObject_t");
  EXPECT_EQ(codegen::hip_dialect().texture_type.value, "hipTextureObject_t");
}

}  // namespace
}  // namespace tack
