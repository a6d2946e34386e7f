// job_registry: the only owner of job state. It accepts jobs, asks the key
// cache for their keys (one request per path while it is outstanding; the
// key is shared as zk::groth16::key_ptr, one user per job until the job
// completes), queues their partitions with the memory manager, collects
// partition reports, writes <out>/result.json atomically when a job completes
// and answers status and await requests.
//
// Lifecycle of a job: submit -> queued (key loading) -> partitions reserved
// -> synthesizing -> proving -> done | failed | cancelled. A job fails when any
// partition fails (bad witness, key that does not load, partition over the
// budget, backend error); its other partitions still run and their proofs are
// kept.
//
// One record: a job's entry is the only source of its result.json, of the
// reports its awaiters get (the run summary and report, `await`) and of the
// journal's finished record, all made once, when the job completes. A proof
// reaches the disk only after the registry let it be written (claim_atom),
// and a job never completes while a proof it let be written has not
// reported, so the record lists exactly the proofs on disk.
//
// Remote control: ids of live jobs are unique (a submission reusing one is
// refused); cancel marks the job's unfinished partitions cancelled (but for
// those being written), sets job_context::cancelled so stages drop its
// partitions in flight, asks the memory manager to drop its queued requests
// and completes the job once the proofs being written have reported
// (milliseconds: a file write), refusing every later claim. Watching
// is control's long poll (actors/control.cpp, its watches): the registry answers what
// a job finished past a cursor (job_entry::finish_order) and tells its
// listeners each time a job has news.
//
// Drain (serve stopping): the memory manager drops every queued partition and
// answers how many per job; the rest of a job's unfinished partitions were
// granted and are in flight. No partition is queued from then on (a key that
// arrives starts nothing, a retry is held back), jobs stay live, and the
// drain is answered once the partitions in flight have all finished.
#pragma once

#include <caf/fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "actors/detail/prover_ops.hpp"
#include "actors/detail/retry_policy.hpp"
#include "actors/detail/run_clock.hpp"
#include "gpu/footprint.hpp"
#include "memory/estimate.hpp"
#include "messages/interfaces.hpp"

namespace proofline {

struct job_registry_config {
  memory_manager_actor memory;
  key_cache_actor keys;
  prover_ops ops;  ///< write_file is used here
  run_clock clock;
  memory::backend_footprint footprint = gpu::cpu_backend_footprint;  ///< gpu/footprint.hpp
  /// Called (on the registry's thread) with the number of partitions of a
  /// key just queued; the runtime tells the backends (backend::
  /// expect_partitions), which weigh per-key precomputation by it.
  std::function<void(const zk::groth16::key_ptr&, std::size_t)> partitions_queued;
  /// The backends retries are placed on (actors/detail/retry_policy.hpp).
  retry_targets retries;
  /// serve --state: told of accepted jobs (a submission is answered once
  /// they are recorded), finished partitions and finished jobs. Null: none.
  journal_actor journal;
  /// Completed jobs still answered for (status, watch, await); older ones
  /// are forgotten. 0: all (`run`, whose report lists every job).
  std::size_t keep_finished = 0;
  /// The same as bytes of their records (actors/detail/job_entry.hpp,
  /// finished_jobs); 0: no byte limit.
  std::size_t keep_finished_bytes = 0;
};

/// Times a partition is proved again after a retryable failure (a backend
/// fault, a proof that failed its pairing check) before it fails, at most:
/// once on the same backend, once on another (actors/detail/retry_policy.hpp).
inline constexpr uint32_t max_proof_retries = max_placed_retries;

/// Spawns the job registry.
job_registry_actor spawn_job_registry(caf::actor_system& sys, job_registry_config cfg);

}  // namespace proofline
