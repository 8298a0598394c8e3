#include "backends/cpu/thread_pool.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace tack::cpu {
namespace {

// Runs a capturing callable through the pool's plain function-pointer interface.
template <typename F>
void run(ThreadPool& pool, int64_t n, int64_t min_chunk, F& body) {
  pool.parallel_for(
      n, min_chunk,
      [](void* ctx, int64_t begin, int64_t end) { (*static_cast<F*>(ctx))(begin, end); }, &body);
}

// Sets or unsets an environment variable for the life of a scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }

 private:
  std::string name_;
  std::optional<std::string> old_;
};

TEST(ThreadPoolTest, SizeCountsTheCaller) {
  EXPECT_EQ(ThreadPool(3).size(), 3);
  EXPECT_EQ(ThreadPool(1).size(), 1);
  EXPECT_EQ(ThreadPool(0).size(), 1);
  EXPECT_EQ(ThreadPool(-7).size(), 1);
}

TEST(ThreadPoolTest, VisitsEveryIndexExactlyOnce) {
  const std::vector<int64_t> sizes = {0, 1, 2, 3, 7, 63, 64, 65, 1000, 100003, 1 << 20};
  const std::vector<int64_t> min_chunks = {-1, 0, 1, 2, 7, 64, 1000, int64_t{1} << 40};
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    for (int64_t n : sizes) {
      for (int64_t min_chunk : min_chunks) {
        SCOPED_TRACE(testing::Message()
                     << "threads=" << threads << " n=" << n << " min_chunk=" << min_chunk);
        std::vector<std::atomic<uint8_t>> visits(static_cast<size_t>(n));
        std::mutex mu;
        std::vector<std::pair<int64_t, int64_t>> chunks;
        auto body = [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) visits[i].fetch_add(1, std::memory_order_relaxed);
          std::lock_guard<std::mutex> lock(mu);
          chunks.emplace_back(begin, end);
        };
        run(pool, n, min_chunk, body);
        for (int64_t i = 0; i < n; ++i) ASSERT_EQ(visits[i].load(), 1) << "index " << i;
        if (n == 0) {
          EXPECT_TRUE(chunks.empty());
          continue;
        }
        // Every chunk but the last holds at least min_chunk iterations.
        std::sort(chunks.begin(), chunks.end());
        const int64_t floor = std::max<int64_t>(min_chunk, 1);
        for (size_t c = 0; c + 1 < chunks.size(); ++c) {
          EXPECT_GE(chunks[c].second - chunks[c].first, floor);
        }
        EXPECT_EQ(chunks.front().first, 0);
        EXPECT_EQ(chunks.back().second, n);
        // About four chunks per thread, not one per iteration.
        EXPECT_LE(static_cast<int64_t>(chunks.size()), 4 * threads + 1);
      }
    }
  }
}

TEST(ThreadPoolTest, SmallLaunchRunsInlineOnTheCaller) {
  ThreadPool pool(4);
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<std::pair<int64_t, int64_t>> calls;
  std::vector<std::thread::id> ids;
  auto body = [&](int64_t begin, int64_t end) {
    calls.emplace_back(begin, end);  // unsynchronized on purpose: it must run on this thread
    ids.push_back(std::this_thread::get_id());
  };
  run(pool, 10, 100, body);
  run(pool, 100, 100, body);  // n == min_chunk is still inline
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0], std::make_pair(int64_t{0}, int64_t{10}));
  EXPECT_EQ(calls[1], std::make_pair(int64_t{0}, int64_t{100}));
  EXPECT_EQ(ids[0], caller);
  EXPECT_EQ(ids[1], caller);
}

TEST(ThreadPoolTest, OneThreadPoolRunsEverythingInline) {
  ThreadPool pool(1);
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<std::pair<int64_t, int64_t>> calls;
  bool on_caller = true;
  auto body = [&](int64_t begin, int64_t end) {
    calls.emplace_back(begin, end);
    on_caller = on_caller && std::this_thread::get_id() == caller;
  };
  run(pool, 1 << 20, 1, body);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0], std::make_pair(int64_t{0}, int64_t{1} << 20));
  EXPECT_TRUE(on_caller);
}

