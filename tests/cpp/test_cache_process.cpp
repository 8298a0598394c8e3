// The disk cache across processes: a second process loads instead of compiling, a corrupt or
// truncated entry is recompiled, concurrent first calls compile each variant once, a process
// killed mid-compile leaves nothing that loads wrongly, and an entry others could write is not run.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <thread>

#include <fmt/format.h>
#include <xxhash.h>

#include <cstring>
#include <iterator>

#include "backends/backend.hpp"
#include "backends/cpu/cpu_compiler.hpp"
#include "backends/cpu/host_target.hpp"
#include "backends/cpu/kernel_loader.hpp"
#include "codegen/llvm/abi.hpp"
#include "runtime/cache_file.hpp"
#include "runtime/disk_cache.hpp"
#include "runtime/front_end_record.hpp"
#include "runtime/internals.hpp"
#include "runtime/source_id.hpp"
#include "sema/specialize.hpp"
#include "test_support.hpp"

extern char** environ;

namespace tack {
namespace {

namespace fs = std::filesystem;

const char* const kKernels =
    "import tack\n@tack.kernel\ndef triple_add(x, y, out):\n    for i in range(x.shape[0]):\n"
    "        out[i] = 3 * x[i] + y[i]\n";

// The argument dtypes of the variants a child calls: TACK_TEST_CHILD_VARIANTS of them (default 1).
const DType kVariantDTypes[] = {DType::F32, DType::F64, DType::I32, DType::I64};

// Run in a child process (see run_child): calls the kernel, checks the answer, and writes this
// process's cache counters to the file named by TACK_TEST_CHILD_OUT.
// The key names the hash of the compiler's sources, so that a build of other sources (a changed
// generator at the same version) misses instead of loading code it did not generate.
TEST(CacheKey, NamesTheCompilersSources) {
  const std::string id = detail::source_id();
  EXPECT_EQ(id.size(), 32u);
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos) << id;
  auto m = test::resolve(
      "import tack\n@tack.kernel\ndef add(x, out):\n    for i in range(x.shape[0]):\n"
      "        out[i] = x[i] + 1.0\n");
  ir::Kernel k = sema::specialize(*m, "add", sema::parse_arg_types("f32[],f32[]"), {"CPU", false});
  const std::string key = detail::variant_cache_key(k, "cpu", "x86_64", 0);
  EXPECT_EQ(key.rfind(fmt::format("tack {} sources {}\n", version(), id), 0), 0u) << key;
}

TEST(CacheChild, RunKernel) {
  const char* out = std::getenv("TACK_TEST_CHILD_OUT");
  if (!out) GTEST_SKIP() << "runs only as a child of the CacheProcess tests";
  const char* count = std::getenv("TACK_TEST_CHILD_VARIANTS");
  const int variants = count ? std::atoi(count) : 1;
  Module m = Module::from_source(kKernels, "child.py");
  for (int v = 0; v < variants; ++v) {
    const DType t = kVariantDTypes[v];
    Array x = arange(1000, t), y = full({1000}, 2, t), r = empty({1000}, t);
    m.kernel("triple_add")(x, y, r);
    Array f = r.astype(DType::F64);
    auto got = f.to_vector<double>();
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(got[i], 3.0 * i + 2) << dtype_name(t);
  }
  CacheStats s = cache_stats();
  // What the process mapped: the compiler library, and any LLVM (PoCL, on OpenCL, has its own).
  std::ifstream maps_file("/proc/self/maps");
  const std::string maps((std::istreambuf_iterator<char>(maps_file)),
                         std::istreambuf_iterator<char>());
  std::ofstream(out) << s.compiles << " " << s.disk_hits << " " << s.disk_corrupt << " "
                     << cache_enabled() << " " << s.disk_refused << " " << s.disk_lock_waits << " "
                     << (maps.find(cpu::kCompilerLibrary) != std::string::npos) << " "
                     << (maps.find("libLLVM") != std::string::npos) << "\n";
}

struct ChildStats {
  int compiles = -1, disk_hits = -1, disk_corrupt = -1, enabled = -1, refused = -1, lock_waits = -1;
  int maps_compiler = -1, maps_llvm = -1;
};

class CacheProcess : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tack-cache-test-" + std::to_string(getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // `quiet`: the child's output goes to /dev/null (a child expected to fail).
  pid_t spawn_child(const std::string& out_file, int variants = 1, bool quiet = false) {
    std::vector<std::string> env_storage;
    for (char** e = environ; *e; ++e) {
      std::string kv = *e;
      if (kv.rfind("TACK_CACHE_DIR=", 0) == 0 || kv.rfind("TACK_TEST_CHILD_OUT=", 0) == 0 ||
          kv.rfind("TACK_CACHE=", 0) == 0 || kv.rfind("TACK_TEST_CHILD_VARIANTS=", 0) == 0)
        continue;
      env_storage.push_back(kv);
    }
    env_storage.push_back("TACK_CACHE_DIR=" + dir_.string());
    env_storage.push_back("TACK_TEST_CHILD_OUT=" + out_file);
    env_storage.push_back("TACK_TEST_CHILD_VARIANTS=" + std::to_string(variants));
    std::vector<char*> envp;
    for (auto& s : env_storage) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::string exe = fs::read_symlink("/proc/self/exe").string();
    std::string filter = "--gtest_filter=CacheChild.RunKernel";
    char* argv[] = {exe.data(), filter.data(), nullptr};
    pid_t pid;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (quiet) {
      posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
      posix_spawn_file_actions_adddup2(&actions, 1, 2);
    }
    EXPECT_EQ(posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv, envp.data()), 0);
    posix_spawn_file_actions_destroy(&actions);
    return pid;
  }

  ChildStats wait_child(pid_t pid, const std::string& out_file) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child failed";
    ChildStats s;
    std::ifstream(out_file) >> s.compiles >> s.disk_hits >> s.disk_corrupt >> s.enabled >>
        s.refused >> s.lock_waits >> s.maps_compiler >> s.maps_llvm;
    return s;
  }

  std::string out_file(int i = 0) const {
    return (dir_.parent_path() /
            ("child-" + std::to_string(getpid()) + "-" + std::to_string(i) + ".txt"))
        .string();
  }

  // The child's exit status: 0 when every answer was right.
  int run_child_status() {
    std::string out = out_file();
    int status = 0;
    waitpid(spawn_child(out, 1, true), &status, 0);
    fs::remove(out);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  ChildStats run_child(int variants = 1) {
    std::string out = out_file();
    ChildStats s = wait_child(spawn_child(out, variants), out);
    fs::remove(out);
    return s;
  }

  fs::path entry_path() {
    auto e = entries();
    return e.empty() ? fs::path() : e[0];
  }

  // An entry of a kernel's code: not the CPU's host description (cpu_host-*.tck, host_target.hpp)
  // nor a front-end record (front_end-*.tck, runtime/front_end_record.hpp).
  static bool is_code(const fs::path& p) {
    const std::string name = p.filename().string();
    return !name.starts_with(cpu::kHostRecordBackend) &&
           !name.starts_with(detail::kFrontEndRecordKind);
  }

  // The kernels' code entries.
  std::vector<fs::path> entries() {
    std::vector<fs::path> out;
    if (fs::exists(dir_))
      for (const auto& e : fs::directory_iterator(dir_))
        if (e.path().extension() == ".tck" && is_code(e.path())) out.push_back(e.path());
    return out;
  }

  fs::path dir_;
};

