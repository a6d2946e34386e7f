// The values of the proving pipeline: enums, spans, errors, job specs,
// partition outcomes, reports and the stats actors answer with. Every one is
// inspectable, so it can cross the network (clients read reports and stats;
// nodes send spans and errors back). Part of messages/catalogue.hpp.
//
//   enums        priority, job_state, partition_state
//   values       span_ms, named_span, partition_spans, file_error, job_spec,
//                partition_done, partition_failure, job_status,
//                partition_report, job_report, memory_stats, scheduler_stats,
//                key_preparation, key_startup
//   inspect      one function each (finite_double keeps doubles finite)
#pragma once

#include <caf/error.hpp>
#include <caf/sec.hpp>
#include <caf/meta/type_name.hpp>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

/// The three stages of one partition, the wait for memory before them, and
/// the backend's spans inside `prove`.
struct partition_spans {
  /// From the moment the memory manager queued the partition to its grant,
  /// both read by the memory manager itself, so the grant order across jobs
  /// can be checked against what was queued at each grant.
  span_ms memory;
  span_ms synthesize, prove, finalize;
  /// Inside `synthesize`: computing the witness from the partition's input
  /// (a job with a witness generator); never recorded when it reads a .wtns.
  span_ms witness;
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
  std::vector<std::string> witnesses;  ///< one per partition: proof_<i>.json proves witnesses[i]
  bool single = true;                  ///< "witness": writes proof.json, else proof_<i>.json
  /// A witness generator (`proofline witness build`): witnesses[i] are then
  /// input.json files, and synthesizers compute each witness in process.
  std::string witness_generator;
  /// With a generator: also write each computed witness as <out>/witness.wtns
  /// (one partition) or <out>/witness_<i>.wtns.
  bool keep_witness = false;
  /// The circuit's constraints (a circom .r1cs), optional: each partition's
  /// witness is checked against them before it is proved, and one that does
  /// not satisfy them fails naming the first unsatisfied constraint.
  std::string r1cs;
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
  /// The proof.json and public.json text, for a job whose outputs come back
  /// in its report (job_payload::return_outputs); empty when written to files.
  std::string proof_json = {};
  std::string public_json = {};
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
  /// The proof was assembled but failed its pairing check (spans.backend
  /// proved it): the same failure on two backends means the witness does
  /// not satisfy the circuit (actors/detail/retry_policy.hpp).
  bool check_failed = false;
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
  std::string proof_json = {};   ///< see partition_done::proof_json
  std::string public_json = {};  ///< see partition_done::public_json
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

/// One device making a key ready (gpu::backend::prepare_measured), on the run's clock.
struct key_preparation {
  int gpu = 0;                ///< the backend's index (as partition_spans::gpu)
  span_ms prepare;            ///< the whole prepare() call on the GPU worker
  double to_device_ms = 0;    ///< points to device memory (0: not measured by the backend)
  double tables_ms = 0;       ///< window and NTT tables (0: not measured, or none)
  uint64_t tables_bytes = 0;  ///< device bytes of those tables
  uint64_t device_bytes = 0;  ///< device bytes the key holds in all
  uint64_t abc_bytes = 0;     ///< of them, its A and B for a, b, c on the device (0: none)
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
  return f(caf::meta::type_name("partition_spans"), x.memory, x.synthesize, x.prove, x.finalize, x.witness,
           x.device, x.gpu, x.lane, x.backend, x.synthesizer, x.finalizer);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, key_preparation& x) {
  return f(caf::meta::type_name("key_preparation"), x.gpu, x.prepare, x.to_device_ms,
           x.tables_ms, x.tables_bytes, x.device_bytes, x.abc_bytes, x.spans);
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
  return f(caf::meta::type_name("job_spec"), x.id, x.zkey, x.witnesses, x.single, x.out, x.prio,
           x.witness_generator, x.keep_witness, x.r1cs);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, partition_done& x) {
  finite_double verify_ms{x.verify_ms};
  return f(caf::meta::type_name("partition_done"), x.job_seq, x.index, x.spans, x.proof_file,
           x.public_file, x.verified, verify_ms, x.proof_json, x.public_json);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, partition_failure& x) {
  return f(caf::meta::type_name("partition_failure"), x.job_seq, x.index, x.spans, x.error,
           x.retryable, x.device_lost, x.check_failed);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, job_status& x) {
  return f(caf::meta::type_name("job_status"), x.seq, x.id, x.state, x.done, x.failed, x.total);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, partition_report& x) {
  finite_double verify_ms{x.verify_ms};
  return f(caf::meta::type_name("partition_report"), x.index, x.state, x.proof_file, x.public_file,
           x.spans, x.error, x.verified, verify_ms, x.retries, x.proof_json, x.public_json);
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

}  // namespace proofline
