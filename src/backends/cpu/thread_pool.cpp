#include "backends/cpu/thread_pool.hpp"

#include "backends/node_local.hpp"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <system_error>
#include <utility>

#include <fmt/core.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace tack::cpu {
namespace {

// True on pool workers, and on a launching thread while its launch runs: a parallel_for issued
// there would otherwise wait for workers that are busy with the enclosing loop.
thread_local bool t_inside_parallel = false;

// Idle waiting: pause-spin first (a wake-up costs nothing), then yield so that a busy machine gets
// the core back, then block. The whole window covers the gap between back-to-back launches from
// Python (a few to tens of microseconds) so that a medium kernel does not pay a futex wake-up each
// time, while an idle pool gives its cores back within 100 microseconds.
constexpr auto kPauseSpin = std::chrono::microseconds(10);
constexpr auto kYieldSpin = std::chrono::microseconds(100);
// Iterations between clock reads, so that reading the clock does not dominate the spin.
constexpr int kSpinsPerClockRead = 32;

// Chunks per participant: enough to balance uneven bodies (Mandelbrot rows), few enough that the
// claim counter is not contended.
constexpr int64_t kChunksPerThread = 4;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

inline uint32_t generation_of(uint64_t state) {
  return static_cast<uint32_t>(state >> 32);
}
inline uint32_t unclaimed_of(uint64_t state) {
  return static_cast<uint32_t>(state);
}

// Spins until done() or the spin window ends; true when done() held.
template <typename Done>
bool spin_until(Done done) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  for (;;) {
    for (int i = 0; i < kSpinsPerClockRead; ++i) {
      if (done()) return true;
      cpu_relax();
    }
    const auto waited = Clock::now() - start;
    if (waited >= kYieldSpin) return false;
    if (waited >= kPauseSpin) std::this_thread::yield();
  }
}

// Marks the current thread as inside a parallel loop for the life of the scope.
class InsideParallelScope {
 public:
  InsideParallelScope() { t_inside_parallel = true; }
  ~InsideParallelScope() { t_inside_parallel = false; }
  InsideParallelScope(const InsideParallelScope&) = delete;
  InsideParallelScope& operator=(const InsideParallelScope&) = delete;
};

std::optional<long> read_long(const std::filesystem::path& file) {
  std::ifstream in(file);
  long value = 0;
  if (!(in >> value)) return std::nullopt;
  return value;
}

}  // namespace

int physical_core_count() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  // Fails on machines with more CPUs than cpu_set_t holds; then every CPU counts.
  const bool have_mask = sched_getaffinity(0, sizeof(allowed), &allowed) == 0;

  std::set<std::pair<long, long>> cores;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/sys/devices/system/cpu", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= 3 || name.compare(0, 3, "cpu") != 0) continue;
    int cpu = 0;
    const char* first = name.data() + 3;
    const char* last = name.data() + name.size();
    auto [end, err] = std::from_chars(first, last, cpu);
    if (err != std::errc() || end != last) continue;  // cpufreq, cpuidle...
    if (have_mask && cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &allowed)) continue;
    // Offline CPUs have no topology directory and are skipped here.
    const auto package = read_long(entry.path() / "topology" / "physical_package_id");
    const auto core = read_long(entry.path() / "topology" / "core_id");
    if (!package || !core) continue;
    cores.emplace(*package, *core);
  }
  if (!cores.empty()) return static_cast<int>(cores.size());
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

std::optional<int> parse_thread_count(std::string_view text) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  // from_chars accepts a leading '-'; a sign is not a thread count.
  if (text.empty() || text.front() < '0' || text.front() > '9') return std::nullopt;
  long value = 0;
  auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (err != std::errc() || end != text.data() + text.size()) return std::nullopt;
  if (value < 1 || value > kMaxThreads) return std::nullopt;
  return static_cast<int>(value);
}

int thread_count_for(const char* env_value, int cores, std::string* warning) {
  warning->clear();
  // An empty value is how shells spell "unset" in `VAR= command`.
  if (env_value == nullptr || env_value[0] == '\0') return cores;
  if (auto parsed = parse_thread_count(env_value)) return *parsed;
  *warning = fmt::format(
      "tack: ignoring TACK_CPU_THREADS='{}': expected a whole number from 1 to {}; using {} "
      "threads (one per physical core, shared among the processes a launcher started on the node)",
      env_value, kMaxThreads, cores);
  return cores;
}

int share_of_cores(int cores, std::optional<int> processes_on_node) {
  if (!processes_on_node || *processes_on_node <= 1) return cores;
  return std::max(1, cores / *processes_on_node);
}

int default_thread_count() {
  std::string warning;
  const int cores = share_of_cores(physical_core_count(), detail::node_local_size());
  const int count = thread_count_for(std::getenv("TACK_CPU_THREADS"), cores, &warning);
  static std::atomic<bool> warned{false};
  if (!warning.empty() && !warned.exchange(true)) fmt::print(stderr, "{}\n", warning);
  return count;
}

ThreadPool& ThreadPool::global() {
  static ThreadPool* pool = new ThreadPool(default_thread_count());
  return *pool;
}