TEST_F(CacheProcess, SecondProcessLoadsInsteadOfCompiling) {
  ChildStats first = run_child();
  EXPECT_EQ(first.compiles, 1);
  EXPECT_EQ(first.disk_hits, 0);
  ASSERT_EQ(entries().size(), 1u);
  ChildStats second = run_child();
  EXPECT_EQ(second.compiles, 0);
  EXPECT_EQ(second.disk_hits, 1);
  // LLVM is loaded only to compile: the process that loaded its kernel from the cache never
  // mapped the compiler library, nor (on the CPU; PoCL brings an LLVM of its own) any LLVM.
  const bool cpu = get_default_device().backend().name == "cpu";
  EXPECT_EQ(first.maps_compiler, cpu ? 1 : 0);
  EXPECT_EQ(second.maps_compiler, 0);
  if (cpu) {
    EXPECT_EQ(second.maps_llvm, 0);
  }
}

// A CPU kernel's key names the CPU by its signature, not by LLVM's description of it (host_target
// .hpp): a process that finds its kernel does not read the record of that description, so one
// whose record is gone still loads the kernel, and leaves the record gone.
TEST_F(CacheProcess, AHitNeedsNoRecordOfLlvmsDescriptionOfTheCpu) {
  if (get_default_device().backend().name != "cpu" || cpu::cpu_signature().empty())
    GTEST_SKIP() << "the CPU backend keys by the CPU's signature on x86-64";
  run_child();
  std::vector<fs::path> records;
  for (const auto& e : fs::directory_iterator(dir_))
    if (e.path().filename().string().starts_with(cpu::kHostRecordBackend))
      records.push_back(e.path());
  ASSERT_EQ(records.size(), 1u) << "the compiling process recorded LLVM's answer";
  fs::remove(records[0]);
  ChildStats s = run_child();
  EXPECT_EQ(s.compiles, 0);
  EXPECT_EQ(s.disk_hits, 1);
  EXPECT_FALSE(fs::exists(records[0])) << "the hit asked for LLVM's description";
}