TEST(ThreadPoolTest, WorkersParticipate) {
  ThreadPool pool(3);
  std::mutex mu;
  std::set<std::thread::id> ids;
  auto body = [&](int64_t, int64_t) {
    // Long enough that the caller cannot take every chunk before the workers wake.
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    std::lock_guard<std::mutex> lock(mu);
    ids.insert(std::this_thread::get_id());
  };
  run(pool, 24, 1, body);
  EXPECT_GT(ids.size(), 1u);
  EXPECT_LE(ids.size(), 3u);
}

TEST(ThreadPoolTest, ParseThreadCount) {
  EXPECT_EQ(parse_thread_count("4"), 4);
  EXPECT_EQ(parse_thread_count(" 8\n"), 8);
  EXPECT_EQ(parse_thread_count("1"), 1);
  EXPECT_EQ(parse_thread_count("4096"), 4096);
  EXPECT_EQ(parse_thread_count("0"), std::nullopt);
  EXPECT_EQ(parse_thread_count("4097"), std::nullopt);
  EXPECT_EQ(parse_thread_count("-1"), std::nullopt);
  EXPECT_EQ(parse_thread_count("+4"), std::nullopt);
  EXPECT_EQ(parse_thread_count("4x"), std::nullopt);
  EXPECT_EQ(parse_thread_count("four"), std::nullopt);
  EXPECT_EQ(parse_thread_count(""), std::nullopt);
  EXPECT_EQ(parse_thread_count("   "), std::nullopt);
  EXPECT_EQ(parse_thread_count("99999999999999999999"), std::nullopt);
}

TEST(ThreadPoolTest, ThreadCountForAnEnvironmentValue) {
  std::string warning = "stale";
  EXPECT_EQ(thread_count_for("3", 8, &warning), 3);
  EXPECT_EQ(warning, "");
  EXPECT_EQ(thread_count_for(nullptr, 8, &warning), 8);
  EXPECT_EQ(warning, "");
  EXPECT_EQ(thread_count_for("", 8, &warning), 8);
  EXPECT_EQ(warning, "");
  EXPECT_EQ(thread_count_for("lots", 8, &warning), 8);
  EXPECT_NE(warning.find("TACK_CPU_THREADS='lots'"), std::string::npos) << warning;
  EXPECT_NE(warning.find("using 8 threads"), std::string::npos) << warning;
  EXPECT_EQ(thread_count_for("0", 8, &warning), 8);
  EXPECT_NE(warning, "");
}

TEST(ThreadPoolTest, DefaultThreadCountReadsTheEnvironment) {
  const int cores = physical_core_count();
  EXPECT_GE(cores, 1);
  // As a process no launcher started, even when the tests run under one.
  ScopedEnv ompi("OMPI_COMM_WORLD_LOCAL_SIZE", nullptr);
  ScopedEnv mpich("MPI_LOCALNRANKS", nullptr);
  ScopedEnv slurm("SLURM_NTASKS_PER_NODE", nullptr);
  {
    ScopedEnv env("TACK_CPU_THREADS", "3");
    EXPECT_EQ(default_thread_count(), 3);
  }
  {
    ScopedEnv env("TACK_CPU_THREADS", nullptr);
    EXPECT_EQ(default_thread_count(), cores);
  }
  {
    ScopedEnv env("TACK_CPU_THREADS", "lots");
    // Earlier tests (or --gtest_repeat) may have used up the one warning, so expect at most one.
    testing::internal::CaptureStderr();
    EXPECT_EQ(default_thread_count(), cores);
    EXPECT_EQ(default_thread_count(), cores);
    const std::string out = testing::internal::GetCapturedStderr();
    const size_t first = out.find("TACK_CPU_THREADS");
    if (first != std::string::npos) {
      EXPECT_EQ(out.find("TACK_CPU_THREADS", first + 1), std::string::npos) << out;
    }
  }
}

TEST(ThreadPoolTest, EachProcessALauncherStartedGetsItsShareOfTheCores) {
  EXPECT_EQ(share_of_cores(16, std::nullopt), 16);
  EXPECT_EQ(share_of_cores(16, 1), 16);
  EXPECT_EQ(share_of_cores(16, 4), 4);
  EXPECT_EQ(share_of_cores(16, 3), 5);
  EXPECT_EQ(share_of_cores(2, 8), 1);  // oversubscribed: one thread each, never zero
}

