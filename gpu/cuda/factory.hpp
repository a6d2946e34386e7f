// Creating the CUDA backend, from plain C++: callable whether or not the
// build has CUDA, so `--backend auto` can decide at run time.
#pragma once

#include <memory>
#include <string>

#include "gpu/backend.hpp"

namespace proofline::gpu {

/// Number of CUDA devices visible to this process; 0 when the build has no
/// CUDA or no usable driver/device, with the reason in *why (if given), e.g.
/// "built without CUDA" or "cudaGetDeviceCount: CUDA driver version is
/// insufficient for CUDA runtime version".
int cuda_device_count(std::string* why = nullptr);

/// The CUDA backend on `device`; throws backend_error when unavailable.
std::unique_ptr<backend> make_cuda_backend(int device);

}  // namespace proofline::gpu
