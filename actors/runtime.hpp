// runtime: spawns and wires the whole proving pipeline of docs/ARCHITECTURE.md in one
// actor system, and stops it. Clients (the app, tests, later a control actor)
// talk to registry(): submit, status, await.
//
//   job_registry (keys from key_cache) -> memory_manager -> synthesizer x N -> scheduler
//     -> gpu_worker (one per backend lane, one for the fallback) -> finalizer x M -> job_registry
#pragma once

#include <caf/actor_system.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "actors/key_cache.hpp"
#include "actors/memory_manager.hpp"
#include "actors/detail/prover_ops.hpp"
#include "actors/detail/run_clock.hpp"
#include "gpu/footprint.hpp"
#include "memory/estimate.hpp"
#include "messages/interfaces.hpp"

namespace proofline {

struct runtime_config {
  uint64_t memory_budget = 0;  ///< bytes, > 0
  unsigned synthesizers = 2;  ///< 0: nothing is proved locally (a coordinator that only dispatches)
  unsigned finalizers = 2;
  unsigned lookahead = 1;  ///< per GPU worker: partitions held beyond the one proving
  /// Granted partitions not yet being proved, at most. 0 = two per GPU worker,
  /// widening to synthesizers + GPU workers (max_pacing 0): few partitions in
  /// synthesis share the idle synthesizers' threads (grant::threads), so the
  /// first ones reach the GPU early instead of all finishing together, and
  /// synthesis slower than proving earns every synthesizer.
  unsigned pacing = 0;
  /// The most pacing may widen to (each time a GPU worker runs dry while
  /// pacing held synthesis back); 0 = synthesizers + GPU workers when
  /// `pacing` is 0, else no widening beyond `pacing`.
  unsigned max_pacing = 0;
  /// Whether one partition's synthesis uses every thread it is granted (the
  /// plain model). When it does not (--synthesis-model lc), few partitions in
  /// synthesis gain nothing from idle threads, and pacing 0 starts at
  /// synthesizers + GPU workers instead.
  bool synthesis_shares_threads = true;
  memory::backend_footprint footprint = gpu::cpu_backend_footprint;  ///< for partition estimates
  /// Run key loaders, synthesizers, GPU workers and finalizers on their own
  /// threads (production); false keeps everything on the scheduler, which
  /// deterministic tests need.
  bool detach = true;
  run_clock clock;
  /// Keep loaded keys (host and device) across jobs until the memory budget
  /// needs room (`serve`); false drops a key when its last job completes.
  bool keep_keys = false;
  /// Completed jobs the registry still answers for (serve); 0: all (run).
  std::size_t keep_finished = 0;
  /// The bytes their records may hold (serve); 0: no limit (run).
  std::size_t keep_finished_bytes = 0;
  /// A key file's identity (actors/key_cache.hpp); empty: stat() (tests replace it).
  std::function<std::optional<file_identity>(const std::string&)> identify;
  std::function<void(const grant_event&)> on_grant;  ///< optional observer
  /// serve --state: the journal the registry reports to (null: none).
  journal_actor journal;
  // ---- memory system (actors/memory_manager.hpp, memory/)
  /// Pinned pool for what GPUs read (witness, a, b, c), counted once in the
  /// budget; 0: no pool, every partition pageable. With
  /// pinned_pool_partitions, the most it may grow to.
  uint64_t pinned_pool = 0;
  /// > 0: size the pool at the first reservation for this many partitions of
  /// its key (at most pinned_pool); 0: pinned_pool bytes from the start.
  unsigned pinned_pool_partitions = 0;
  /// Pins the pool (gpu::cuda_pinner()); empty: ordinary pages.
  memory::pinner pinner;
  /// Purge arenas when partitions are freed; false counts the requests only.
  bool purge = true;
  /// Purge requests for one arena within this window make one purge.
  std::chrono::milliseconds purge_delay{5};
  std::function<void(const purge_event&)> on_purge;  ///< optional observer
  /// A backend that proves only retries the primary backends could not
  /// (actors/detail/retry_policy.hpp): with CUDA, the CPU backend. One GPU worker,
  /// backend index = the number of primary backends. Null: none.
  std::shared_ptr<gpu::backend> fallback;
};

class runtime {
 public:
  /// Spawns the pipeline: one GPU worker per lane of each backend
  /// (gpu::backend::lanes(); at least one backend).
  runtime(caf::actor_system& sys, runtime_config cfg, prover_ops ops,
          std::vector<std::shared_ptr<gpu::backend>> backends);
  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;
  /// Calls shutdown().
  ~runtime();

  const job_registry_actor& registry() const { return registry_; }
  const memory_manager_actor& memory() const { return memory_; }
  const key_cache_actor& keys() const { return keys_; }
  const scheduler_actor& scheduler() const { return scheduler_; }
  /// The GPU workers, device by device, lane by lane.
  const std::vector<gpu_worker_actor>& workers() const { return workers_; }
  const runtime_config& config() const { return cfg_; }

  /// Sends every actor an exit message (user_shutdown). Idempotent.
  void shutdown();

 private:
  runtime_config cfg_;
  memory_manager_actor memory_;
  scheduler_actor scheduler_;
  key_cache_actor keys_;
  job_registry_actor registry_;
  std::vector<finalizer_actor> finalizers_;
  std::vector<gpu_worker_actor> workers_;
  std::vector<synthesizer_actor> synthesizers_;
  bool stopped_ = false;
};

}  // namespace proofline
