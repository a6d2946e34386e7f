// Every message of the proving pipeline: atoms, payloads and the one place
// that registers them with the actor system. Typed interfaces are in
// messages/interfaces.hpp.
//
//   enums        priority, job_state, partition_state
//   values       span_ms, named_span, partition_spans, file_error, job_spec,
//                partition_done, partition_failure, job_status,
//                partition_report, job_report, memory_stats, scheduler_stats
//                (inspectable: may cross the network later)
//   handles      job_context/job_ptr, partition_ref, work_order, grant,
//                synthesized_partition, proved_partition, key_load_result
//                (local only: they carry shared_ptr handles to keys, buffers
//                and reservations, whitelisted with CAF_ALLOW_UNSAFE_MESSAGE_TYPE;
//                handlers take them by const&, so nothing large is copied)
//   atoms        grouped by recipient, below (the run observer keeps its own
//                in observe/observer.hpp)
//   remote control and clusters: inline_witness, job_submission,
//                submitted_job, watch_cursor, job_progress, node_info,
//                remote_partition, partition_result, node_metrics,
//                cluster_metrics and their atoms (one block, near the end)
//   register_message_types(cfg)
//
// A partition moves through the pipeline as
//   registry --reserve(work_order[])--> memory manager --grant--> synthesizer
//   --ready(synthesized_partition)--> scheduler --pull reply--> gpu worker
//   --finalize(proved_partition)--> finalizer --done(partition_done)--> registry
// and any stage may instead send failed(partition_failure) to the registry (a
// synthesizer also tells the scheduler skip(ticket), so nothing waits for it).
#pragma once

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/fwd.hpp>
#include <caf/error.hpp>
#include <caf/sec.hpp>
#include <caf/meta/type_name.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/backend.hpp"
#include "memory/ledger.hpp"
#include "memory/pinned_pool.hpp"
#include "memory/reservation.hpp"
#include "zk/groth16/proving_key.hpp"

