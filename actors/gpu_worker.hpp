// gpu_worker: one per lane of a backend device (a CUDA GPU runs two lanes:
// the backend overlaps one lane's upload with the other's compute, and runs
// compute in call order). It pulls synthesized partitions from
// the scheduler, keeping at most `lookahead` of them not yet started (held or
// requested), runs backend->prove() on each, and sends the results to a
// finalizer (round robin). prove() blocks for the whole computation, so
// production spawns the worker detached (its own thread); tests spawn it
// undetached for determinism. A backend_error fails only that partition.
//
// Memory: when it starts proving a partition the worker tells the memory
// manager (taken: the partition no longer waits, so synthesis may run ahead
// by one more), and when it runs dry after a partition it says so (starved:
// pacing may widen); when the backend reports its inputs consumed
// (gpu::prove_hooks::inputs_consumed) the worker releases the bulk of the
// partition's reservation; on failure it releases all of it.
//
// Placement: it pulls with its backend index, and the scheduler hands it only
// partitions that backend may prove (actors/scheduler.hpp). Keys: the runtime
// asks one worker per device (lane 0) to prepare each loaded key; the worker
// tells the key cache what it cost and the scheduler whether the device holds
// the key. The fallback worker prepares keys on first use.
//
// Every partition handed out is reported back to the scheduler: worker_done_atom
// when proved (or dropped, its job cancelled), worker_failed_atom when the backend
// failed it (the registry then places a retry). A gpu::device_lost from the
// backend (a sticky CUDA error: the device is unusable until the process
// ends) fails the partition with device_lost set and ends the worker; the
// scheduler takes the device out and queues what it held elsewhere. A pull
// answered with an error (the scheduler is gone, or took this device out of
// service) ends the worker too.
#pragma once

#include <caf/fwd.hpp>

#include <memory>
#include <vector>

#include "actors/detail/run_clock.hpp"
#include "gpu/backend.hpp"
#include "messages/interfaces.hpp"

namespace proofline {

struct gpu_worker_config {
  std::shared_ptr<gpu::backend> backend;
  scheduler_actor scheduler;
  memory_manager_actor memory;  ///< told when a partition starts proving (pacing)
  std::vector<finalizer_actor> finalizers;
  job_registry_actor registry;
  unsigned lookahead = 1;  ///< partitions held or requested beyond the one proving (1..2)
  run_clock clock;
  int device = 0;  ///< the backend's index (partition_spans::gpu)
  int lane = 0;    ///< this worker's lane on that device (partition_spans::lane)
  key_cache_actor keys;  ///< told what preparing each key cost
  /// The runtime's fallback backend: it proves only partitions placed on it
  /// (retries; actors/detail/retry_policy.hpp), and names itself "<kind>:fallback".
  bool fallback = false;
  /// Spawned on a thread of its own (production: proving blocks).
  bool detached = false;
};

/// Spawns a GPU worker, detached (on a thread of its own) when cfg.detached.
gpu_worker_actor spawn_gpu_worker(caf::actor_system& sys, gpu_worker_config cfg);

}  // namespace proofline