TEST_F(CacheProcess, TruncatedEntryIsRecompiledAndReplaced) {
  run_child();
  auto e = entries();
  ASSERT_EQ(e.size(), 1u);
  fs::resize_file(e[0], fs::file_size(e[0]) / 2);
  ChildStats s = run_child();
  EXPECT_EQ(s.compiles, 1);
  EXPECT_EQ(s.disk_hits, 0);
  EXPECT_GE(s.disk_corrupt, 1);
  ChildStats again = run_child();  // the replacement is good
  EXPECT_EQ(again.compiles, 0);
  EXPECT_EQ(again.disk_hits, 1);
}

TEST_F(CacheProcess, CorruptObjectIsRecompiled) {
  run_child();
  auto e = entries();
  ASSERT_EQ(e.size(), 1u);
  {
    // Flip bytes in the middle of the artifact: the checksum catches it.
    std::fstream f(e[0], std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(e[0]) - 64));
    f.write("\xde\xad\xbe\xef", 4);
  }
  ChildStats s = run_child();
  EXPECT_EQ(s.compiles, 1);
  EXPECT_GE(s.disk_corrupt, 1);
}

TEST_F(CacheProcess, ConcurrentFirstCallsLeaveOneValidEntry) {
  std::vector<std::pair<pid_t, std::string>> kids;
  for (int i = 0; i < 4; ++i) {
    std::string out = out_file(i);
    kids.emplace_back(spawn_child(out), out);
  }
  for (auto& [pid, out] : kids) {
    ChildStats s = wait_child(pid, out);
    EXPECT_EQ(s.compiles + s.disk_hits, 1);
    fs::remove(out);
  }
  EXPECT_EQ(entries().size(), 1u);
  ChildStats after = run_child();
  EXPECT_EQ(after.compiles, 0);
  EXPECT_EQ(after.disk_hits, 1);
}

TEST_F(CacheProcess, EightProcessesAtOnceCompileEachVariantOnce) {
  constexpr int kProcesses = 8, kVariants = 4;
  std::vector<std::pair<pid_t, std::string>> kids;
  for (int i = 0; i < kProcesses; ++i)
    kids.emplace_back(spawn_child(out_file(i), kVariants), out_file(i));
  int compiles = 0, waited = 0;
  for (auto& [pid, out] : kids) {
    ChildStats s = wait_child(pid, out);
    EXPECT_EQ(s.compiles + s.disk_hits, kVariants);
    EXPECT_EQ(s.disk_corrupt, 0);
    compiles += s.compiles;
    waited += s.lock_waits;
    fs::remove(out);
  }
  EXPECT_EQ(compiles, kVariants) << "each variant compiled by one process; " << waited
                                 << " first calls waited for another process's compile";
  EXPECT_EQ(entries().size(), static_cast<size_t>(kVariants));
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().extension(), ".tck") << "left behind: " << e.path();
}

