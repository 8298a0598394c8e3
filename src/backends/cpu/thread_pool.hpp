// The persistent worker pool behind the CPU backend's parallel loop.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace tack::cpu {

// The body of a parallel loop: runs iterations [begin, end) with the kernel's packed arguments in
// ctx.
using ParallelBody = void (*)(void* ctx, int64_t begin, int64_t end);

// The most threads a pool accepts; a larger TACK_CPU_THREADS is a typo, not a machine.
inline constexpr int kMaxThreads = 4096;

// Distinct (physical_package_id, core_id) pairs among the CPUs this process may run on, so that
// hyperthread siblings and CPUs outside the affinity mask (taskset, containers) do not count.
// Falls back to std::thread::hardware_concurrency() when the topology cannot be read.
int physical_core_count();

// Parses a TACK_CPU_THREADS value: a decimal integer in [1, kMaxThreads], surrounding spaces
// allowed. nullopt for anything else.
std::optional<int> parse_thread_count(std::string_view text);

// The thread count for a TACK_CPU_THREADS value (nullptr when unset) on a machine with `cores`
// physical cores. For an invalid value, returns `cores` and sets *warning to what to tell the user;
// otherwise clears *warning.
int thread_count_for(const char* env_value, int cores, std::string* warning);

// This process's share of `cores` when a launcher (mpirun, srun) started `processes_on_node`
// processes on the node: cores divided among them, at least 1, so that N ranks do not each start
// a worker per core. All of `cores` when there is no launcher.
int share_of_cores(int cores, std::optional<int> processes_on_node);

// TACK_CPU_THREADS when set and valid, else share_of_cores(physical_core_count(), the node-local
// process count of OMPI_COMM_WORLD_LOCAL_SIZE, MPI_LOCALNRANKS or SLURM_NTASKS_PER_NODE). An
// invalid value is ignored with one warning on stderr per process.
int default_thread_count();

// A fixed set of worker threads that run parallel loops with the calling thread as one of them.
//
// Thread safety: parallel_for may be called from several host threads at once; the launches are
// serialized by a mutex, since one launch already occupies every core. A parallel_for issued from
// inside a loop body (on any pool's worker, or on the caller while it participates) runs inline on
// that thread instead of waiting for workers that are busy with the outer loop.
//
// Chunks are claimed, not assigned, so the caller finishes a launch alone when workers are slow to
// wake or missing. A child forked while the pool is idle has no workers and runs its launches
// serially; forking during a launch, or as a worker takes sleep_mu_, is not supported.
class ThreadPool {
 public:
  // The process-wide pool, sized by default_thread_count() on first use. Deliberately leaked:
  // workers stay parked at exit, and kernels launched from other static destructors still find a
  // live pool.
  static ThreadPool& global();

  // A pool of `threads` participants: threads - 1 workers plus the caller. Values below 1 mean 1;
  // if the system refuses to start a thread, the pool is smaller (see size()).
  explicit ThreadPool(int threads);
  // Wakes and joins every worker. No parallel_for may be running.
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Participants, including the calling thread.
  int size() const { return size_; }

  // Runs fn over [0, n) in chunks of at least min_chunk iterations (about 4 per participant so that
  // uneven bodies balance) and returns when every chunk is done. n <= 0 calls nothing. A launch
  // with n <= min_chunk, on a one-thread pool, or nested in another runs fn(ctx, 0, n) inline
  // without touching any shared state. An exception thrown by fn is rethrown here after all chunks
  // finished.
  void parallel_for(int64_t n, int64_t min_chunk, ParallelBody fn, void* ctx);

 private:
  void worker_main();
  // Waits until the generation differs from `seen`; false when the pool is stopping.
  bool wait_for_work(uint32_t seen, uint32_t* gen);
  void wait_until_done();
  // Claims and runs chunks of the current job until none remain. `gen` is the job's generation.
  void run_chunks(uint32_t gen);
  void record_exception();

  int size_ = 1;
  std::vector<std::thread> workers_;

  // Serializes launches from different host threads.
  std::mutex launch_mu_;

  // The current job. Written by the launching thread before it publishes `state_`, and read by a
  // worker only after it claimed a chunk, so they never change under a reader.
  ParallelBody fn_ = nullptr;
  void* ctx_ = nullptr;
  int64_t n_ = 0;
  int64_t chunk_ = 0;
  uint32_t num_chunks_ = 0;

  // (generation << 32) | chunks not yet claimed. Carrying the generation in the claim word means a
  // worker that wakes late for a finished job can never claim a chunk of the next one.
  std::atomic<uint64_t> state_{0};
  // Chunks claimed but not finished plus chunks not claimed; the launch is over at zero.
  std::atomic<uint32_t> pending_{0};

  // Blocking fallback after spinning. The sleeper flags make the wake-up free when nobody sleeps.
  std::mutex sleep_mu_;
  std::condition_variable work_cv_;  // workers wait here for a new generation
  std::condition_variable done_cv_;  // the launching thread waits here for pending_ == 0
  std::atomic<int> sleeping_workers_{0};
  std::atomic<bool> caller_sleeping_{false};
  // Set under sleep_mu_ so that a worker about to block cannot miss it.
  std::atomic<bool> stop_{false};
  // Generation of the last launch; only the thread holding launch_mu_ touches it.
  uint32_t generation_ = 0;

  std::mutex error_mu_;
  std::exception_ptr error_;  // the first exception of the current launch
};

}  // namespace tack::cpu
