// The local pipeline's messages: a job once its key is loaded and the handles
// a partition travels in between the job registry, memory manager,
// synthesizers, scheduler, GPU workers and finalizers. Part of
// messages/catalogue.hpp.
//
//   handles      job_payload/payload_ptr, local_job, job_context/job_ptr,
//                placement, partition_ref, work_order,
//                grant, synthesized_partition, proved_partition,
//                key_load_result, constraint_system/constraints_ptr,
//                constraints_load_result
//
// None of them crosses the network: they carry shared_ptr handles to keys,
// buffers and reservations, whitelisted with CAF_ALLOW_UNSAFE_MESSAGE_TYPE;
// handlers take them by const&, so nothing large is copied.
//
// A partition moves through the pipeline as
//   registry --reserve(work_order[])--> memory manager --grant--> synthesizer
//   --ready(synthesized_partition)--> scheduler --pull reply--> gpu worker
//   --finalize(proved_partition)--> finalizer --done(partition_done)--> registry
// and any stage may instead send failed(partition_failure) to the registry (a
// synthesizer also tells the scheduler skip(ticket), so nothing waits for it).
#pragma once

#include <caf/allowed_unsafe_message_type.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpu/backend.hpp"
#include "memory/ledger.hpp"
#include "memory/pinned_pool.hpp"
#include "memory/reservation.hpp"
#include "messages/values.hpp"
#include "zk/formats/error.hpp"
#include "zk/groth16/proving_key.hpp"

namespace proofline {
namespace witness {
class generator;
}

// ---------------------------------------------------------------- handles

/// A job's side in memory (the library's jobs): witnesses given as bytes
/// instead of paths, and proofs handed back in the job's report instead of
/// written to files. Immutable; shared by the job's partitions in flight.
struct job_payload {
  /// The .wtns bytes of partition i (with job_spec::witness_generator: its
  /// input.json text), or none (then job_spec::witnesses[i] is read from
  /// disk). Either empty or one entry per partition; the spec's
  /// witnesses[i] names the bytes in messages.
  struct bytes {
    const void* data = nullptr;
    uint64_t size = 0;
  };
  std::vector<bytes> witnesses;
  /// Keeps the bytes alive: a copy the submitter made, or its own buffer,
  /// released when the last partition in flight lets go of the job.
  std::shared_ptr<const void> owner;
  /// Proof and public JSON come back in partition_done and the job's report
  /// (partition_report::proof_json); no file is written, result.json
  /// neither, and the spec's out directory is empty.
  bool return_outputs = false;
};
using payload_ptr = std::shared_ptr<const job_payload>;

/// A job submitted in process with its payload (job_registry_actor); it
/// never crosses the network.
struct local_job {
  job_spec spec;
  payload_ptr payload;  ///< null: a job of files, as submit_atom with a job_spec
};

/// A circuit's constraints (job_spec::r1cs), read once for the jobs that
/// name the file; immutable, shared by their partitions.
struct constraint_system {
  std::string path;  ///< the .r1cs, as the job names it
  zk::curve_id curve = zk::curve_id::bn254;
  uint32_t n_vars = 0;         ///< wires, wire 0 (= 1) included
  uint32_t n_constraints = 0;
  /// The rows (zk::dev::r1cs<C> of `curve`), read by prover_ops only.
  std::shared_ptr<const void> rows;
};
using constraints_ptr = std::shared_ptr<const constraint_system>;

/// A constraint load's answer: the constraints, or the error naming the file.
struct constraints_load_result {
  constraints_ptr constraints;
  file_error error;
};

/// A job once its proving key is loaded: immutable, shared by every one of
/// its partitions in flight.
struct job_context {
  uint64_t seq = 0;
  job_spec spec;
  zk::groth16::key_ptr key;
  payload_ptr payload;  ///< null: every witness is a file and every output is written
  /// Bytes one partition's witness generation allocates (the generator's
  /// estimate from its signal count, plus the parsed input), added to each
  /// partition's reservation; 0 for a job of .wtns files.
  uint64_t generator_bytes = 0;
  /// The job's witness generator, opened and checked against `key` once by
  /// the job registry; null for a job of .wtns files.
  std::shared_ptr<const witness::generator> generator;
  /// The circuit's constraints when the job names its .r1cs; null otherwise.
  constraints_ptr constraints;
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
  /// Whether the proofs come back in the report instead of files (job_payload::return_outputs).
  bool returns_outputs() const { return payload && payload->return_outputs; }
  /// The .wtns bytes of partition `index` when they were given in memory; null data otherwise.
  job_payload::bytes witness_bytes(uint32_t index) const {
    return payload && index < payload->witnesses.size() ? payload->witnesses[index]
                                                         : job_payload::bytes{};
  }
};
using job_ptr = std::shared_ptr<const job_context>;

/// Which GPU workers may prove a partition, by backend index (partition_spans::gpu).
/// The job registry sets it when it proves a partition again
/// (actors/detail/retry_policy.hpp); the scheduler honours it.
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
  /// memory; 0 before the grant. The scheduler hands partitions out in
  /// ticket order, with one exception for idle workers (actors/scheduler.hpp: Order).
  uint64_t ticket = 0;
  placement where;  ///< any primary backend unless this is a retry

  /// The witness's path, or the name of its bytes when given in memory.
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

/// A key loader's answer: the key, or the error naming the file.
struct key_load_result {
  zk::groth16::key_ptr key;
  file_error error;
};

}  // namespace proofline

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::zk::groth16::key_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::job_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::local_job)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::partition_ref)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::work_order)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<proofline::work_order>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::grant)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::synthesized_partition)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::proved_partition)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::key_load_result)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::constraints_load_result)
