// The baseline engine: proofline's own prover libraries driven the way the
// production prover it replaces drives them, so `scripts/bench-utilization.sh`
// can run one backlog through both and compare GPU busy time and hand-off
// gaps (issue 4, item 7; the README's opening).
//
// What is the same as `proofline run`: the job file, the order partitions
// start in (priority, job, partition), key loading (once per zkey), the
// a, b, c computation, the backends and their lanes (one GPU-worker thread
// per lane), proof assembly and the output files, and the thread counts
// (--synthesizers, --finalizers, --lanes, same defaults). Partitions in flight
// are bounded by synthesizers + 3 × lanes, the number proofline sizes its
// pinned pool for.
//
// What differs, on purpose, and nothing else:
//  * Tracker: plain std::threads hand partitions on through queues, and every
//    GPU worker (before and after each prove) and finalizer (after each
//    partition) takes ONE std::mutex over all job state (tracker.hpp).
//  * Allocator: glibc malloc (the executable does not link jemalloc); every
//    partition buffer comes from the process heap, and after every finalized
//    partition malloc_trim(0) runs while the tracker's lock is held.
//    `pinned_pool` puts the witness and a, b, c in a pool like proofline's
//    instead (memory/pinned_pool.hpp), to separate the upload path's share
//    of the difference from the lock's and the trim's.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <optional>
#include <vector>

#include "actors/detail/prover_ops.hpp"
#include "bench/baseline/heap_stats.hpp"
#include "bench/baseline/tracker.hpp"
#include "gpu/backend.hpp"
#include "memory/pinned_pool.hpp"
#include "messages/catalogue.hpp"

namespace proofline::bench::baseline {

struct engine_config {
  unsigned synthesizers = 2;  ///< threads computing a, b, c
  unsigned finalizers = 2;    ///< threads assembling and writing proofs
  /// Partitions synthesized but not yet finalized, at most; 0 = synthesizers
  /// + 3 × lanes (in synthesis, waiting, proving, finalizing).
  unsigned in_flight = 0;
  /// malloc_trim(0) under the tracker's lock after every finalized partition.
  bool trim = true;
  /// Runs instead of malloc_trim(0) when set (tests: a trim of known length).
  std::function<void()> trim_hook;
  /// Witness and a, b, c in a pool of in_flight blocks, pinned with `pinner`.
  bool pinned_pool = false;
  memory::pinner pinner;
  /// The run's time base (wall time, spans); `proofline run` starts its own
  /// with the command, so the baseline's main sets this at its start too.
  /// Unset: when run_engine starts.
  std::optional<run_clock> clock;
  /// malloc_info after every finalized partition, on its finalizer before
  /// the tracker's lock (engine_result::heap_peak); the run's end always.
  bool heap_stats = false;
  /// How `ops` synthesizes ("plain" or "lc"), for the report only.
  std::string synthesis_model = "plain";
};

/// One device (backend object) and the lanes it runs.
struct device_backend {
  std::shared_ptr<gpu::backend> backend;
  unsigned lanes = 1;
};

struct engine_result {
  job_tracker::summary tracker;
  double wall_ms = 0;       ///< the whole run, key loading included
  double load_ms = 0;       ///< loading and checking the proving keys
  double run_epoch_us = 0;  ///< the run's start, µs on the steady clock (spans' base)
  std::size_t proofs = 0;   ///< partitions done
  std::size_t failed = 0;   ///< partitions failed
  unsigned in_flight = 0;   ///< the bound used
  uint64_t pool_bytes = 0;  ///< pinned pool capacity (0: none)
  bool pool_pinned = false;
  std::string pool_error;  ///< why the pool is not pinned, if asked to be
  uint64_t peak_rss = 0;   ///< process VmHWM at the end, bytes
  uint64_t trim_returned_bytes = 0;  ///< resident bytes the trims returned, summed
  glibc_heap heap_peak;    ///< the heap_stats sample with the most arena memory
  glibc_heap heap_end;     ///< the heap once every thread has finished
  uint64_t heap_samples = 0;
  double heap_read_ms = 0;  ///< time in malloc_info over all samples
  /// Per partition record (as tracker.parts): when its synthesis finished, ms
  /// since the run started; -1 if it never did.
  std::vector<double> ready_ms;
};

/// Proves every partition of `jobs` and returns when all are done or failed.
/// Blocking; starts and joins its own threads. Failures (unreadable key or
/// witness, backend error, unwritable output) fail their partition only.
engine_result run_engine(const std::vector<job_spec>& jobs, const prover_ops& ops,
                         const std::vector<device_backend>& devices, const engine_config& cfg);

}  // namespace proofline::bench::baseline
