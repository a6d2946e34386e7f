// Every typed actor interface of the pipeline, one alias each. Messages and
// atoms are in messages/catalogue.hpp; behaviours in actors/.
//
//   job_registry_actor     submit / status / await; receives partition reports
//   key_loader_actor       loads one .zkey off the scheduler threads, then quits
//   memory_manager_actor   budget ledger, grants, pacing, purges
//   synthesizer_actor      pulls grants, reads witnesses, computes a, b, c
//   scheduler_actor        orders synthesized partitions, serves GPU workers
//   gpu_worker_actor       runs the prover backend on one device
//   finalizer_actor        assembles proofs and writes the output files
#pragma once

#include <caf/replies_to.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "messages/catalogue.hpp"

namespace proofline {

using job_registry_actor = caf::typed_actor<
    /// Accepts a job; replies with its sequence number. Bad input fails the job, not the call.
    caf::replies_to<submit_atom, job_spec>::with<uint64_t>,
    /// Where one job stands (error sec::invalid_argument for an unknown seq).
    caf::replies_to<status_atom, uint64_t>::with<job_status>,
    /// Where every job stands, in submission order.
    caf::replies_to<status_atom>::with<std::vector<job_status>>,
    /// The job's report, delivered once it is done or failed.
    caf::replies_to<await_atom, uint64_t>::with<job_report>,
    /// A partition (job seq, index) entered a stage (synthesizing or proving).
    caf::reacts_to<stage_atom, uint64_t, uint32_t, partition_state>,
    /// A partition's proof and public signals are written.
    caf::reacts_to<done_atom, partition_done>,
    /// A partition failed at some stage; the error names the file.
    caf::reacts_to<failed_atom, partition_failure>>;

using key_loader_actor = caf::typed_actor<
    /// Loads and checks the key at `path`; blocking, so it runs detached.
    caf::replies_to<load_atom, std::string>::with<key_load_result>>;

using memory_manager_actor = caf::typed_actor<
    /// Queues partitions for memory; replies with those refused at once
    /// (larger than the whole budget).
    caf::replies_to<reserve_atom, std::vector<work_order>>::with<std::vector<partition_failure>>,
    /// An idle synthesizer asks for work; answered when a grant is possible.
    caf::replies_to<pull_atom>::with<grant>,
    /// Reservation (id) returns bytes; `final` ends it.
    caf::reacts_to<release_atom, uint64_t, uint64_t, bool>,
    /// Reservation (id) started proving on a GPU worker: it no longer counts for pacing.
    caf::reacts_to<taken_atom, uint64_t>,
    /// A GPU worker finished a partition and had none ready to start.
    caf::reacts_to<starved_atom>,
    /// A finalizer freed buffers of this arena (-1: the process heap).
    caf::reacts_to<purge_atom, int>,
    /// The ledger and pacing counters.
    caf::replies_to<stats_atom>::with<memory_stats>>;

using synthesizer_actor = caf::typed_actor<
    /// Ask the memory manager for the next partition.
    caf::reacts_to<pull_atom>>;

using scheduler_actor = caf::typed_actor<
    /// A synthesized partition, ready for a GPU worker.
    caf::reacts_to<ready_atom, synthesized_partition>,
    /// The partition with this ticket failed before it was ready: stop waiting for it.
    caf::reacts_to<skip_atom, uint64_t>,
    /// A GPU worker asks for its next partition; answered when one is ready.
    caf::replies_to<pull_atom>::with<synthesized_partition>>;

using gpu_worker_actor = caf::typed_actor<
    /// Prove the next partition held in the look-ahead (sent to itself).
    caf::reacts_to<run_atom>>;

using finalizer_actor = caf::typed_actor<caf::reacts_to<finalize_atom, proved_partition>>;

}  // namespace proofline