namespace proofline {

// ---------------------------------------------------------------- enums

/// Scheduling priority of a job; higher goes first.
enum class priority : uint8_t {
  low,       ///< "low"
  normal,    ///< "normal" (default)
  high,      ///< "high"
  critical,  ///< "critical"
};
const char* to_string(priority p);
/// "low", "normal", "high", "critical"; nullopt for anything else.
std::optional<priority> parse_priority(std::string_view s);

/// Where a job stands; only the job registry changes it.
enum class job_state : uint8_t {
  queued,        ///< waiting for its key or for memory
  synthesizing,  ///< a partition is being synthesized
  proving,       ///< a partition reached the prover backend
  done,          ///< every partition proved and written
  failed,        ///< finished, at least one partition failed
  cancelled,     ///< stopped by a cancel request; its queued and in-flight work is dropped
};
const char* to_string(job_state s);

/// Where one partition stands.
enum class partition_state : uint8_t {
  queued,        ///< waiting for memory or a synthesizer
  synthesizing,  ///< a synthesizer reads its witness and computes a, b, c
  proving,       ///< a GPU worker runs the backend on it
  done,          ///< proof and public signals written
  failed,        ///< see its error
  cancelled,     ///< its job was cancelled before it finished
};
const char* to_string(partition_state s);

// ---------------------------------------------------------------- values

/// An interval in milliseconds since the run started (steady clock);
/// start < 0 means it never happened.
struct span_ms {
  double start = -1;
  double end = -1;
  bool recorded() const { return start >= 0; }
};

/// One named interval of backend work (upload, ntt_a, msm_h, ...), in
/// milliseconds since the run started. On the GPU these are device time from
/// CUDA events; on the CPU backend, the steady clock around each step.
struct named_span {
  std::string name;
  double start = 0;
  double end = 0;
};

/// The three stages of one partition, and the backend's spans inside `prove`.
struct partition_spans {
  span_ms synthesize, prove, finalize;
  std::vector<named_span> device;  ///< from gpu::prove_hooks::spans, in order
  int32_t gpu = -1;                ///< the device (backend) index that proved it; -1 before
  int32_t lane = -1;               ///< the GPU worker lane on that device
  /// The backend that proved it, as result.json names it: "<kind>:<index>"
  /// ("cuda:0", "cpu:0"), or "<kind>:fallback" for the runtime's fallback
  /// backend; empty before.
  std::string backend;
  // ---- observability (trace lanes): which pool member ran a stage
  uint64_t synthesizer = 0;  ///< actor id of the synthesizer that ran it; 0 before
  uint64_t finalizer = 0;    ///< actor id of the finalizer that ran it; 0 before
};

/// A failure users read: the file at fault and what is wrong
/// ("w3.wtns: 1520 witness values, circuit.zkey expects 1521").
struct file_error {
  std::string file;
  std::string message;
};

/// A job as a client submits it. Paths are used as given (the app resolves
/// them against the job file's directory before submitting).
struct job_spec {
  std::string id;                      ///< unique name, for reports
  std::string zkey;                    ///< proving key path
  std::vector<std::string> witnesses;  ///< one per partition, proved in order
  bool single = true;                  ///< "witness": writes proof.json, else proof_<i>.json
  std::string out;                     ///< output directory
  priority prio = priority::normal;
};

/// A partition finished: its files (names inside the job's out directory).
struct partition_done {
  uint64_t job_seq = 0;
  uint32_t index = 0;
  partition_spans spans;
  std::string proof_file;
  std::string public_file;
  bool verified = false;  ///< the proof passed its pairing check (false: not checked)
  double verify_ms = 0;   ///< what the check took
};

/// A partition failed at some stage.
struct partition_failure {
  uint64_t job_seq = 0;
  uint32_t index = 0;
  partition_spans spans;
  file_error error;
  /// A fault of the proof, not of the input (a backend error, a proof that
  /// failed its pairing check): the registry proves the partition again.
  bool retryable = false;
  /// The device that proved it is unusable for the rest of the run (a sticky
  /// CUDA error, gpu::device_lost): the retry goes elsewhere at once.
  bool device_lost = false;
};

/// A compact view of one job (status requests).
struct job_status {
  uint64_t seq = 0;
  std::string id;
  job_state state = job_state::queued;
  uint32_t done = 0;    ///< partitions done
  uint32_t failed = 0;  ///< partitions failed
  uint32_t total = 0;   ///< partitions in the job
};

/// One partition in a finished job's report (and result.json).
struct partition_report {
  uint32_t index = 0;
  partition_state state = partition_state::queued;
  std::string proof_file;   ///< empty unless done
  std::string public_file;  ///< empty unless done
  partition_spans spans;
  file_error error;  ///< empty unless failed
  bool verified = false;  ///< the written proof passed its pairing check
  double verify_ms = 0;
  uint32_t retries = 0;   ///< times it was proved again after a fault
};

/// Everything result.json says about a job, plus what the summary needs.
struct job_report {
  uint64_t seq = 0;
  std::string id;
  std::string out;
  job_state state = job_state::queued;
  bool has_error = false;
  file_error error;  ///< the first failed partition's error (lowest index)
  std::vector<partition_report> partitions;
  span_ms total;  ///< submission to completion
};

/// The memory manager's ledger and pacing, for status and tests.
struct memory_stats {
  uint64_t budget = 0;
  uint64_t reserved = 0;
  uint64_t peak_reserved = 0;
  uint64_t queued = 0;        ///< partitions waiting for memory
  uint64_t reservations = 0;  ///< live reservations
  uint64_t untaken = 0;       ///< granted, not yet being proved
  uint64_t pacing = 0;        ///< current limit on untaken grants (adaptive)
  uint64_t grants = 0;        ///< granted so far
  uint64_t purges = 0;        ///< purge requests received so far
  // ---- memory system (memory manager): what is held, and the purges it ran
  uint64_t keys = 0;           ///< bytes of proving keys loaded, counted in `reserved`
  uint64_t peak_keys = 0;      ///< the most `keys` has been
  uint64_t pool = 0;           ///< pinned pool capacity, counted once in `reserved`
  bool pool_pinned = false;    ///< the pool's pages are page-locked for DMA
  uint64_t pool_used = 0;      ///< bytes of the pool in blocks handed out
  double pool_pin_ms = 0;      ///< how long pinning the pool took (0: not pinned)
  uint64_t fixed = 0;          ///< backends' fixed host buffers, counted once
  uint64_t rss = 0;            ///< resident set size now (/proc/self/statm)
  uint64_t peak_rss = 0;       ///< peak resident set size of the process (VmHWM)
  uint64_t purges_run = 0;     ///< arena purges executed (requests coalesce)
  double purge_ms_total = 0;   ///< time spent in those purges
  double purge_ms_max = 0;     ///< the longest of them
  uint64_t purged_bytes = 0;   ///< dirty bytes they returned to the kernel
  std::vector<std::string> purge_threads;  ///< names of the threads purges ran on
  std::vector<uint64_t> purge_thread_ids;  ///< their kernel thread ids
  uint64_t cancelled = 0;      ///< queued requests dropped by cancel
};

/// The scheduler's queue, for run reports, progress and metrics.
struct scheduler_stats {
  uint64_t ready = 0;   ///< synthesized partitions held, waiting for a GPU worker
  uint64_t parked = 0;  ///< GPU-worker pulls waiting for a partition
  uint64_t handed = 0;  ///< partitions handed to GPU workers so far
};

// ---------------------------------------------------------------- handles

/// A job once its proving key is loaded: immutable, shared by every one of
/// its partitions in flight.
struct job_context {
  uint64_t seq = 0;
  job_spec spec;
  zk::groth16::key_ptr key;
  /// Set once by the job registry when the job is cancelled; every stage
  /// checks it and drops the partition (its reservation then frees the
  /// memory). An atomic flag, read without any lock.
  mutable std::atomic<bool> cancelled{false};

