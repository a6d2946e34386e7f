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

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "actors/detail/drain_count.hpp"
#include "actors/detail/job_entry.hpp"
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

struct job_registry_state {
  static inline const char* name = "job_registry";
  job_registry_config cfg;
  uint64_t next_seq = 1;
  std::map<uint64_t, job_entry> jobs;
  std::map<std::string, std::vector<uint64_t>> key_waits;  ///< jobs waiting for a key, by path
  /// Jobs waiting for their constraints (job_spec::r1cs), by path.
  std::map<std::string, std::vector<uint64_t>> constraint_waits;
  live_names live;  ///< ids and out directories of the jobs not yet complete
  finished_jobs finished;  ///< completed jobs, oldest first (cfg.keep_finished, keep_finished_bytes)
  std::vector<job_listener_actor> listeners;  ///< told of every job's news (control's watches)
  drain_count drain;  ///< serve stopping (drain_atom)
  std::vector<caf::typed_response_promise<std::vector<job_status>>> drained;  ///< drain requests
};

/// Times a partition is proved again after a retryable failure (a backend
/// fault, a proof that failed its pairing check) before it fails, at most:
/// once on the same backend, once on another (actors/detail/retry_policy.hpp).
inline constexpr uint32_t max_proof_retries = max_placed_retries;

using job_registry_pointer = job_registry_actor::stateful_pointer<job_registry_state>;

job_registry_actor::behavior_type job_registry(job_registry_pointer self, job_registry_config cfg);

/// Accepts a job (with its payload in memory, when local); refused if its
/// id is that of a live job.
caf::result<uint64_t> submit(job_registry_pointer self, const job_spec& spec,
                             const payload_ptr& payload = nullptr);
/// Enters a job whose id is free; returns its sequence number. The
/// partitions in `done` are finished already (a recovered job, whose out
/// directory is then left as it is); the others are queued.
uint64_t admit(job_registry_pointer self, const job_spec& spec,
               const std::vector<uint32_t>& done = {}, const payload_ptr& payload = nullptr);
/// Re-queues journaled jobs (serve --state); see job_registry_actor.
caf::result<std::vector<uint64_t>> recover_jobs(job_registry_pointer self,
                                                const std::vector<job_spec>& specs,
                                                const std::vector<std::vector<uint32_t>>& done);
/// Enters jobs finished before a restart as completed (journaled reports,
/// oldest first); see job_registry_actor.
void restore_finished(job_registry_pointer self, const std::vector<job_report>& reports);
/// Accepts all of `specs` or none (an id live already, or given twice).
caf::result<std::vector<uint64_t>> submit_all(job_registry_pointer self,
                                              const std::vector<job_spec>& specs);
/// Cancels a live job; see the header comment.
caf::result<job_status> cancel_job(job_registry_pointer self, uint64_t seq);
/// What the jobs under `cursors` have finished past them, now (error for an
/// unknown job).
caf::result<std::vector<job_progress>> progress_now(job_registry_pointer self,
                                                    const std::vector<watch_cursor>& cursors);
/// Tells every listener that job `seq` has news (a finished partition, or
/// the job complete).
void tell_listeners(job_registry_pointer self, uint64_t seq);
/// The key cache answered for `path`: starts or fails the jobs waiting for it.
void on_key(job_registry_pointer self, const std::string& path, const key_load_result& r);
/// Queues the partitions of jobs whose key just arrived, in one reserve
/// request, so the memory manager orders them all at once. Returns how many
/// jobs took the key (each is one user of it at the key cache).
size_t start_jobs(job_registry_pointer self, const std::vector<uint64_t>& seqs,
                  const zk::groth16::key_ptr& key);
void on_stage(job_registry_pointer self, uint64_t seq, uint32_t index, partition_state s);
/// Whether partition `index` of job `seq` may have its proof written; see
/// job_registry_actor (claim_atom).
bool claim(job_registry_pointer self, uint64_t seq, uint32_t index);
void on_done(job_registry_pointer self, const partition_done& d);
void on_failed(job_registry_pointer self, const partition_failure& f);
caf::result<job_status> status_of(job_registry_pointer self, uint64_t seq);
std::vector<job_status> status_all(job_registry_pointer self);
caf::result<job_report> await_job(job_registry_pointer self, uint64_t seq);
/// Starts draining; see job_registry_actor.
caf::result<std::vector<job_status>> drain(job_registry_pointer self);

}  // namespace proofline