TEST(ThreadPoolTest, DefaultThreadCountDividesTheCoresAmongTheNodesRanks) {
  const int cores = physical_core_count();
  ScopedEnv threads("TACK_CPU_THREADS", nullptr);
  ScopedEnv mpich("MPI_LOCALNRANKS", nullptr);
  ScopedEnv slurm("SLURM_NTASKS_PER_NODE", nullptr);
  {
    ScopedEnv ompi("OMPI_COMM_WORLD_LOCAL_SIZE", "8");
    EXPECT_EQ(default_thread_count(), std::max(1, cores / 8));
  }
  {
    ScopedEnv ompi("OMPI_COMM_WORLD_LOCAL_SIZE", nullptr);
    ScopedEnv hydra("MPI_LOCALNRANKS", "2");
    EXPECT_EQ(default_thread_count(), std::max(1, cores / 2));
  }
  {
    ScopedEnv ompi("OMPI_COMM_WORLD_LOCAL_SIZE", "not a number");  // ignored
    EXPECT_EQ(default_thread_count(), cores);
  }
  {
    // TACK_CPU_THREADS says otherwise.
    ScopedEnv ompi("OMPI_COMM_WORLD_LOCAL_SIZE", "8");
    ScopedEnv set("TACK_CPU_THREADS", "3");
    EXPECT_EQ(default_thread_count(), 3);
  }
}

TEST(ThreadPoolTest, PhysicalCoresDoNotExceedLogicalCpus) {
  const int cores = physical_core_count();
  EXPECT_GE(cores, 1);
  const unsigned logical = std::thread::hardware_concurrency();
  if (logical > 0) {
    EXPECT_LE(cores, static_cast<int>(logical));
  }
}

TEST(ThreadPoolTest, GlobalPoolIsOneInstanceAndWorks) {
  ThreadPool& pool = ThreadPool::global();
  EXPECT_EQ(&pool, &ThreadPool::global());
  EXPECT_GE(pool.size(), 1);
  std::atomic<int64_t> sum{0};
  auto body = [&](int64_t begin, int64_t end) {
    int64_t local = 0;
    for (int64_t i = begin; i < end; ++i) local += i;
    sum.fetch_add(local);
  };
  run(pool, 100000, 16, body);
  EXPECT_EQ(sum.load(), int64_t{100000} * 99999 / 2);
}

TEST(ThreadPoolTest, ManyBackToBackLaunches) {
  // Exercises the hand-off between consecutive generations, where a late worker must not touch
  // the next launch's chunks with the previous launch's view.
  ThreadPool pool(4);
  for (int launch = 0; launch < 20000; ++launch) {
    const int64_t n = 8 + launch % 57;
    std::atomic<int64_t> sum{0};
    auto body = [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) sum.fetch_add(i + launch, std::memory_order_relaxed);
    };
    run(pool, n, 1, body);
    ASSERT_EQ(sum.load(), n * (n - 1) / 2 + n * launch) << "launch " << launch;
  }
}

TEST(ThreadPoolTest, ConcurrentCallersFromSeveralHostThreads) {
  ThreadPool pool(4);
  std::atomic<int> failures{0};
  std::vector<std::thread> hosts;
  for (int h = 0; h < 4; ++h) {
    hosts.emplace_back([&pool, &failures, h] {
      for (int launch = 0; launch < 300; ++launch) {
        const int64_t n = 1000 + 37 * h + launch;
        std::atomic<int64_t> sum{0};
        auto body = [&](int64_t begin, int64_t end) {
          int64_t local = 0;
          for (int64_t i = begin; i < end; ++i) local += i;
          sum.fetch_add(local, std::memory_order_relaxed);
        };
        run(pool, n, 8, body);
        if (sum.load() != n * (n - 1) / 2) failures.fetch_add(1);
      }
    });
  }
  for (auto& t : hosts) t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(ThreadPoolTest, NestedCallsRunInlineWithoutDeadlock) {
  ThreadPool pool(4);
  constexpr int64_t kOuter = 32;
  constexpr int64_t kInner = 5000;
  std::vector<std::atomic<int64_t>> sums(kOuter);
  std::atomic<int> inner_on_other_thread{0};
  auto outer = [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      const std::thread::id me = std::this_thread::get_id();
      auto inner = [&](int64_t b, int64_t e) {
        if (std::this_thread::get_id() != me) inner_on_other_thread.fetch_add(1);
        int64_t local = 0;
        for (int64_t i = b; i < e; ++i) local += i;
        sums[o].fetch_add(local);
      };
      run(pool, kInner, 1, inner);
      // A nested launch on another pool is inline too.
      ThreadPool& global = ThreadPool::global();
      run(global, kInner, 1, inner);
    }
  };
  run(pool, kOuter, 1, outer);
  for (int64_t o = 0; o < kOuter; ++o) EXPECT_EQ(sums[o].load(), kInner * (kInner - 1));
  EXPECT_EQ(inner_on_other_thread.load(), 0);
}

