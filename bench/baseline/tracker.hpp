// The baseline's job tracker: every job's and partition's state behind ONE
// std::mutex, the shape of the production prover proofline replaces
// (the README's opening).
//
//   proving(p)    GPU worker, before prove():   lock, mark proving
//   proved(p)     GPU worker, after prove():    lock, store the device spans
//   finalized(p)  finalizer, after the files:   lock, mark done, malloc_trim(0)
//   failed(p)     any stage:                    lock, mark failed
//   summarize()   after the threads are joined: the records and the waits
//
// The trim runs while the lock is held, so a GPU worker that reaches the
// tracker during a trim waits for it with the GPU idle unless another lane
// has work queued. Every acquisition is timed, per role, so the report can
// show how long GPU workers waited for the lock and how long trims took.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "actors/detail/run_clock.hpp"
#include "gpu/backend.hpp"

namespace proofline::bench::baseline {

enum class part_state : uint8_t { queued, proving, proved, done, failed };

/// Who takes the lock (for the wait statistics).
enum class role : uint8_t { synthesizer, gpu_worker, finalizer };

/// Count, sum and maximum of a set of durations in ms.
struct duration_stats {
  uint64_t count = 0;
  double total_ms = 0;
  double max_ms = 0;
  void add(double ms);
};

struct job_record {
  std::string id;
  std::size_t partitions = 0;
  std::size_t done = 0;
  std::size_t failed = 0;
  double finished_ms = -1;  ///< run time when its last partition finished; -1 before
};

struct partition_record {
  std::size_t job = 0;  ///< index into the job records
  uint32_t index = 0;   ///< partition index within the job
  part_state state = part_state::queued;
  int device = -1;  ///< backend index that proved it
  int lane = -1;
  std::vector<gpu::span> spans;  ///< device spans, µs on the steady clock
  std::string error;
};

class job_tracker {
 public:
  /// `trim` (malloc_trim(0) in the engine; empty: none) runs under the lock
  /// after every finalized partition.
  job_tracker(std::vector<job_record> jobs, std::vector<partition_record> parts,
              std::function<void()> trim, run_clock clock);
  job_tracker(const job_tracker&) = delete;
  job_tracker& operator=(const job_tracker&) = delete;

  /// Partition `p` goes to lane `lane` of backend `device`.
  void proving(std::size_t p, int device, int lane);
  /// Partition `p` was proved; `spans` are the backend's.
  void proved(std::size_t p, std::vector<gpu::span> spans);
  /// Partition `p`'s files are written and its buffers freed; trims the heap
  /// (malloc_trim(0): every glibc arena) before letting go of the lock.
  void finalized(std::size_t p);
  /// Partition `p` failed; `error` names the file and the problem.
  void failed(std::size_t p, std::string error, role who);

  struct summary {
    std::vector<job_record> jobs;
    std::vector<partition_record> parts;
    duration_stats trims;     ///< trim calls, each under the lock
    duration_stats waits[3];  ///< lock waits, indexed by role
  };
  /// A copy of everything, under the lock. Call after the threads are joined.
  summary summarize();

 private:
  std::unique_lock<std::mutex> lock(role who);
  void finish(std::size_t p, part_state how);

  std::mutex mu_;
  run_clock clock_;
  std::function<void()> trim_;
  summary s_;
};

}  // namespace proofline::bench::baseline
