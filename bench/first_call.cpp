// First-call latency in new processes.
//
//   tack_first_call [--runs N] [--json FILE]
//
// For each of N runs, with a fresh, empty cache directory (TACK_CACHE_DIR):
//   cold: a new process loads examples/kernels.py and calls vector_add for the first time, which
//         compiles it and writes the disk cache;
//   warm: a second new process does the same and finds the kernel in the disk cache (it reads the
//         kernel's shared object and opens it with dlopen instead of compiling; LLVM is never
//         loaded); two more warm processes follow, the last of them reported apart (the CPU's
//         caches then hold what a new process touches first, as in a test suite).
// Each child times, with a monotonic clock, from just before Module::from_source to the return of
// the first call, and reports the parts: parsing the module, creating the device and the arrays
// (1024 floats each), the first call, and a second call for comparison. Two more processes per run
// ("-parts") describe the host CPU (the cache key) and, with an empty cache, load the CPU compiler
// library one at a time before the first call, to show what the first call's time is made of.
// Process start-up (exec and the dynamic loading and static initialization of libtack, before
// main) is measured apart: from posix_spawn in the parent to main in the child, next to
// /bin/true's whole life.
// Reports the median of the N runs of each.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/cpu/cpu_compiler.hpp"
#include "backends/cpu/host_target.hpp"
#include "tack/tack.hpp"

extern char** environ;

namespace {

namespace fs = std::filesystem;

constexpr int64_t kElements = 1024;

int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

double ms(int64_t ns) {
  return static_cast<double>(ns) / 1e6;
}

// ---- Child ----

// What a child prints: "key=value" pairs on one line, read by the parent.
int child(const std::string& mode, int64_t t_main) {
  if (mode == "noop") {
    std::printf("main_ns=%lld\n", static_cast<long long>(t_main));
    return 0;
  }
  std::ifstream in(TACK_BENCH_KERNELS, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  const std::string source = text.str();

  const int64_t t0 = now_ns();
  tack::Module m = tack::Module::from_source(source, TACK_BENCH_KERNELS);
  tack::Kernel vector_add = m.kernel("vector_add");
  const int64_t t1 = now_ns();
  tack::Array x = tack::full({kElements}, 1.0f), y = tack::full({kElements}, 2.0f);
  tack::Array out = tack::empty({kElements});
  int64_t t2 = now_ns();
  // "-parts": do, one at a time, what the first call would do first (with an empty cache, load
  // the compiler library; describe the host CPU: its signature for the cache key, and with an
  // empty cache LLVM's description, which a compile needs), to time them apart. A launch this
  // small runs on the calling thread and does not start the thread pool.
  int64_t host_ns = 0, compiler_ns = 0;
  if (mode.ends_with("-parts")) {
    if (mode.starts_with("cold")) tack::cpu::compiler();
    const int64_t ta = now_ns();
    tack::cpu::cpu_signature();
    if (mode.starts_with("cold")) tack::cpu::host_target();
    const int64_t tb = now_ns();
    compiler_ns = ta - t2;
    host_ns = tb - ta;
    t2 = tb;
  }
  vector_add(x, y, out);
  const int64_t t3 = now_ns();
  vector_add(x, y, out);
  const int64_t t4 = now_ns();

  if (out.at<float>({kElements - 1}) != 3.0f) {
    std::fprintf(stderr, "vector_add computed a wrong result\n");
    return 1;
  }
  tack::CacheStats s = tack::cache_stats();
  std::printf(
      "main_ns=%lld module_ms=%.6f arrays_ms=%.6f call_ms=%.6f total_ms=%.6f second_call_ms=%.6f "
      "host_ms=%.6f compiler_ms=%.6f compiles=%llu disk_hits=%llu\n",
      static_cast<long long>(t_main), ms(t1 - t0), ms(t2 - t1 - host_ns - compiler_ns), ms(t3 - t2),
      ms(t3 - t0), ms(t4 - t3), ms(host_ns), ms(compiler_ns),
      static_cast<unsigned long long>(s.compiles),
      static_cast<unsigned long long>(s.disk_hits));
  return 0;
}

// ---- Parent ----

struct Result {
  double spawn_to_main_ms = 0;
  double spawn_to_exit_ms = 0;
  std::map<std::string, double> values;
};

// Runs argv with TACK_CACHE_DIR set to cache_dir (when not empty) and its stdout captured.
Result spawn(const std::vector<std::string>& argv, const std::string& cache_dir) {
  std::vector<std::string> env_text;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "TACK_CACHE_DIR=", 15) != 0) env_text.emplace_back(*e);
  if (!cache_dir.empty()) env_text.push_back("TACK_CACHE_DIR=" + cache_dir);
  std::vector<char*> envp, args;
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& a : argv_copy) args.push_back(a.data());
  args.push_back(nullptr);

  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);

  Result r;
  pid_t pid;
  const int64_t t_spawn = now_ns();
  int err = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (err != 0) {
    close(fds[0]);
    throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(err));
  }
  std::string output;
  char buf[4096];
  for (ssize_t got; (got = read(fds[0], buf, sizeof buf)) != 0;) {
    if (got < 0) {
      if (errno == EINTR) continue;
      break;
    }
    output.append(buf, static_cast<size_t>(got));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const int64_t t_exit = now_ns();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error(argv[0] + " " + (argv.size() > 2 ? argv[2] : "") + " failed");

  r.spawn_to_exit_ms = ms(t_exit - t_spawn);
  std::istringstream fields(output);
  for (std::string field; fields >> field;) {
    auto eq = field.find('=');
    if (eq == std::string::npos) continue;
    r.values[field.substr(0, eq)] = std::stod(field.substr(eq + 1));
  }
  if (r.values.count("main_ns"))
    r.spawn_to_main_ms = ms(static_cast<int64_t>(r.values["main_ns"]) - t_spawn);
  return r;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The median of each quantity over several results.
std::map<std::string, double> medians(const std::vector<Result>& rs) {
  std::map<std::string, std::vector<double>> all;
  for (const Result& r : rs) {
    all["spawn_to_main_ms"].push_back(r.spawn_to_main_ms);
    all["spawn_to_exit_ms"].push_back(r.spawn_to_exit_ms);
    for (const auto& [k, v] : r.values)
      if (k != "main_ns") all[k].push_back(v);
  }
  std::map<std::string, double> out;
  for (const auto& [k, v] : all) out[k] = median(v);
  return out;
}

std::string json_object(const std::map<std::string, double>& m) {
  std::string s = "{";
  for (const auto& [k, v] : m) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6f", v);
    s += (s.size() > 1 ? ", \"" : "\"") + k + "\": " + buf;
  }
  return s + "}";
}