TEST_F(CacheProcess, AProcessKilledMidCompileLeavesNothingLoadedWrongly) {
  // SIGKILL while the process holds an entry's lock, i.e. compiles or stores it: at once when the
  // lock file appears, then later into the compiles of its four variants.
  for (int delay_ms : {0, 0, 5, 10, 20, 40}) {
    SCOPED_TRACE(delay_ms);
    fs::remove_all(dir_);  // so that the killed process is compiling, not loading
    const pid_t pid = spawn_child(out_file(1), 4);
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    bool compiling = false;
    while (!compiling && std::chrono::steady_clock::now() < give_up) {
      std::error_code ec;
      for (auto it = fs::directory_iterator(dir_, ec); !ec && it != fs::directory_iterator();
           it.increment(ec))
        compiling |= it->path().extension() == ".lock";
      if (!compiling) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    EXPECT_TRUE(compiling) << "no lock file appeared";
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    ::kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    // The next process gets every answer right (the child checks them), from whole entries only,
    // without waiting for the dead process's lock.
    ChildStats s = run_child(4);
    EXPECT_EQ(s.compiles + s.disk_hits, 4);
    EXPECT_EQ(s.disk_corrupt, 0);
    EXPECT_EQ(s.lock_waits, 0);
  }
  fs::remove(out_file(1));
  ChildStats last = run_child(4);
  EXPECT_EQ(last.compiles, 0);
  EXPECT_EQ(last.disk_hits, 4);
}

// The key stored in an entry file.
std::string stored_key(const fs::path& entry) {
  std::ifstream in(entry, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  cache_file::ParsedEntry parsed;
  EXPECT_EQ(cache_file::parse_entry(bytes, &parsed), nullptr) << entry;
  return std::string(parsed.key);
}

// What an attacker plants: an entry with the right key, a valid checksum and object code of
// their own (writing 7777 everywhere), exported under the names Tack links. Run, it gives
// wrong answers, which the child process checks.
std::string crafted_entry(const fs::path& real_entry, const fs::path& scratch) {
  const std::string key = stored_key(real_entry);
  detail::CompileOptions options;
  options.no_alias = key.find("no_alias=1") != std::string::npos;
  options.symbol_prefix = fmt::format("tack_{:016x}", XXH3_64bits(key.data(), key.size()));
  ir::Kernel evil = test::specialize(
      "import tack\n@tack.kernel\ndef evil(x, y, out):\n    for i in range(x.shape[0]):\n"
      "        out[i] = 7777.0\n",
      "f32[],f32[],f32[]", "evil");
  const std::string object = device("cpu").impl()->compile(evil, options, 0);
  DiskCache(scratch).store("cpu", key, object);
  std::ifstream in(scratch / DiskCache::file_name("cpu", key), std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST_F(CacheProcess, APlantedEntryRunsOnlyFromTheUsersOwnPrivateDirectory) {
  if (get_default_device().backend().name != "cpu") GTEST_SKIP() << "plants a CPU object";
  run_child();
  ASSERT_EQ(entries().size(), 1u);
  const fs::path entry = entry_path();
  const fs::path scratch = dir_.parent_path() / ("scratch-" + std::to_string(getpid()));
  const std::string planted = crafted_entry(entry, scratch);
  fs::remove_all(scratch);
  const auto plant = [&] {
    std::ofstream(entry, std::ios::binary | std::ios::trunc) << planted;
    ::chmod(entry.c_str(), 0600);
  };

  // The control: the user's own file in the user's own directory is trusted, and runs (a wrong
  // answer: the child fails), so what follows shows that the refusals keep it from running.
  plant();
  EXPECT_NE(run_child_status(), 0) << "the planted code did not run even where it is trusted";

  // Another user could have written it: refused, recompiled, the right answer.
  struct SetUp {
    const char* what;
    mode_t dir_mode, entry_mode;
    bool foreign_entry, foreign_dir;
  };
  std::vector<SetUp> setups = {{"the directory at 0777", 0777, 0600, false, false},
                               {"the directory at 1777", 01777, 0600, false, false},
                               {"the directory at 0775", 0775, 0600, false, false}};
  if (::geteuid() == 0) {
    setups.push_back({"another user's 0666 file in a 0755 directory", 0755, 0666, true, false});
    setups.push_back({"another user's 0644 file in a 0700 directory", 0700, 0644, true, false});
    setups.push_back({"a directory owned by another user", 0755, 0644, true, true});
  }
  for (const SetUp& setup : setups) {
    SCOPED_TRACE(setup.what);
    plant();
    ASSERT_EQ(::chmod(entry.c_str(), setup.entry_mode), 0);
    if (setup.foreign_entry) {
      ASSERT_EQ(::chown(entry.c_str(), 65534, 65534), 0);
    }
    if (setup.foreign_dir) {
      ASSERT_EQ(::chown(dir_.c_str(), 65534, 65534), 0);
    }
    ASSERT_EQ(::chmod(dir_.c_str(), setup.dir_mode), 0);
    ChildStats s = run_child();  // fails if the planted code ran
    EXPECT_EQ(s.disk_hits, 0);
    EXPECT_EQ(s.compiles, 1);
    EXPECT_EQ(s.refused, 1);
    EXPECT_EQ(s.enabled, setup.dir_mode == 0700 || setup.dir_mode == 0755 ? !setup.foreign_dir : 0);
    if (setup.foreign_dir) {
      ASSERT_EQ(::chown(dir_.c_str(), 0, 0), 0);
    }
    ASSERT_EQ(::chmod(dir_.c_str(), 0700), 0);
  }
  fs::remove(entry);
  EXPECT_EQ(run_child().compiles, 1);
  ChildStats own = run_child();  // its own entry: loaded
  EXPECT_EQ(own.disk_hits, 1);
}

// A kernel that writes `constant` into its array, compiled into a shared object whose symbols
// start with `prefix`.
struct ConstantKernel {
  ConstantKernel(int constant, const std::string& prefix)
      : k(test::specialize(
            "import tack\n@tack.kernel\ndef k(out):\n    for i in range(out.shape[0]):\n"
            "        out[i] = " +
                std::to_string(constant) + "\n",
            "i32[]")) {
    codegen::LlvmOptions o;
    o.symbol_prefix = prefix;
    image = cpu::compile_kernel(k, o, cpu::host_target(), false).shared_object;
  }
  // What the loaded code writes into out[3].
  int32_t run(const cpu::LoadedKernel& loaded) const {
    // The launch ABI (codegen/llvm/abi.hpp): the array and its extent, then start, step, count.
    const codegen::ArgLayout layout(k);
    int32_t out[4] = {};
    std::vector<uint64_t> slots(layout.slot_count, 0);
    slots[layout.param_slot[0]] = reinterpret_cast<uint64_t>(out);
    slots[layout.param_slot[0] + 1] = 4;
    slots[layout.loop_slot + 1] = 1;
    slots[layout.loop_slot + 2] = 4;
    loaded.chunk(slots.data(), 0, 4);
    return out[3];
  }
  ir::Kernel k;
  std::string image;
};

// The name the loaded kernel's object was opened under: the cache's file, or /proc/self/fd/N for
// a copy in memory.
std::string opened_as(const cpu::LoadedKernel& loaded) {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(loaded.chunk), &info) == 0 || !info.dli_fname) return "";
  return info.dli_fname;
}

// Kernels just compiled are loaded from a sealed memory file through /proc/self/fd/N. The number
// N is reused once a load closed it, and glibc would hand back the object loaded earlier under the
// same name: each load must get its own object (and a damaged one must not load).
TEST(KernelLoader, EachLoadIsItsOwnObject) {
  const std::string salt = std::to_string(::getpid());
  for (int round = 0; round < 3; ++round) {
    const std::string prefix = fmt::format("tack_loader_{}_{}", salt, round);
    const ConstantKernel kernel(40 + round, prefix);
    cpu::LoadedKernel loaded = cpu::load_kernel(kernel.image, "", prefix, false);
    EXPECT_EQ(kernel.run(loaded), 40 + round)
        << "round " << round << " ran an earlier kernel's code";
  }
  EXPECT_THROW(cpu::load_kernel("not an ELF file", "", "tack_loader_damaged_" + salt, false),
               DeviceError);
}

// The program headers of a shared object's image.
std::vector<Elf64_Phdr> program_headers(const std::string& image) {
  Elf64_Ehdr eh;
  std::memcpy(&eh, image.data(), sizeof eh);
  std::vector<Elf64_Phdr> out(eh.e_phnum);
  std::memcpy(out.data(), image.data() + eh.e_phoff, out.size() * sizeof(Elf64_Phdr));
  return out;
}

// A kernel that calls no outside function is, where glibc reads a read-only dynamic section, one
// read-and-execute segment that holds its dynamic section: nothing for the loader to write or
// protect afterwards (shared_object_linker.hpp). Loops that zero or copy memory stay loops rather
// than calls of memset and memcpy (which they were: Mandelbrot's and a local array's zeroing). One
// that calls sinf keeps the writable segment for that function's address, read-only once bound
// (RELRO). All load and run.
TEST(KernelObjects, OnlyKernelsWithOutsideCallsHaveAWritableSegment) {
  const std::string salt = std::to_string(::getpid());
  const auto count = [](const std::string& image, auto&& which) {
    const std::vector<Elf64_Phdr> headers = program_headers(image);
    return std::count_if(headers.begin(), headers.end(), which);
  };
  const auto is_load = [](const Elf64_Phdr& ph) { return ph.p_type == PT_LOAD; };
  const auto is_writable = [](const Elf64_Phdr& ph) {
    return ph.p_type == PT_LOAD && (ph.p_flags & PF_W);
  };
  const auto is_relro = [](const Elf64_Phdr& ph) { return ph.p_type == PT_GNU_RELRO; };
  const auto compiled = [&](const std::string& body, const std::string& types,
                            const std::string& name) {
    const ir::Kernel k =
        test::specialize("import tack\nimport math\n@tack.kernel\ndef k(x, out):\n" + body, types);
    codegen::LlvmOptions o;
    o.symbol_prefix = "tack_layout_" + name + "_" + salt;
    std::string image = cpu::compile_kernel(k, o, cpu::host_target(), false).shared_object;
    EXPECT_NE(cpu::load_kernel(image, "", o.symbol_prefix, false).chunk, nullptr) << name;
    return image;
  };
  const std::string loop = "    for i in range(out.shape[0]):\n";
  const std::vector<std::string> plain = {
      ConstantKernel(7, "tack_layout_constant_" + salt).image,
      compiled(loop + "        out[i] = 0\n", "i32[],i32[]", "zero"),
      compiled(loop + "        out[i] = x[i]\n", "f32[],f32[]", "copy"),
      compiled(loop + "        t = tack.local_array(tack.f32, 64)\n        out[i] = t[i % 64]\n",
               "f32[],f32[]", "local")};
  for (const std::string& image : plain) {
    const std::vector<Elf64_Phdr> headers = program_headers(image);
    EXPECT_EQ(count(image, is_relro), cpu::loader_maps_read_only_objects() ? 0 : 1);
    EXPECT_EQ(count(image, is_writable), cpu::loader_maps_read_only_objects() ? 0 : 1);
    if (!cpu::loader_maps_read_only_objects()) continue;
    ASSERT_EQ(count(image, is_load), 1);
    const Elf64_Phdr& load = *std::find_if(headers.begin(), headers.end(), is_load);
    const Elf64_Phdr& dynamic = *std::find_if(headers.begin(), headers.end(),
                                              [](auto& ph) { return ph.p_type == PT_DYNAMIC; });
    EXPECT_EQ(load.p_flags, PF_R | PF_X);
    EXPECT_GE(dynamic.p_vaddr, load.p_vaddr);
    EXPECT_LE(dynamic.p_vaddr + dynamic.p_memsz, load.p_vaddr + load.p_filesz);
  }
  const ConstantKernel constant(7, "tack_layout_run_" + salt);
  EXPECT_EQ(constant.run(cpu::load_kernel(constant.image, "", "tack_layout_run_" + salt, false)),
            7);

  const std::string sine =
      compiled(loop + "        out[i] = math.sin(x[i])\n", "f32[],f32[]", "sine");
  EXPECT_EQ(count(sine, is_writable), 1);
  EXPECT_EQ(count(sine, is_relro), 1);
}

class KernelLoaderFile : public testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/tack-loader-XXXXXX";
    ASSERT_NE(::mkdtemp(name), nullptr);
    dir_ = name;
  }
  void TearDown() override { fs::remove_all(dir_); }
  // An entry file: the image, then what the cache keeps after it (cache_file.hpp).
  fs::path write_entry(const std::string& image, const std::string& name = "cpu-entry.tck") {
    const fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << image << "the key, then the footer";
    return path;
  }
  std::string prefix(const std::string& test) {
    return fmt::format("tack_loader_{}_{}", test, ::getpid());
  }
  fs::path dir_;
};

