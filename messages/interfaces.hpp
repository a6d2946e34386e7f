// Every typed actor interface of the pipeline, one alias each. Messages and
// atoms are in messages/catalogue.hpp; behaviours in actors/.
//
//   job_listener_actor     told of job news by the registry (control's watches)
//   job_registry_actor     submit / status / await; receives partition reports
//   key_loader_actor       loads one .zkey off the scheduler threads, then quits
//   key_cache_actor        the loaded proving keys: shared, kept warm, evicted LRU
//   journal_actor          serve --state: accepted jobs and finished partitions, on disk
//   memory_manager_actor   budget ledger, grants, pacing, purges
//   synthesizer_actor      pulls grants, reads witnesses, computes a, b, c
//   scheduler_actor        orders synthesized partitions, serves GPU workers
//   gpu_worker_actor       runs the prover backend on one device
//   finalizer_actor        assembles proofs and writes the output files
//   node_actor, cluster_actor, control_actor, control_admin_actor
//                          remote control and clusters (one block, at the end)
#pragma once

#include <caf/replies_to.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "messages/catalogue.hpp"

namespace proofline {

/// Told by the job registry each time a job (its sequence number) has news:
/// a partition finished, or the job completed (control's watches).
using job_listener_actor = caf::typed_actor<caf::reacts_to<news_atom, uint64_t>>;

using job_registry_actor = caf::typed_actor<
    /// Accepts a job; replies with its sequence number. Bad input fails the job, not the call.
    caf::replies_to<submit_atom, job_spec>::with<uint64_t>,
    /// The same for a job submitted in process with its witnesses in memory
    /// and its outputs returned in its report (the library); never remote.
    caf::replies_to<submit_atom, local_job>::with<uint64_t>,
    /// Where one job stands (error sec::invalid_argument for an unknown seq).
    caf::replies_to<status_atom, uint64_t>::with<job_status>,
    /// Where every job stands, in submission order.
    caf::replies_to<status_atom>::with<std::vector<job_status>>,
    /// The job's report, delivered once it is done or failed.
    caf::replies_to<await_atom, uint64_t>::with<job_report>,
    /// A partition (job seq, index) entered a stage (synthesizing or proving).
    caf::reacts_to<stage_atom, uint64_t, uint32_t, partition_state>,
    /// May the checked proof of partition (job seq, index) be written? True
    /// unless the job completed or is cancelled; a partition granted is
    /// then reported (done, or failed), and its job does not complete
    /// before, so the job's record, result.json and every report of it
    /// agree with the files on disk. False: drop the proof unwritten.
    caf::replies_to<claim_atom, uint64_t, uint32_t>::with<bool>,
    /// A partition's proof and public signals are written.
    caf::reacts_to<partition_done_atom, partition_done>,
    /// A partition failed at some stage; the error names the file.
    caf::reacts_to<partition_failed_atom, partition_failure>,
    /// Accepts several jobs at once, or none: refused (sec::invalid_argument,
    /// naming the id) if an id is that of a live job or given twice.
    caf::replies_to<submit_atom, std::vector<job_spec>>::with<std::vector<uint64_t>>,
    /// Cancels a live job: its unfinished partitions become cancelled, the
    /// memory manager drops its queued requests, stages drop it in flight;
    /// those whose proofs are being written (claimed) finish first, so the
    /// job completes, and this answers, once those writes are done.
    /// Error sec::invalid_argument for an unknown or finished job.
    caf::replies_to<cancel_atom, uint64_t>::with<job_status>,
    /// What each watched job finished past its cursor, now (error
    /// sec::invalid_argument for an unknown job).
    caf::replies_to<watch_atom, std::vector<watch_cursor>>::with<std::vector<job_progress>>,
    /// From now on, tell this listener of every job's news.
    caf::reacts_to<listen_atom, job_listener_actor>,
    /// Re-queues jobs a journal kept across a restart (serve --state), with,
    /// per job, the partitions whose proofs exist and verify: those are done
    /// and not proved again, and the job's other outputs are left in place.
    /// Replies their new sequence numbers, in order (0: not recovered, its
    /// id or out directory being live already).
    caf::replies_to<recover_atom, std::vector<job_spec>,
                    std::vector<std::vector<uint32_t>>>::with<std::vector<uint64_t>>,
    /// Jobs a journal recorded as finished before a restart (serve --state),
    /// oldest first: answered for by status and await as completed jobs,
    /// within keep_finished; nothing is proved or written for them.
    caf::reacts_to<recover_atom, std::vector<job_report>>,
    /// Drains (serve stopping): no partition starts any more (the memory
    /// manager drops the queued ones, retries are not queued) while the jobs
    /// stay live, so the journal keeps them. Replies the live jobs once every
    /// partition in flight has finished.
    caf::replies_to<drain_atom>::with<std::vector<job_status>>>;

using key_loader_actor = caf::typed_actor<
    /// Loads and checks the key at `path`; blocking, so it runs detached.
    caf::replies_to<load_atom, std::string>::with<key_load_result>>;

using key_cache_actor = caf::typed_actor<
    /// The key at `path` (loaded once, then shared while the file is
    /// unchanged) or the error naming the file. A key answered counts one
    /// user more until released with key_users_atom.
    caf::replies_to<key_atom, std::string>::with<key_load_result>,
    /// Users of a key come (+n) or go (-n); a key without users is idle.
    caf::reacts_to<key_users_atom, zk::groth16::key_ptr, int32_t>,
    /// Loads the key at `path` and prepares it on the backends, without a
    /// user (`serve --preload`).
    caf::replies_to<preload_atom, std::string>::with<key_load_result>,
    /// Takes a key loaded elsewhere (from bytes, by the library) under
    /// `name`, with one user: jobs naming `name` get it, and it is dropped
    /// when its last user goes. Error sec::invalid_argument when `name` is taken.
    caf::replies_to<adopt_atom, std::string, zk::groth16::key_ptr>::with<key_load_result>,
    /// The memory manager wants `bytes` more room: idle keys are evicted,
    /// least recently used first; replies with the bytes freed.
    caf::replies_to<evict_bytes_atom, uint64_t>::with<uint64_t>,
    /// Evicts the key at `path` now (HTTP DELETE /v1/keys/{id}); replies with
    /// the bytes freed. Error sec::invalid_argument when it is not loaded or
    /// a job uses it (the message says which).
    caf::replies_to<evict_path_atom, std::string>::with<uint64_t>,
    /// The keys held, least recently used first (metrics).
    caf::replies_to<warm_keys_atom>::with<std::vector<warm_key>>,
    /// A device made a key ready, and what that cost (from a GPU worker).
    caf::reacts_to<prepared_atom, zk::groth16::key_ptr, key_preparation>,
    /// Every key loaded so far and how it became ready, in load order (run reports).
    caf::replies_to<startup_atom>::with<std::vector<key_startup>>>;

/// The state journal (serve --state; actors/journal.hpp): accepted jobs and
/// finished partitions in SQLite, on a thread of its own.
using journal_actor = caf::typed_actor<
    /// Writes accepted jobs (seqs and specs) durably; replies the seqs once
    /// they are on disk (the submission is acknowledged after that).
    caf::replies_to<record_atom, std::vector<uint64_t>, std::vector<job_spec>>::with<
        std::vector<uint64_t>>,
    /// Partition `index` of job `seq` has its proof written.
    caf::reacts_to<record_done_atom, uint64_t, uint32_t>,
    /// Job `seq` is done, failed or cancelled, with the report its
    /// result.json holds: it leaves the jobs to resume and is kept among the
    /// finished ones (answered for after a restart).
    caf::reacts_to<complete_atom, uint64_t, job_report>,
    /// Re-queues the journaled jobs with `registry`, checking their finished
    /// partitions' proofs with keys from `keys`.
    caf::reacts_to<replay_atom, job_registry_actor, key_cache_actor>>;

using memory_manager_actor = caf::typed_actor<
    /// Queues partitions for memory; replies with those refused at once
    /// (larger than the whole budget).
    caf::replies_to<reserve_atom, std::vector<work_order>>::with<std::vector<partition_failure>>,
    /// An idle synthesizer asks for work; answered when a grant is possible.
    caf::replies_to<grant_request_atom>::with<grant>,
    /// Reservation (id) returns bytes; `final` ends it.
    caf::reacts_to<release_atom, uint64_t, uint64_t, bool>,
    /// Reservation (id) started proving on a GPU worker: it no longer counts for pacing.
    caf::reacts_to<taken_atom, uint64_t>,
    /// A GPU worker finished a partition and had none ready to start.
    caf::reacts_to<starved_atom>,
    /// A finalizer freed buffers of this arena (-1: the process heap).
    caf::reacts_to<purge_atom, int>,
    /// The ledger and pacing counters.
    caf::replies_to<stats_atom>::with<memory_stats>,
    // ---- memory system
    /// Drops the queued (not yet granted) partitions of job `seq`; replies
    /// with how many were dropped. Granted ones return their memory through
    /// their reservations when the stages drop them.
    caf::replies_to<drop_queued_atom, uint64_t>::with<uint64_t>,
    /// The proving key at `path` holds `bytes` of host memory (0: released).
    caf::reacts_to<key_memory_atom, std::string, uint64_t>,
    /// The key at `path` has no user (true) or has one again (false); idle
    /// keys are evicted through the key cache when the queue's head needs room.
    caf::reacts_to<key_idle_atom, std::string, bool>,
    /// The key cache to ask for room (sent once by the runtime).
    caf::reacts_to<attach_atom, key_cache_actor>,
    /// The pinned pool block at this offset is free again (from the block).
    caf::reacts_to<pool_free_atom, uint64_t>,
    /// Pinning the pool finished on its own thread: pinned?, milliseconds,
    /// the reason when not.
    caf::reacts_to<pool_pinned_atom, bool, double, std::string>,
    /// The coalesced purge of this arena is due (a timer, sent to itself).
    caf::reacts_to<purge_due_atom, int>>;

using synthesizer_actor = caf::typed_actor<
    /// Ask the memory manager for the next partition.
    caf::reacts_to<seek_work_atom>>;

using scheduler_actor = caf::typed_actor<
    /// A synthesized partition, ready for a GPU worker.
    caf::reacts_to<ready_atom, synthesized_partition>,
    /// The partition with this ticket failed before it was ready: stop waiting for it.
    caf::reacts_to<skip_atom, uint64_t>,
    /// The synthesis of ticket t of job seq began (actors/scheduler.hpp: Order).
    caf::reacts_to<granted_atom, uint64_t, uint64_t>,
    /// A GPU worker of backend (device) d asks for its next partition;
    /// answered when one that d may prove is ready (actors/scheduler.hpp),
    /// or with an error once d is out of service (the worker then quits).
    caf::replies_to<partition_pull_atom, int32_t>::with<synthesized_partition>,
    /// A GPU worker is done with partition (job seq, index): proved, or dropped (cancelled).
    caf::reacts_to<worker_done_atom, uint64_t, uint32_t>,
    /// A GPU worker's backend failed a partition (its reservation already
    /// released): the scheduler counts it against the device (device_lost:
    /// takes the device out) and passes it to the registry, which places a retry.
    caf::reacts_to<worker_failed_atom, partition_failure>,
    /// Device d made a key ready (true), or cannot hold it (false, why).
    caf::reacts_to<residency_atom, zk::groth16::key_ptr, int32_t, bool, std::string>,
    /// Backend d is unusable for the rest of the run (a sticky device error
    /// outside a partition): it is taken out of service.
    caf::reacts_to<lost_atom, int32_t>,
    /// The registry to report failures to (sent once by the runtime).
    caf::reacts_to<attach_atom, job_registry_actor>,
    /// Its queue: partitions ready, pulls parked, partitions handed out.
    caf::replies_to<stats_atom>::with<scheduler_stats>>;

using gpu_worker_actor = caf::typed_actor<
    /// Prove the next partition held in the look-ahead (sent to itself).
    caf::reacts_to<run_atom>,
    /// A proving key was loaded: make it ready on the device (resident points,
    /// tables) while its first partitions are still being synthesized.
    caf::reacts_to<prepare_atom, zk::groth16::key_ptr>,
    /// The key cache evicted a key: forget its device state (gpu::backend::evict).
    caf::reacts_to<evict_key_atom, zk::groth16::key_ptr>>;

using finalizer_actor = caf::typed_actor<caf::reacts_to<finalize_atom, proved_partition>>;

// ================================================================ remote control and clusters

/// A node's agent as its coordinator sees it (actors/node_agent.hpp).
using node_actor = caf::typed_actor<
    /// A partition leased to this node.
    caf::reacts_to<assign_atom, remote_partition>,
    /// The coordinator cancelled this job (its sequence number): drop its leases.
    caf::reacts_to<cancel_atom, uint64_t>>;

/// The coordinator's owner of nodes and leases (actors/cluster_dispatcher.hpp).
using cluster_actor = caf::typed_actor<
    /// A node joins; replies with its id. The node is monitored from then on.
    caf::replies_to<join_atom, node_info, node_actor>::with<uint64_t>,
    /// Node (id) has room for n more partitions.
    caf::reacts_to<credit_atom, uint64_t, uint32_t>,
    /// A node's answer for a lease.
    caf::reacts_to<result_atom, partition_result>,
    /// A job (sequence number) was cancelled: revoke its leases.
    caf::reacts_to<cancel_atom, uint64_t>,
    /// The nodes, for metrics.
    caf::replies_to<metrics_atom>::with<std::vector<node_metrics>>>;

/// The API that `serve` publishes (actors/control.hpp): clients and nodes
/// talk to this and nothing else.
using control_actor = caf::typed_actor<
    /// Parses and checks a job file, then submits all of its jobs or none.
    caf::replies_to<submit_atom, job_submission>::with<std::vector<submitted_job>>,
    /// Every job of this server, in submission order.
    caf::replies_to<status_atom>::with<std::vector<job_status>>,
    /// Cancels the live job with this id.
    caf::replies_to<cancel_atom, std::string>::with<job_status>,
    /// Long poll: answers when a watched job has news past its cursor, or
    /// after `wait_ms` (capped; then with no news).
    caf::replies_to<watch_atom, std::vector<watch_cursor>, uint32_t>::with<std::vector<job_progress>>,
    /// Memory, jobs and nodes.
    caf::replies_to<metrics_atom>::with<cluster_metrics>,
    /// Cluster messages from nodes, handed to the cluster dispatcher.
    caf::replies_to<join_atom, node_info, node_actor>::with<uint64_t>,
    caf::reacts_to<credit_atom, uint64_t, uint32_t>,
    caf::reacts_to<result_atom, partition_result>>;

/// What the control actor talks to, sent once the runtime is up (local only).
struct control_wiring {
  job_registry_actor registry;
  memory_manager_actor memory;
  cluster_actor cluster;  ///< null when this server dispatches to no nodes
  key_cache_actor keys;   ///< the warm keys, for metrics
};

/// The control actor with its local-only wiring message. `serve` spawns this
/// and publishes it as control_actor, so remote peers see only the API.
using control_admin_actor = control_actor::extend<
    caf::reacts_to<attach_atom, control_wiring>,
    /// Job news from the registry (job_listener_actor).
    caf::reacts_to<news_atom, uint64_t>,
    /// A parked watch's wait ran out (sent to itself).
    caf::reacts_to<watch_due_atom, uint64_t>,
    /// The server is stopping: submissions are refused from now on.
    caf::reacts_to<drain_atom>,
    /// Answers once every watch that news sent before this request woke has
    /// been answered (serve's last step before it stops control).
    caf::replies_to<flush_atom>::with<bool>>;

/// The node agent with its local-only timer message; the coordinator sees it as node_actor.
using node_agent_actor = node_actor::extend<caf::reacts_to<rejoin_atom>>;

// ================================================================ end of remote control and clusters

}  // namespace proofline

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::control_wiring)