  /// "proof.json" for a single-witness job, else "proof_<i>.json".
  std::string proof_name(uint32_t index) const;
  /// "public.json" for a single-witness job, else "public_<i>.json".
  std::string public_name(uint32_t index) const;
  /// <out>/<name>.
  std::string out_path(const std::string& name) const;
};
using job_ptr = std::shared_ptr<const job_context>;

/// Which GPU workers may prove a partition, by backend index (partition_spans::gpu).
/// The job registry sets it when it proves a partition again
/// (actors/retry_policy.hpp); the scheduler honours it.
struct placement {
  int32_t device = -1;  ///< -1: any primary backend; else a backend index
  bool avoid = false;   ///< true: any primary backend except `device`

  /// Whether a worker of backend `d` may take the partition, where `fallback`
  /// is the index of the fallback backend (-1: none). The fallback takes only
  /// what is placed on it by name.
  bool admits(int32_t d, int32_t fallback) const {
    if (device < 0) return d != fallback;
    if (!avoid) return d == device;
    return d != device && d != fallback;
  }
};

/// Names one partition and carries its spans through the pipeline.
struct partition_ref {
  job_ptr job;
  uint32_t index = 0;
  partition_spans spans;
  /// Grant number (1, 2, ...) in the order the memory manager granted
  /// memory; 0 before the grant. The scheduler hands partitions out only once
  /// every earlier ticket is ready or skipped, so they are proved in order.
  uint64_t ticket = 0;
  placement where;  ///< any primary backend unless this is a retry

