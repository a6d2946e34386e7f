// scheduler: holds synthesized partitions in the global order (priority, job
// sequence, partition index) and hands them to GPU workers, which pull (each
// keeps a small look-ahead, so the next partition is at the worker before the
// current one finishes). A pull with nothing to hand out is parked as a
// response promise and answered as soon as a partition can go; the scheduler
// itself never blocks.
//
// Order: partitions are handed out in grant order. Every grant carries a
// ticket (1, 2, ...); a ready partition goes to a worker's look-ahead only
// once every earlier ticket is ready too or skipped (its synthesis failed).
// Synthesizers working in parallel finish in any order, so without this a
// later job's partition could take the look-ahead slot before an earlier
// job's, and jobs of one priority would finish out of order.
// One exception keeps the GPU from idling behind a slow synthesis: a worker
// holding nothing takes a ready partition whose earlier tickets still in
// synthesis all belong to its own job (synthesizers report each ticket's job
// as they start it: granted_atom). Partitions of one job finish in any order
// without changing when the job finishes, and syntheses whose times vary (a
// real circuit's, or --synthesis-model lc) would otherwise hold the GPU idle
// for the rest of the slowest earlier one. Between jobs the order holds, so
// at a job boundary the GPU may still wait for the earlier job's last
// synthesis; under a backlog (partitions ready ahead of the GPU) none of this
// costs anything.
//
// Backends: every pull names its worker's backend index: the primary
// backends (GPUs) 0 .. devices-1, and the fallback (with CUDA, the CPU) at
// index `devices` when there is one. Whether partition p may go to backend d
// is decided in one place, eligible():
//   - d is in service: not lost (a sticky device error, its GPU worker died,
//     or device_failure_limit failures in a row while another proves);
//   - the key is ready on d: each device's preparing GPU worker (lane 0)
//     reports each key it prepared, or could not hold (residency_atom), so a
//     key that fits one GPU's memory but not another's is proved by the GPUs
//     that hold it. A refusal stands for the life of the key object. A new
//     key waits on a device until its preparing worker has finished the
//     partition it is proving. The fallback prepares keys on first use;
//   - p's placement admits d (a retry may be placed on one backend, on any
//     primary but one, or on the fallback: actors/detail/retry_policy.hpp); when no
//     backend it admits can prove p any more, the other primary backends
//     may, and the fallback last of all; the fallback otherwise takes only
//     what is placed on it.
// Among parked pulls that may take a partition, the one of the backend with
// the fewest partitions in flight goes first (then the worker with the
// fewest, then the oldest pull), so an idle GPU is served before a busy
// one's look-ahead.
//
// Failures and lost devices: the scheduler keeps a copy of what each worker
// holds until the worker reports it done or failed. A backend failure of a
// partition goes to the registry, which counts it as a retry and places the
// retry (actors/detail/retry_policy.hpp): once more on the same backend, then on
// another GPU or the fallback. A lost device is different: its pulls are
// answered with an error (its workers quit) and what its workers held but
// had not failed is queued again for the others as it was: not a retry, since
// those partitions did not fail. A partition that no backend can prove any
// more (its key refused everywhere and no fallback, or every backend lost)
// fails with the reasons. The copy kept for a worker shares the partition's
// buffers; a worker reports a proved partition done before it sends it to a
// finalizer, so that copy is normally gone before the finalizer frees the
// buffers and asks for a purge.
#pragma once

#include <caf/fwd.hpp>

#include <cstdint>

#include "messages/interfaces.hpp"

namespace proofline {

/// Backend failures in a row after which a primary backend is taken out of
/// service, provided another primary is still proving. A partition fails at
/// most twice on one backend (retry_policy places its second retry
/// elsewhere), so one bad partition alone never takes a device out.
inline constexpr unsigned device_failure_limit = 3;

/// The backends partitions are placed on: primary indices 0 .. devices-1,
/// and the fallback (a backend that proves only what is placed on it, or
/// what no primary can prove any more) at index `devices` when there is one.
struct scheduler_config {
  int32_t devices = 1;
  bool fallback = false;
  int32_t fallback_index() const { return fallback ? devices : -1; }
};

/// Spawns the scheduler (its state and handlers: actors/detail/scheduler_state.hpp).
scheduler_actor spawn_scheduler(caf::actor_system& sys, scheduler_config cfg);

}  // namespace proofline