ThreadPool::ThreadPool(int threads) {
  const int wanted = std::clamp(threads, 1, kMaxThreads);
  workers_.reserve(wanted - 1);
  for (int i = 1; i < wanted; ++i) {
    try {
      workers_.emplace_back([this] { worker_main(); });
    } catch (const std::system_error&) {
      // Out of threads (ulimit, container pids limit): run with the workers we got, since the
      // caller alone still completes every loop.
      break;
    }
  }
  size_ = static_cast<int>(workers_.size()) + 1;
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(sleep_mu_);
    stop_.store(true, std::memory_order_seq_cst);
  }
  work_cv_.notify_all();
  for (auto& worker : workers_) worker.join();
}

void ThreadPool::parallel_for(int64_t n, int64_t min_chunk, ParallelBody fn, void* ctx) {
  if (n <= 0) return;
  if (min_chunk < 1) min_chunk = 1;
  if (n <= min_chunk || size_ == 1 || t_inside_parallel) {
    fn(ctx, 0, n);
    return;
  }

  std::lock_guard<std::mutex> launch(launch_mu_);
  InsideParallelScope inside;

  const int64_t target_chunks = static_cast<int64_t>(size_) * kChunksPerThread;
  const int64_t chunk = std::max(min_chunk, (n + target_chunks - 1) / target_chunks);
  const int64_t num_chunks = (n + chunk - 1) / chunk;  // at most target_chunks + 1

  fn_ = fn;
  ctx_ = ctx;
  n_ = n;
  chunk_ = chunk;
  num_chunks_ = static_cast<uint32_t>(num_chunks);
  pending_.store(num_chunks_, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(error_mu_);
    error_ = nullptr;
  }
  const uint32_t gen = ++generation_;
  // Publishes the job fields above to every worker that reads this state.
  state_.store((static_cast<uint64_t>(gen) << 32) | num_chunks_, std::memory_order_seq_cst);
  if (sleeping_workers_.load(std::memory_order_seq_cst) > 0) {
    // Taking the lock orders this wake-up after a worker's check-then-wait, so none is missed.
    { std::lock_guard<std::mutex> lock(sleep_mu_); }
    work_cv_.notify_all();
  }

  run_chunks(gen);
  wait_until_done();

  std::exception_ptr error;
  {
    std::lock_guard<std::mutex> lock(error_mu_);
    error = std::exchange(error_, nullptr);
  }
  if (error) std::rethrow_exception(error);
}

void ThreadPool::run_chunks(uint32_t gen) {
  uint64_t state = state_.load(std::memory_order_acquire);
  for (;;) {
    if (generation_of(state) != gen || unclaimed_of(state) == 0) return;
    if (!state_.compare_exchange_weak(state, state - 1, std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
      continue;
    }
    // The claimed chunk keeps pending_ above zero, so the job fields stay valid until it is
    // counted.
    const int64_t index = num_chunks_ - unclaimed_of(state);
    const int64_t begin = index * chunk_;
    const int64_t end = std::min(n_, begin + chunk_);
    try {
      fn_(ctx_, begin, end);
    } catch (...) {
      record_exception();
    }
    if (pending_.fetch_sub(1, std::memory_order_seq_cst) == 1 &&
        caller_sleeping_.load(std::memory_order_seq_cst)) {
      { std::lock_guard<std::mutex> lock(sleep_mu_); }
      done_cv_.notify_all();
    }
    // Only state_ is read from here on: the job may already be over and replaced.
    state = state_.load(std::memory_order_acquire);
  }
}

void ThreadPool::wait_until_done() {
  if (spin_until([this] { return pending_.load(std::memory_order_acquire) == 0; })) return;
  std::unique_lock<std::mutex> lock(sleep_mu_);
  caller_sleeping_.store(true, std::memory_order_seq_cst);
  done_cv_.wait(lock, [this] { return pending_.load(std::memory_order_seq_cst) == 0; });
  caller_sleeping_.store(false, std::memory_order_relaxed);
}

bool ThreadPool::wait_for_work(uint32_t seen, uint32_t* gen) {
  const auto ready = [&] {
    return stop_.load(std::memory_order_seq_cst) ||
           generation_of(state_.load(std::memory_order_seq_cst)) != seen;
  };
  if (!spin_until(ready)) {
    std::unique_lock<std::mutex> lock(sleep_mu_);
    sleeping_workers_.fetch_add(1, std::memory_order_seq_cst);
    work_cv_.wait(lock, ready);
    sleeping_workers_.fetch_sub(1, std::memory_order_relaxed);
  }
  if (stop_.load(std::memory_order_acquire)) return false;
  *gen = generation_of(state_.load(std::memory_order_acquire));
  return true;
}

void ThreadPool::worker_main() {
  t_inside_parallel = true;
  // No launch can precede the constructor's return, so generation 0 is the one already seen.
  uint32_t seen = 0;
  uint32_t gen = 0;
  while (wait_for_work(seen, &gen)) {
    seen = gen;
    run_chunks(gen);
  }
}

void ThreadPool::record_exception() {
  std::lock_guard<std::mutex> lock(error_mu_);
  if (!error_) error_ = std::current_exception();
}

}  // namespace tack::cpu
