// Window tables built in the background: when a resident key's partitions
// to come pay for its precomputed window multiples and they fit
// (gpu/cuda/key_tables.hpp decides), they are built on a low-priority
// stream from the plain points already on the device, then switched in
// between two partitions by poll().
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>

#include "gpu/cuda/backend/budget.hpp"
#include "gpu/cuda/backend/lanes.hpp"
#include "gpu/cuda/backend/resident.hpp"
#include "gpu/cuda/cuda_backend.hpp"

namespace proofline::gpu::cuda::detail {

class table_builds {
 public:
  /// Creates the build stream on the current device. lanes: the backend's
  /// lanes, each of which would need the tables' larger scratch.
  table_builds(device_budget& budget, const device_clock& clock, table_policy policy, std::size_t lanes);

  /// Starts building rk's tables on the low-priority stream when they pay
  /// and fit (key_tables.hpp). Called with lk (the backend's lock) held;
  /// releases it while allocating and enqueueing, never while anything runs.
  template <class C>
  void consider(std::unique_lock<std::mutex>& lk, const std::shared_ptr<resident_key<C>>& rk,
                const proving_key<C>& key);

  /// Switches in rk's tables once their build is done. Caller holds the
  /// backend's lock; throws backend_error when the build failed on the device.
  void poll(resident_base& rk);

  /// Waits until no table build writes into device memory.
  void synchronize() const { stream_->synchronize(); }

 private:
  /// A table of the plain points `src` (n of them): copied on the device,
  /// then multiplied out in place.
  template <class A>
  void table_from(device_buffer<A>& d, const device_buffer<A>& src, const msm::shape& sh, cudaStream_t s) const;

  device_budget& budget_;
  const device_clock& clock_;
  table_policy policy_;
  std::size_t lanes_;
  std::unique_ptr<stream> stream_;  ///< window-table builds, low priority
};

}  // namespace proofline::gpu::cuda::detail
