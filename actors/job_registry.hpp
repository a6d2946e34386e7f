// job_registry: the only owner of job state. It accepts jobs, asks the key
// cache for their keys (one request per path while it is outstanding; the
// key is shared as zk::groth16::key_ptr, one user per job until the job
// completes), queues their partitions with the memory manager, collects partition reports, writes <out>/result.json atomically
// when a job completes and answers status and await requests.
//
// Lifecycle of a job: submit -> queued (key loading) -> partitions reserved
// -> synthesizing -> proving -> done | failed | cancelled. A job fails when any
// partition fails (bad witness, key that does not load, partition over the
// budget, backend error); its other partitions still run and their proofs are
// kept.
//
// Remote control: ids of live jobs are unique (a submission reusing one is
// refused); cancel marks the job's unfinished partitions cancelled, completes
// the job at once, sets job_context::cancelled so stages drop its partitions
// in flight, and asks the memory manager to drop its queued requests; watch is
// a long poll that answers when a job has finished partitions past the
// watcher's cursor (job_entry::finish_order) or when its wait runs out.
#pragma once

#include <caf/typed_response_promise.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "actors/prover_ops.hpp"
#include "actors/retry_policy.hpp"
#include "actors/run_clock.hpp"
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
  /// The backends retries are placed on (actors/retry_policy.hpp).
  retry_targets retries;
  /// serve --state: told of accepted jobs (a submission is answered once
  /// they are recorded), finished partitions and finished jobs. Null: none.
  journal_actor journal;
};

struct job_entry {
  uint64_t seq = 0;
  job_spec spec;
  job_ptr ctx;  ///< set once the key is loaded
  job_state state = job_state::queued;
  std::vector<partition_report> parts;
  uint32_t finished = 0;
  span_ms total;
  std::optional<file_error> error;  ///< a job-level error (a job without partitions)
  std::vector<caf::typed_response_promise<job_report>> awaiting;
  std::vector<uint32_t> finish_order;  ///< partition indices in the order they finished

  bool complete() const {
    return state == job_state::done || state == job_state::failed ||
           state == job_state::cancelled;
  }
};

/// A parked watch request (long poll).
struct job_watcher {
  std::vector<watch_cursor> cursors;
  caf::typed_response_promise<std::vector<job_progress>> promise;
};

struct job_registry_state {
  static inline const char* name = "job_registry";
  job_registry_config cfg;
  uint64_t next_seq = 1;
  std::map<uint64_t, job_entry> jobs;
  std::map<std::string, std::vector<uint64_t>> key_waits;  ///< jobs waiting for a key, by path
  std::map<std::string, uint64_t> live_ids;  ///< id -> seq of every job not yet complete
  std::map<std::string, uint64_t> live_outs;  ///< out directory -> seq, likewise
  uint64_t next_watcher = 1;
  std::map<uint64_t, job_watcher> watchers;  ///< by id, oldest first
};

/// Times a partition is proved again after a retryable failure (a backend
/// fault, a proof that failed its pairing check) before it fails, at most:
/// once on the same backend, once on another (actors/retry_policy.hpp).
inline constexpr uint32_t max_proof_retries = max_placed_retries;

/// Longest wait of one watch request, and most watchers parked at once (the
/// oldest is answered early beyond that; its client simply asks again).
inline constexpr uint32_t max_watch_ms = 60'000;
inline constexpr size_t max_watchers = 1024;

using job_registry_pointer = job_registry_actor::stateful_pointer<job_registry_state>;

job_registry_actor::behavior_type job_registry(job_registry_pointer self, job_registry_config cfg);

/// Accepts a job; refused if its id is that of a live job.
caf::result<uint64_t> submit(job_registry_pointer self, const job_spec& spec);
/// Enters a job whose id is free; returns its sequence number. The
/// partitions in `done` are finished already (a recovered job, whose out
/// directory is then left as it is); the others are queued.
uint64_t admit(job_registry_pointer self, const job_spec& spec,
               const std::vector<uint32_t>& done = {});
/// Re-queues journaled jobs (serve --state); see job_registry_actor.
caf::result<std::vector<uint64_t>> recover_jobs(job_registry_pointer self,
                                                const std::vector<job_spec>& specs,
                                                const std::vector<std::vector<uint32_t>>& done);
/// Accepts all of `specs` or none (an id live already, or given twice).
caf::result<std::vector<uint64_t>> submit_all(job_registry_pointer self,
                                              const std::vector<job_spec>& specs);
/// Cancels a live job; see the header comment.
caf::result<job_status> cancel_job(job_registry_pointer self, uint64_t seq);
/// Long poll; see the header comment.
caf::result<std::vector<job_progress>> watch(job_registry_pointer self,
                                             const std::vector<watch_cursor>& cursors,
                                             uint32_t wait_ms);
/// A parked watcher's wait ran out: answer it with what there is.
void on_watch_timeout(job_registry_pointer self, uint64_t watcher);
/// Answers every parked watcher that has news of job `seq`.
void notify_watchers(job_registry_pointer self, uint64_t seq);
/// The key cache answered for `path`: starts or fails the jobs waiting for it.
void on_key(job_registry_pointer self, const std::string& path, const key_load_result& r);
/// Queues the partitions of jobs whose key just arrived, in one reserve
/// request, so the memory manager orders them all at once. Returns how many
/// jobs took the key (each is one user of it at the key cache).
size_t start_jobs(job_registry_pointer self, const std::vector<uint64_t>& seqs,
                  const zk::groth16::key_ptr& key);
/// Partitions the memory manager refused at once (larger than the budget).
void on_refused(job_registry_pointer self, const std::vector<partition_failure>& refused);
void on_stage(job_registry_pointer self, uint64_t seq, uint32_t index, partition_state s);
void on_done(job_registry_pointer self, const partition_done& d);
void on_failed(job_registry_pointer self, const partition_failure& f);
caf::result<job_status> status_of(job_registry_pointer self, uint64_t seq);
std::vector<job_status> status_all(job_registry_pointer self);
caf::result<job_report> await_job(job_registry_pointer self, uint64_t seq);

job_report make_report(const job_entry& job);
job_status make_status(const job_entry& job);
/// What a watcher that has seen `seen` finished partitions learns now.
job_progress make_progress(const job_entry& job, uint32_t seen);

}  // namespace proofline
