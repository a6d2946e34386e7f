// The prove pipeline of the CUDA backend: one partition on a leased lane.
//
//   lease a free lane -> the key's points on the device (key_residency) ->
//   the points partitions read now (plain, or the window tables once built:
//   a snapshot, so a switch happens between partitions) -> NTT tables of
//   the domain -> scratch sized for the partition -> the lanes' clock
//   reference -> upload (staged) -> [lock] wait for the previous
//   partition's compute event, enqueue a, b, c (when the key's A and B are
//   resident), NTTs, h, MSMs, download, record this lane's compute event
//   [unlock] -> whether to build the key's tables (table_builds) -> upload
//   done: hooks.inputs_consumed -> compute done: spans, Horner combine of
//   the window sums on the host -> result.
//
// Compute runs one partition at a time in call order (an event chain), so
// the upload of one partition overlaps the compute of another while
// per-partition latency stays low.
#pragma once

#include <cstddef>
#include <mutex>

#include "gpu/backend.hpp"
#include "gpu/cuda/backend/budget.hpp"
#include "gpu/cuda/backend/domains.hpp"
#include "gpu/cuda/backend/lanes.hpp"
#include "gpu/cuda/backend/residency.hpp"
#include "gpu/cuda/backend/table_builds.hpp"

namespace proofline::gpu::cuda::detail {

/// What the pipeline uses of its backend; every part outlives it.
struct pipeline_parts {
  int device = 0;
  std::mutex* mu = nullptr;  ///< the backend's lock
  lane_pool* lanes = nullptr;
  device_clock* clock = nullptr;
  device_budget* budget = nullptr;
  device_domains* domains = nullptr;
  key_residency* residency = nullptr;
  table_builds* tables = nullptr;
};

class partition_pipeline {
 public:
  explicit partition_pipeline(const pipeline_parts& parts) : p_(parts) {}

  /// One partition of `key` (kp's typed key) from upload to result;
  /// throws backend_error, or sticky_error when the device is lost.
  template <class C>
  result_ptr prove(const key_ptr& kp, const proving_key<C>& key, const partition<C>& part,
                   const prove_hooks& hooks);

 private:
  /// Lane scratch of at least `bytes`, its bytes counted in the budget.
  void ensure_scratch(lane& l, std::size_t bytes);

  pipeline_parts p_;
  cudaEvent_t last_compute_ = nullptr;  ///< a lane's `done` event, recorded last (under the backend's lock)
};

}  // namespace proofline::gpu::cuda::detail
