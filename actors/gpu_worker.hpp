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

#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include "actors/run_clock.hpp"
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
  /// (retries; actors/retry_policy.hpp), and names itself "<kind>:fallback".
  bool fallback = false;
};

struct gpu_worker_state {
  static inline const char* name = "gpu_worker";
  gpu_worker_config cfg;
  std::deque<synthesized_partition> held;  // received, not yet started
  unsigned requested = 0;                  // pulls outstanding at the scheduler
  bool running = false;                    // a run message is queued or being handled
  size_t next_finalizer = 0;
  uint64_t proved = 0;
  /// Keys prepared here on plain points: the backend may build their window
  /// tables later, between partitions; once it has, the preparation goes to
  /// the key cache again with the build's time and span.
  std::vector<std::pair<std::weak_ptr<const zk::groth16::proving_key_base>, key_preparation>>
      without_tables;
};

using gpu_worker_pointer = gpu_worker_actor::stateful_pointer<gpu_worker_state>;

gpu_worker_actor::behavior_type gpu_worker(gpu_worker_pointer self, gpu_worker_config cfg);

/// Requests partitions until `lookahead` are held or on their way.
void refill(gpu_worker_pointer self);
/// A partition arrived from the scheduler: hold it, start proving if idle.
void on_partition(gpu_worker_pointer self, const synthesized_partition& p);
/// The backend as result.json names it: "cuda:0", "cpu:fallback".
std::string backend_label(const gpu_worker_config& cfg);
/// Proves the oldest held partition, if any, and schedules the next.
void prove_next(gpu_worker_pointer self);
/// Makes `key` ready on the device (gpu::backend::prepare) and tells the
/// scheduler whether it is (a failure: the device cannot hold the key; a
/// gpu::device_lost: the device is lost).
void prepare_key(gpu_worker_pointer self, const zk::groth16::key_ptr& key);
/// After a partition of `key`: if its window tables were built since it was
/// prepared, sends the key cache its preparation again with them.
void report_tables(gpu_worker_pointer self, const zk::groth16::key_ptr& key);
/// The GPU_TIMING line of a proved partition: each device span's duration
/// (upload, each NTT, each MSM, download), key=value, at debug level.
void log_gpu_timing(gpu_worker_pointer self, const partition_ref& part);

/// The backend's spans (microseconds on the steady clock since its epoch)
/// as milliseconds since the run started.
std::vector<named_span> to_run_time(const std::vector<gpu::span>& spans, const run_clock& clock);

}  // namespace proofline
