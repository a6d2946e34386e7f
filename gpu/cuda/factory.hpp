// Creating the CUDA backend, from plain C++: callable whether or not the
// build has CUDA, so `--backend auto` can decide at run time.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "gpu/backend.hpp"
#include "gpu/footprint.hpp"

namespace proofline::zk::dev {
class fixed_base_engine;
}

namespace proofline::gpu {

/// Number of CUDA devices visible to this process; 0 when the build has no
/// CUDA or no usable driver/device, with the reason in *why (if given), e.g.
/// "built without CUDA" or "cudaGetDeviceCount: CUDA driver version is
/// insufficient for CUDA runtime version".
int cuda_device_count(std::string* why = nullptr);

/// What an operator may set on a CUDA backend (gpu/cuda/cuda_backend.hpp has the rest).
struct cuda_settings {
  /// Device bytes for resident keys, tables and scratch; 0 = 90% of the
  /// memory free on the device when the backend starts.
  std::size_t memory_limit = 0;
  /// Concurrent prove() calls (GPU-worker lanes); 2 overlaps one partition's
  /// upload with another's compute.
  unsigned lanes = cuda_lanes;
};

/// The CUDA backend on `device`; throws backend_error when unavailable.
std::unique_ptr<backend> make_cuda_backend(int device, const cuda_settings& settings = {});

/// The fixed-base engine of development setups on `device`
/// (gpu/cuda/fixed_base.hpp); throws backend_error when unavailable.
std::unique_ptr<zk::dev::fixed_base_engine> make_cuda_fixed_base_engine(int device);

}  // namespace proofline::gpu
