// gpu::device_lost: the error after which a backend's device is unusable.
#pragma once

#include "gpu/backend.hpp"

namespace proofline::gpu {

/// A backend_error after which the device is unusable for the rest of the
/// process (a sticky CUDA error such as cudaErrorIllegalAddress: every later
/// call on the context fails the same way). Every later prove() throws it
/// again at once; the runtime proves the device's partitions elsewhere
/// (actors/detail/retry_policy.hpp).
class device_lost : public backend_error {
 public:
  using backend_error::backend_error;
};

}  // namespace proofline::gpu