// A disk cache entry is opened where it lies. What the cache does to an entry later, replace it
// (a rename over it) or remove it, leaves the running code alone.
TEST_F(KernelLoaderFile, ACacheFileIsOpenedWhereItLies) {
  const ConstantKernel kernel(41, prefix("file"));
  const fs::path entry = write_entry(kernel.image);
  cpu::LoadedKernel loaded = cpu::load_kernel(kernel.image, entry.string(), prefix("file"), false);
  EXPECT_EQ(opened_as(loaded), entry.string()) << "not opened where it lies";
  EXPECT_EQ(kernel.run(loaded), 41);
  const ConstantKernel other(42, prefix("other"));
  std::ofstream(dir_ / "new.tck", std::ios::binary) << other.image;
  fs::rename(dir_ / "new.tck", entry);
  EXPECT_EQ(kernel.run(loaded), 41);
  fs::remove(entry);
  EXPECT_EQ(kernel.run(loaded), 41);
}

// The file is not what the cache checked (changed in between): the checked bytes run, from the
// copy in memory; so they do where the file is gone.
TEST_F(KernelLoaderFile, AFileThatIsNotTheCheckedBytesIsNotRun) {
  const ConstantKernel checked(2, prefix("differs")), other(1, prefix("differs"));
  const fs::path entry = write_entry(other.image);
  cpu::LoadedKernel loaded =
      cpu::load_kernel(checked.image, entry.string(), prefix("differs"), false);
  EXPECT_EQ(checked.run(loaded), 2);
  EXPECT_EQ(opened_as(loaded).rfind("/proc/self/fd/", 0), 0u) << opened_as(loaded);

  // The file's program headers differ (its code segment one byte shorter): so do the ranges the
  // loader mapped, which are then not read at all.
  const ConstantKernel headers(4, prefix("headers"));
  std::string patched = headers.image;
  Elf64_Ehdr eh;
  std::memcpy(&eh, patched.data(), sizeof eh);
  for (int i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    char* at = patched.data() + eh.e_phoff + i * sizeof ph;
    std::memcpy(&ph, at, sizeof ph);
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
    ph.p_filesz -= 1;
    ph.p_memsz -= 1;
    std::memcpy(at, &ph, sizeof ph);
  }
  ASSERT_NE(patched, headers.image);
  loaded = cpu::load_kernel(headers.image, write_entry(patched, "cpu-patched.tck").string(),
                            prefix("headers"), false);
  EXPECT_EQ(headers.run(loaded), 4);
  EXPECT_EQ(opened_as(loaded).rfind("/proc/self/fd/", 0), 0u) << opened_as(loaded);

  // dlopen replaces "$LIB" in a path with the system's directory of libraries: where a file lies
  // at the replaced path too, it is that one that would be opened. A path with a '$' is copied.
  const ConstantKernel dollar(5, prefix("dollar"));
  for (const char* lib :
       {"$LIB", "lib", "lib64", "lib/x86_64-linux-gnu", "lib/aarch64-linux-gnu"}) {
    fs::create_directories(dir_ / lib);
    write_entry(dollar.image, std::string(lib) + "/cpu-entry.tck");
  }
  loaded = cpu::load_kernel(dollar.image, (dir_ / "$LIB/cpu-entry.tck").string(), prefix("dollar"),
                            false);
  EXPECT_EQ(dollar.run(loaded), 5);
  EXPECT_EQ(opened_as(loaded).rfind("/proc/self/fd/", 0), 0u) << opened_as(loaded);

  const ConstantKernel gone(3, prefix("gone"));
  loaded =
      cpu::load_kernel(gone.image, (dir_ / "no-such-entry.tck").string(), prefix("gone"), false);
  EXPECT_EQ(gone.run(loaded), 3);
}

// In one process: threads with separate Kernel handles of one Module compile a variant once.
TEST(CacheOneCompile, ThreadsWithSeparateHandlesCompileOnce) {
  // A kernel no earlier run has cached: its constant is new each time.
  const int constant = static_cast<int>(std::random_device{}() % 1000000) + 7;
  Module m = Module::from_source(
      "import tack\n@tack.kernel\ndef add_c(x, out):\n    for i in range(x.shape[0]):\n"
      "        out[i] = x[i] + " +
          std::to_string(constant) + "\n",
      "threads.py");
  const CacheStats before = cache_stats();
  constexpr int kThreads = 8;
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      Kernel k = m.kernel("add_c");  // a handle of its own
      Array x = arange(100, DType::I32), out = empty({100}, DType::I32);
      k(x, out);
      auto got = out.to_vector<int32_t>();
      for (int i = 0; i < 100; ++i) wrong += got[i] != i + constant;
    });
  }
  for (auto& t : threads) t.join();
  const CacheStats after = cache_stats();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(after.compiles - before.compiles, 1u);
  if (cache_enabled()) {
    EXPECT_EQ(after.disk_writes - before.disk_writes, 1u);
  }
}

}  // namespace
}  // namespace tack
