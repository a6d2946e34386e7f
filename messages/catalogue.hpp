// Every message of the proving pipeline: atoms, payloads and the one place
// that registers them with the actor system. Typed interfaces are in
// messages/interfaces.hpp.
//
//   enums        priority, job_state, partition_state
//   values       span_ms, partition_spans, file_error, job_spec,
//                partition_done, partition_failure, job_status,
//                partition_report, job_report, memory_stats
//                (inspectable: may cross the network later)
//   handles      job_context/job_ptr, partition_ref, work_order, grant,
//                synthesized_partition, proved_partition, key_load_result
//                (local only: they carry shared_ptr handles to keys, buffers
//                and reservations, whitelisted with CAF_ALLOW_UNSAFE_MESSAGE_TYPE;
//                handlers take them by const&, so nothing large is copied)
//   atoms        grouped by recipient, below
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
#include <caf/meta/type_name.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/backend.hpp"
#include "memory/ledger.hpp"
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
};
const char* to_string(job_state s);

/// Where one partition stands.
enum class partition_state : uint8_t {
  queued,        ///< waiting for memory or a synthesizer
  synthesizing,  ///< a synthesizer reads its witness and computes a, b, c
  proving,       ///< a GPU worker runs the backend on it
  done,          ///< proof and public signals written
  failed,        ///< see its error
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

/// The three stages of one partition.
struct partition_spans {
  span_ms synthesize, prove, finalize;
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
};

/// A partition failed at some stage.
struct partition_failure {
  uint64_t job_seq = 0;
  uint32_t index = 0;
  partition_spans spans;
  file_error error;
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
};

// ---------------------------------------------------------------- handles

/// A job once its proving key is loaded: immutable, shared by every one of
/// its partitions in flight.
struct job_context {
  uint64_t seq = 0;
  job_spec spec;
  zk::groth16::key_ptr key;

  /// "proof.json" for a single-witness job, else "proof_<i>.json".
  std::string proof_name(uint32_t index) const;
  /// "public.json" for a single-witness job, else "public_<i>.json".
  std::string public_name(uint32_t index) const;
  /// <out>/<name>.
  std::string out_path(const std::string& name) const;
};
using job_ptr = std::shared_ptr<const job_context>;

/// Names one partition and carries its spans through the pipeline.
struct partition_ref {
  job_ptr job;
  uint32_t index = 0;
  partition_spans spans;
  /// Grant number (1, 2, ...) in the order the memory manager granted
  /// memory; 0 before the grant. The scheduler hands partitions out only once
  /// every earlier ticket is ready or skipped, so they are proved in order.
  uint64_t ticket = 0;

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
};

/// A partition with its memory granted, handed to a synthesizer.
struct grant {
  partition_ref part;
  memory::reservation_ptr reservation;
  uint64_t bulk = 0;
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
// memory manager
using reserve_atom = caf::atom_constant<caf::atom("reserve")>;  ///< work_order[] -> refusals
using pull_atom = caf::atom_constant<caf::atom("pull")>;  ///< idle: give me work (also scheduler)
using release_atom = caf::atom_constant<caf::atom("release")>;  ///< reservation bytes back
using taken_atom = caf::atom_constant<caf::atom("taken")>;      ///< a GPU worker started it
using starved_atom = caf::atom_constant<caf::atom("starved")>;  ///< a GPU worker ran dry
using purge_atom = caf::atom_constant<caf::atom("purge")>;      ///< purge an arena
using stats_atom = caf::atom_constant<caf::atom("stats")>;      ///< -> memory_stats
// scheduler
using ready_atom = caf::atom_constant<caf::atom("ready")>;  ///< synthesized_partition
using skip_atom = caf::atom_constant<caf::atom("skip")>;    ///< ticket whose synthesis failed
// gpu worker
using run_atom = caf::atom_constant<caf::atom("run")>;  ///< prove the next held partition
// finalizer
using finalize_atom = caf::atom_constant<caf::atom("finalize")>;  ///< proved_partition

// ---------------------------------------------------------------- inspect
// Field names are left out: CAF 0.17's binary format does not need them.

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, span_ms& x) {
  return f(caf::meta::type_name("span_ms"), x.start, x.end);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, partition_spans& x) {
  return f(caf::meta::type_name("partition_spans"), x.synthesize, x.prove, x.finalize);
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
           x.public_file);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, partition_failure& x) {
  return f(caf::meta::type_name("partition_failure"), x.job_seq, x.index, x.spans, x.error);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, job_status& x) {
  return f(caf::meta::type_name("job_status"), x.seq, x.id, x.state, x.done, x.failed, x.total);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, partition_report& x) {
  return f(caf::meta::type_name("partition_report"), x.index, x.state, x.proof_file, x.public_file,
           x.spans, x.error);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, job_report& x) {
  return f(caf::meta::type_name("job_report"), x.seq, x.id, x.out, x.state, x.has_error, x.error,
           x.partitions, x.total);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, memory_stats& x) {
  return f(caf::meta::type_name("memory_stats"), x.budget, x.reserved, x.peak_reserved, x.queued,
           x.reservations, x.untaken, x.pacing, x.grants, x.purges);
}

/// Registers the inspectable payloads (needed before they cross the network).
void register_message_types(caf::actor_system_config& cfg);

}  // namespace proofline

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::job_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::partition_ref)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::work_order)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<proofline::work_order>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::grant)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::synthesized_partition)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::proved_partition)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::key_load_result)