TEST(ThreadPoolTest, UnevenWorkCompletes) {
  // Mandelbrot-like: the cost of an iteration grows with its index.
  ThreadPool pool(4);
  constexpr int64_t kN = 512;
  std::vector<std::atomic<uint64_t>> out(kN);
  auto body = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      uint64_t x = static_cast<uint64_t>(i);
      for (int64_t k = 0; k < i * i; ++k) x = x * 6364136223846793005ull + 1442695040888963407ull;
      out[i].store(x | 1, std::memory_order_relaxed);
    }
  };
  run(pool, kN, 1, body);
  for (int64_t i = 0; i < kN; ++i) EXPECT_NE(out[i].load(), 0u) << i;
}

TEST(ThreadPoolTest, ExceptionsReachTheCallerAndThePoolSurvives) {
  ThreadPool pool(4);
  for (int64_t bad : {0, 500, 999}) {  // the caller's first chunk, a middle one, the last one
    auto body = [&](int64_t begin, int64_t end) {
      if (bad >= begin && bad < end) throw std::runtime_error("boom");
    };
    EXPECT_THROW(run(pool, 1000, 1, body), std::runtime_error);
  }
  std::atomic<int64_t> count{0};
  auto body = [&](int64_t begin, int64_t end) { count.fetch_add(end - begin); };
  run(pool, 1000, 1, body);
  EXPECT_EQ(count.load(), 1000);
}

TEST(ThreadPoolTest, ConstructAndDestroyRepeatedly) {
  for (int round = 0; round < 50; ++round) {
    ThreadPool pool(1 + round % 5);
    if (round % 2 == 0) {
      std::atomic<int64_t> count{0};
      auto body = [&](int64_t begin, int64_t end) { count.fetch_add(end - begin); };
      run(pool, 4096, 1, body);
      ASSERT_EQ(count.load(), 4096);
    }
    if (round % 3 == 0) {
      // Let the workers give up spinning and block, so destruction wakes sleepers.
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
}

TEST(ThreadPoolTest, ForkedChildRunsLaunchesOnItsOwn) {
  // Python's multiprocessing forks; the child inherits the pool object but none of its workers.
  ThreadPool pool(3);
  std::atomic<int64_t> warm{0};
  auto warm_body = [&](int64_t begin, int64_t end) { warm.fetch_add(end - begin); };
  run(pool, 1000, 1, warm_body);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // let the workers block
  const pid_t pid = fork();
  if (pid == 0) {
    std::atomic<int64_t> count{0};
    auto body = [&](int64_t begin, int64_t end) { count.fetch_add(end - begin); };
    for (int i = 0; i < 10; ++i) run(pool, 100000, 1, body);
    _exit(count.load() == 1000000 ? 0 : 1);
  }
  ASSERT_GT(pid, 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(ThreadPoolTest, LaunchAfterWorkersFellAsleep) {
  ThreadPool pool(4);
  for (int round = 0; round < 20; ++round) {
    std::this_thread::sleep_for(std::chrono::microseconds(200 * (round % 4)));
    std::atomic<int64_t> count{0};
    auto body = [&](int64_t begin, int64_t end) { count.fetch_add(end - begin); };
    run(pool, 100000, 1, body);
    ASSERT_EQ(count.load(), 100000);
  }
}

}  // namespace
}  // namespace tack::cpu