  const std::string& witness() const { return job->spec.witnesses[index]; }
  memory::grant_order order() const {
    return {static_cast<uint8_t>(job->spec.prio), job->seq, index};
  }
};

/// A partition waiting for memory; `bytes` from memory::estimate_partition.
struct work_order {
  partition_ref part;
  uint64_t bytes = 0;  ///< whole reservation
  uint64_t bulk = 0;   ///< part released when the backend has consumed the inputs
  /// Pool block that can hold the witness and a, b, c instead of pageable
  /// memory (memory::partition_estimate::pinnable); 0 = never pooled.
  uint64_t pinnable = 0;
  /// The reservation when the pool holds them: the backend's working copies.
  uint64_t working = 0;
};

/// A partition with its memory granted, handed to a synthesizer.
struct grant {
  partition_ref part;
  memory::reservation_ptr reservation;
  uint64_t bulk = 0;
  /// Pinned pool block for the witness and a, b, c (the synthesizer writes
  /// them there); null: they come from the synthesizer's pageable arena.
  memory::block_ptr block;
  /// Threads the synthesis may use: 1 plus its share of the synthesizers
  /// left idle by this round of grants (their cores would idle otherwise).
  uint32_t threads = 1;
};

/// A synthesized partition on its way to a GPU worker.
struct synthesized_partition {
  partition_ref part;
  memory::reservation_ptr reservation;
  uint64_t bulk = 0;
  gpu::partition_ptr data;
  int arena = -1;  ///< where data's buffers live (memory::source::arena)
};

/// A proved partition (MSM results) on its way to a finalizer.
struct proved_partition {
  partition_ref part;
  memory::reservation_ptr reservation;
  gpu::partition_ptr data;
  gpu::result_ptr result;
  int arena = -1;
};

/// One device making a key ready (gpu::backend::prepare_measured), on the run's clock.
struct key_preparation {
  int gpu = 0;                ///< the backend's index (as partition_spans::gpu)
  span_ms prepare;            ///< the whole prepare() call on the GPU worker
  double to_device_ms = 0;    ///< points to device memory (0: not measured by the backend)
  double tables_ms = 0;       ///< window and NTT tables (0: not measured, or none)
  uint64_t tables_bytes = 0;  ///< device bytes of those tables
  uint64_t device_bytes = 0;  ///< device bytes the key holds in all
  std::vector<named_span> spans;  ///< its device work, as the backend reports it
};

/// How one proving key came to be ready: read on the host, then prepared on
/// each device. One per load (a key read twice appears twice).
struct key_startup {
  std::string path;
  uint64_t bytes = 0;  ///< host bytes of the loaded key
  span_ms read;        ///< reading and checking the .zkey
  std::vector<key_preparation> devices;
};

/// A key loader's answer: the key, or the error naming the file.
struct key_load_result {
  zk::groth16::key_ptr key;
  file_error error;
};

// ---------------------------------------------------------------- atoms
// job registry
using submit_atom = caf::atom_constant<caf::atom("submit")>;  ///< job_spec -> seq
using status_atom = caf::atom_constant<caf::atom("status")>;  ///< [seq] -> job_status
using await_atom = caf::atom_constant<caf::atom("await")>;    ///< seq -> job_report at completion
using stage_atom = caf::atom_constant<caf::atom("stage")>;    ///< a partition entered a stage
using done_atom = caf::atom_constant<caf::atom("done")>;      ///< partition_done
using failed_atom = caf::atom_constant<caf::atom("failed")>;  ///< partition_failure
// key loader
using load_atom = caf::atom_constant<caf::atom("load")>;  ///< path -> key_load_result
// key cache
using key_atom = caf::atom_constant<caf::atom("key")>;  ///< path -> key_load_result (one user more)
using key_users_atom = caf::atom_constant<caf::atom("keyusers")>;  ///< key, +/- users
using preload_atom = caf::atom_constant<caf::atom("preload")>;     ///< path -> key_load_result (warm)
using evict_atom = caf::atom_constant<caf::atom("evict")>;  ///< bytes wanted -> bytes freed; gpu: key
using warm_keys_atom = caf::atom_constant<caf::atom("warmkeys")>;  ///< -> warm_key[]
using prepared_atom = caf::atom_constant<caf::atom("prepared")>;  ///< a device made a key ready
using startup_atom = caf::atom_constant<caf::atom("startup")>;    ///< -> key_startup[]
// memory manager
using reserve_atom = caf::atom_constant<caf::atom("reserve")>;  ///< work_order[] -> refusals
using pull_atom = caf::atom_constant<caf::atom("pull")>;  ///< idle: give me work (also scheduler)
using release_atom = caf::atom_constant<caf::atom("release")>;  ///< reservation bytes back
using taken_atom = caf::atom_constant<caf::atom("taken")>;      ///< a GPU worker started it
using starved_atom = caf::atom_constant<caf::atom("starved")>;  ///< a GPU worker ran dry
using purge_atom = caf::atom_constant<caf::atom("purge")>;      ///< purge an arena
using stats_atom = caf::atom_constant<caf::atom("stats")>;      ///< -> memory_stats
using purge_due_atom = caf::atom_constant<caf::atom("purgedue")>;  ///< a coalesced purge is due
using pool_free_atom = caf::atom_constant<caf::atom("poolfree")>;  ///< a pool block is free again
using key_memory_atom = caf::atom_constant<caf::atom("keymem")>;   ///< a key's host bytes (0: gone)
using key_idle_atom = caf::atom_constant<caf::atom("keyidle")>;    ///< a warm key no job uses (evictable)
using pool_pinned_atom = caf::atom_constant<caf::atom("pooldone")>;  ///< the pool's pinning finished
/// Drop a job's queued requests (same alias as the control block's).
using cancel_atom = caf::atom_constant<caf::atom("cancel")>;
// scheduler
using ready_atom = caf::atom_constant<caf::atom("ready")>;  ///< synthesized_partition
using skip_atom = caf::atom_constant<caf::atom("skip")>;    ///< ticket whose synthesis failed
using lost_atom = caf::atom_constant<caf::atom("lost")>;    ///< a backend index is unusable
// gpu worker
using run_atom = caf::atom_constant<caf::atom("run")>;  ///< prove the next held partition
using prepare_atom = caf::atom_constant<caf::atom("prepare")>;  ///< make a key resident ahead
// finalizer
using finalize_atom = caf::atom_constant<caf::atom("finalize")>;  ///< proved_partition

// ---------------------------------------------------------------- inspect
// Field names are left out: CAF 0.17's binary format does not need them.

/// A double field that crosses the network finite. CAF 0.17's encoder
/// never returns on an infinity (its IEEE 754 packing halves the value until
/// it drops below 2), and its decoder makes one from 8 bytes a peer chose;
/// a server re-encoding a node's span for a client would spin forever.
/// Decoding refuses a non-finite value; encoding writes one as -1 (for a
/// span: never happened).
struct finite_double {
  double& value;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, finite_double& x) {
  if constexpr (Inspector::reads_state) {
    double v = std::isfinite(x.value) ? x.value : -1;
    return f(v);
  } else {
    if (auto err = f(x.value)) return err;
    if (!std::isfinite(x.value)) return caf::make_error(caf::sec::invalid_argument);
    return caf::error{};
  }
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, span_ms& x) {
  finite_double start{x.start}, end{x.end};
  return f(caf::meta::type_name("span_ms"), start, end);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, named_span& x) {
  finite_double start{x.start}, end{x.end};
  return f(caf::meta::type_name("named_span"), x.name, start, end);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, partition_spans& x) {
  return f(caf::meta::type_name("partition_spans"), x.synthesize, x.prove, x.finalize, x.device,
           x.gpu, x.lane, x.backend, x.synthesizer, x.finalizer);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, key_preparation& x) {
  return f(caf::meta::type_name("key_preparation"), x.gpu, x.prepare, x.to_device_ms,
           x.tables_ms, x.tables_bytes, x.device_bytes, x.spans);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, key_startup& x) {
  return f(caf::meta::type_name("key_startup"), x.path, x.bytes, x.read, x.devices);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, file_error& x) {
  return f(caf::meta::type_name("file_error"), x.file, x.message);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, job_spec& x) {
  return f(caf::meta::type_name("job_spec"), x.id, x.zkey, x.witnesses, x.single, x.out, x.prio);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, partition_done& x) {
  return f(caf::meta::type_name("partition_done"), x.job_seq, x.index, x.spans, x.proof_file,
           x.public_file, x.verified, x.verify_ms);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, partition_failure& x) {
  return f(caf::meta::type_name("partition_failure"), x.job_seq, x.index, x.spans, x.error,
           x.retryable, x.device_lost);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, job_status& x) {
  return f(caf::meta::type_name("job_status"), x.seq, x.id, x.state, x.done, x.failed, x.total);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, partition_report& x) {
  return f(caf::meta::type_name("partition_report"), x.index, x.state, x.proof_file, x.public_file,
           x.spans, x.error, x.verified, x.verify_ms, x.retries);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, job_report& x) {
  return f(caf::meta::type_name("job_report"), x.seq, x.id, x.out, x.state, x.has_error, x.error,
           x.partitions, x.total);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, scheduler_stats& x) {
  return f(caf::meta::type_name("scheduler_stats"), x.ready, x.parked, x.handed);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, memory_stats& x) {
  finite_double purge_ms_total{x.purge_ms_total}, purge_ms_max{x.purge_ms_max},
      pool_pin_ms{x.pool_pin_ms};
  return f(caf::meta::type_name("memory_stats"), x.budget, x.reserved, x.peak_reserved, x.queued,
           x.reservations, x.untaken, x.pacing, x.grants, x.purges, x.keys, x.peak_keys, x.pool,
           x.pool_pinned, x.pool_used, pool_pin_ms, x.fixed, x.rss, x.peak_rss, x.purges_run,
           purge_ms_total, purge_ms_max, x.purged_bytes, x.purge_threads,
           x.purge_thread_ids, x.cancelled);
}

// ================================================================ remote control and clusters
// The messages of the control actor (published with CAF's io::middleman for
// `proofline submit|status|cancel|await|metrics`), of the cluster dispatcher
// on a coordinator and of the node agent on a `serve --join` node. Every one
// of these crosses the network, so all are inspectable and registered by
// register_message_types. docs/CLUSTER.md describes the protocol.

/// A witness sent inline with a submission (`submit --inline`): the path as
/// the job file names it once resolved, and the file's bytes.
struct inline_witness {
  std::string path;
  std::vector<uint8_t> bytes;
};

/// A job file as a client submits it: the server parses `text` with
/// jobs/job_file's rules, resolving relative paths against the directory of
/// `name` (the client's absolute path of the job file).
struct job_submission {
  std::string name;
  std::string text;
  bool inline_witnesses = false;         ///< witnesses come as `witnesses`, not from storage
  std::vector<inline_witness> witnesses;  ///< one per distinct witness path when inline
};

/// A job the server accepted: the client's id and the server's sequence number.
struct submitted_job {
  std::string id;
  uint64_t seq = 0;
};

/// What a watcher has already seen of a job: `seen` finished partitions.
struct watch_cursor {
  uint64_t seq = 0;
  uint32_t seen = 0;
};

/// News about one watched job: partitions that finished after the cursor,
/// in the order they finished, and the report once the job is complete.
struct job_progress {
  job_status status;
  std::vector<partition_report> finished;  ///< after cursor.seen, in finishing order
  uint32_t seen = 0;                       ///< the cursor to send next time
  bool complete = false;
  job_report report;  ///< set when complete
};

/// What a node offers its coordinator when it joins.
struct node_info {
  std::string name;                   ///< host:pid, for logs and metrics
  std::vector<std::string> backends;  ///< one description per GPU worker
  uint64_t memory_budget = 0;         ///< bytes
  uint32_t slots = 0;                 ///< partitions it works on at once, at most
};

/// A partition leased to a node. Paths are the coordinator's, on storage
/// every node sees; an inline witness comes as bytes instead.
struct remote_partition {
  uint64_t lease = 0;
  uint64_t job_seq = 0;  ///< the coordinator's job sequence number
  uint32_t index = 0;
  std::string job_id;
  std::string zkey;
  std::string witness;                ///< empty when inline
  std::vector<uint8_t> witness_bytes;  ///< the .wtns file when inline
  priority prio = priority::normal;
};

/// A node's answer for a lease: proof.json and public.json text, or the error.
struct partition_result {
  uint64_t node = 0;
  uint64_t lease = 0;
  bool ok = false;
  std::string proof_json;
  std::string public_json;
  partition_spans spans;  ///< on the node's clock
  file_error error;
};

/// One node as its coordinator sees it.
struct node_metrics {
  uint64_t id = 0;
  node_info info;
  uint32_t credit = 0;    ///< partitions it asked for and has not been sent
  uint32_t leased = 0;    ///< partitions it works on now
  uint64_t proved = 0;    ///< results accepted
  uint64_t failed = 0;    ///< partitions it reported failed
  uint64_t requeued = 0;  ///< partitions taken back (it left, or its job was cancelled)
};

/// A proving key the server keeps loaded (`serve` keeps keys warm across
/// submissions until the memory budget needs room).
struct warm_key {
  std::string path;
  uint64_t bytes = 0;      ///< host bytes of its points and coefficients
  uint32_t users = 0;      ///< live jobs using it now
  double last_use_ms = 0;  ///< when a job last took it, ms since the server started
  double idle_ms = 0;      ///< since then (0 while in use)
};

/// `proofline metrics`: the server's memory ledger, its jobs and its nodes.
struct cluster_metrics {
  std::string name;  ///< host:pid of the server
  memory_stats memory;
  uint32_t jobs_live = 0;
  uint32_t jobs_done = 0;
  uint32_t jobs_failed = 0;
  uint32_t jobs_cancelled = 0;
  uint64_t partitions_done = 0;
  uint64_t partitions_failed = 0;
  std::vector<node_metrics> nodes;
  std::vector<warm_key> keys;  ///< warm proving keys, least recently used first
};

// atoms of the control actor, cluster dispatcher and node agent (cancel_atom,
// status_atom, submit_atom and await_atom are shared with the pipeline)
using watch_atom = caf::atom_constant<caf::atom("watch")>;      ///< long-poll job progress
using metrics_atom = caf::atom_constant<caf::atom("metrics")>;  ///< -> cluster_metrics
using join_atom = caf::atom_constant<caf::atom("join")>;        ///< a node registers
using credit_atom = caf::atom_constant<caf::atom("credit")>;    ///< a node has room for n more
using assign_atom = caf::atom_constant<caf::atom("assign")>;    ///< a lease, to a node
using result_atom = caf::atom_constant<caf::atom("result")>;    ///< a node's partition_result
using attach_atom = caf::atom_constant<caf::atom("attach")>;    ///< wires the control actor
using rejoin_atom = caf::atom_constant<caf::atom("rejoin")>;    ///< a node agent connects again
// ---- the state journal (serve --state, actors/journal.hpp)
using record_atom = caf::atom_constant<caf::atom("record")>;      ///< accepted jobs, before the ack
using complete_atom = caf::atom_constant<caf::atom("complete")>;  ///< a job finished: forget it
using recover_atom = caf::atom_constant<caf::atom("recover")>;    ///< re-queue journaled jobs
using news_atom = caf::atom_constant<caf::atom("news")>;  ///< a job has news for control's watches
using drain_atom = caf::atom_constant<caf::atom("drain")>;  ///< serve stops: no new work, finish what runs

/// Reads a byte vector as CAF's binary format lays it out (a varbyte length,
/// then the bytes) in steps of at most 1 MiB, so a declared length makes
/// the receiver allocate no more than the bytes that actually arrived (plus
/// one step and the vector's growth). CAF's own reader resizes to the
/// declared length first, so a 200-byte message claiming a 4 GiB witness
/// would make the server allocate 4 GiB before finding the bytes missing.
template <class Deserializer>
caf::error load_bytes(Deserializer& f, std::vector<uint8_t>& x) {
  constexpr size_t step_bytes = size_t(1) << 20;
  size_t n = 0;
  if (auto err = f.begin_sequence(n)) return err;
  x.clear();
  for (size_t done = 0; done < n;) {
    const size_t step = std::min(step_bytes, n - done);
    x.resize(done + step);
    if (auto err = f.apply_raw(step, x.data() + done)) return err;
    done += step;
  }
  return f.end_sequence();
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, inline_witness& x) {
  if constexpr (Inspector::reads_state)
    return f(caf::meta::type_name("inline_witness"), x.path, x.bytes);
  else
    return caf::error::eval([&] { return f(caf::meta::type_name("inline_witness"), x.path); },
                            [&] { return load_bytes(f, x.bytes); });
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, job_submission& x) {
  return f(caf::meta::type_name("job_submission"), x.name, x.text, x.inline_witnesses,
           x.witnesses);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, submitted_job& x) {
  return f(caf::meta::type_name("submitted_job"), x.id, x.seq);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, watch_cursor& x) {
  return f(caf::meta::type_name("watch_cursor"), x.seq, x.seen);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, job_progress& x) {
  return f(caf::meta::type_name("job_progress"), x.status, x.finished, x.seen, x.complete,
           x.report);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_info& x) {
  return f(caf::meta::type_name("node_info"), x.name, x.backends, x.memory_budget, x.slots);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, remote_partition& x) {
  if constexpr (Inspector::reads_state)
    return f(caf::meta::type_name("remote_partition"), x.lease, x.job_seq, x.index, x.job_id,
             x.zkey, x.witness, x.witness_bytes, x.prio);
  else
    return caf::error::eval(
        [&] {
          return f(caf::meta::type_name("remote_partition"), x.lease, x.job_seq, x.index,
                   x.job_id, x.zkey, x.witness);
        },
        [&] { return load_bytes(f, x.witness_bytes); }, [&] { return f(x.prio); });
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, partition_result& x) {
  return f(caf::meta::type_name("partition_result"), x.node, x.lease, x.ok, x.proof_json,
           x.public_json, x.spans, x.error);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_metrics& x) {
  return f(caf::meta::type_name("node_metrics"), x.id, x.info, x.credit, x.leased, x.proved,
           x.failed, x.requeued);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, warm_key& x) {
  return f(caf::meta::type_name("warm_key"), x.path, x.bytes, x.users, x.last_use_ms, x.idle_ms);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, cluster_metrics& x) {
  return f(caf::meta::type_name("cluster_metrics"), x.name, x.memory, x.jobs_live, x.jobs_done,
           x.jobs_failed, x.jobs_cancelled, x.partitions_done, x.partitions_failed, x.nodes,
           x.keys);
}

// ================================================================ end of remote control and clusters

/// Registers the inspectable payloads (needed before they cross the network).
void register_message_types(caf::actor_system_config& cfg);

}  // namespace proofline

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::zk::groth16::key_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::job_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::partition_ref)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::work_order)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<proofline::work_order>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::grant)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::synthesized_partition)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::proved_partition)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::key_load_result)