int parent(int runs, const std::string& json_path) {
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  std::string tmpl = (fs::temp_directory_path() / "tack-first-call-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  const fs::path root = tmpl;

  std::vector<Result> baseline, startup, cold, warm, warm_again, cold_parts, warm_parts;
  for (int i = 0; i < runs; ++i) {
    baseline.push_back(spawn({"/bin/true"}, ""));
    startup.push_back(spawn({self, "--child", "noop"}, ""));
    const std::string dir = (root / ("run" + std::to_string(i))).string();
    fs::create_directories(dir);  // empty
    Result c = spawn({self, "--child", "cold"}, dir);
    Result w = spawn({self, "--child", "warm"}, dir);
    if (c.values["compiles"] != 1 || c.values["disk_hits"] != 0)
      throw std::runtime_error("the cold process did not compile exactly once");
    if (w.values["compiles"] != 0 || w.values["disk_hits"] != 1)
      throw std::runtime_error("the warm process did not load from the disk cache");
    cold.push_back(c);
    warm.push_back(w);
    spawn({self, "--child", "warm"}, dir);
    warm_again.push_back(spawn({self, "--child", "warm"}, dir));
    const std::string dir2 = (root / ("parts" + std::to_string(i))).string();
    fs::create_directories(dir2);
    cold_parts.push_back(spawn({self, "--child", "cold-parts"}, dir2));
    warm_parts.push_back(spawn({self, "--child", "warm-parts"}, dir2));
  }
  fs::remove_all(root);

  auto b = medians(baseline), s = medians(startup), c = medians(cold), w = medians(warm);
  auto wa = medians(warm_again);
  auto cp = medians(cold_parts), wp = medians(warm_parts);
  std::printf("Tack %s, vector_add on %lld floats, median of %d runs (new process each)\n\n",
              tack::version(), static_cast<long long>(kElements), runs);
  std::printf("%-44s %12s %12s\n", "", "empty cache", "disk cache");
  auto row = [&](const char* name, const char* key, double scale, const char* unit) {
    char a[32], d[32];
    std::snprintf(a, sizeof a, "%.3f %s", c[key] * scale, unit);
    std::snprintf(d, sizeof d, "%.3f %s", w[key] * scale, unit);
    std::printf("%-44s %12s %12s\n", name, a, d);
  };
  row("first call, from Module::from_source [*]", "total_ms", 1, "ms");
  row("  parse the module (from_source, kernel)", "module_ms", 1, "ms");
  row("  device and arrays (first use of Tack)", "arrays_ms", 1, "ms");
  row("  first call of vector_add", "call_ms", 1, "ms");
  std::printf("%-44s %12s %9.3f ms\n", "  the same, third warm process in a row [**]", "",
              wa["total_ms"]);
  row("second call of vector_add", "second_call_ms", 1000, "us");
  row("process: posix_spawn to main", "spawn_to_main_ms", 1, "ms");
  row("process: posix_spawn to exit", "spawn_to_exit_ms", 1, "ms");
  std::printf("\nThe first call's parts, started one at a time in separate runs:\n");
  auto part = [&](const char* name, const char* key) {
    std::printf("%-44s %9.3f ms %9.3f ms\n", name, cp[key], wp[key]);
  };
  part("  loading the compiler library (LLVM)", "compiler_ms");
  part("  host CPU: signature (key), LLVM's answer", "host_ms");
  part("  the call: compile or read cache, dlopen, run", "call_ms");
  part("  total from Module::from_source", "total_ms");
  std::printf("\n%-44s %12.3f ms\n", "tack_first_call --child noop: spawn to main",
              s["spawn_to_main_ms"]);
  std::printf("%-44s %12.3f ms\n", "tack_first_call --child noop: spawn to exit",
              s["spawn_to_exit_ms"]);
  std::printf("%-44s %12.3f ms\n", "/bin/true: spawn to exit", b["spawn_to_exit_ms"]);
  std::printf(
      "\n[*] empty cache: parse + load the compiler library + compile with LLVM and lld + write\n"
      "                 the cache + dlopen + run;\n"
      "    disk cache:  parse + read the cache entry + dlopen + run (no LLVM).\n"
      "    Neither includes process start-up (loading libtack before main).\n"
      "[**] The disk-cache column follows a process that compiled; this row, two processes\n"
      "     that loaded the same kernel: what a new process touches first is then still in\n"
      "     the CPU's caches (a test suite, or a script run again and again).\n");

  if (!json_path.empty()) {
    std::ofstream out(json_path);
    out << "{\"runs\": " << runs << ", \"elements\": " << kElements << ",\n \"cold\": "
        << json_object(c) << ",\n \"warm\": " << json_object(w)
        << ",\n \"warm_again\": " << json_object(wa)
        << ",\n \"cold_parts\": " << json_object(cp) << ",\n \"warm_parts\": " << json_object(wp)
        << ",\n \"noop_process\": " << json_object(s)
        << ",\n \"bin_true\": " << json_object(b) << "}\n";
    if (!out) throw std::runtime_error("cannot write " + json_path);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t t_main = now_ns();
  try {
    if (argc == 3 && std::string(argv[1]) == "--child") return child(argv[2], t_main);
    int runs = 7;
    std::string json;
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--runs" && i + 1 < argc) {
        runs = std::max(1, std::atoi(argv[++i]));
      } else if (a == "--json" && i + 1 < argc) {
        json = argv[++i];
      } else {
        std::fprintf(stderr, "usage: %s [--runs N] [--json FILE]\n", argv[0]);
        return 2;
      }
    }
    return parent(runs, json);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tack_first_call: %s\n", e.what());
    return 1;
  }
}
