// CUDA_OK(expr): every CUDA runtime call and every launch is checked; a
// failure throws gpu::backend_error naming the expression, file, line and
// CUDA's own words ("cudaMalloc(&p, bytes) at backend.cu:212:
// cudaErrorMemoryAllocation: out of memory"). The GPU worker turns it into an
// error for the job; nothing continues on a failed call.
#pragma once

#include <cuda_runtime_api.h>

#include <cstring>
#include <string>

#include "gpu/backend.hpp"

namespace proofline::gpu::cuda {

/// A failed call whose error poisons the CUDA context: every later call of
/// the process on it fails the same way, and CUDA's documentation says the
/// process must be restarted to use the device again. The backend turns it
/// into gpu::device_lost.
class sticky_error : public backend_error {
 public:
  using backend_error::backend_error;
};

/// Whether `e` is one of the errors that poison the context.
inline bool is_sticky(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorLaunchTimeout:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorECCUncorrectable:
      return true;
    default:
      return false;
  }
}

/// Throws backend_error (sticky_error for a poisoning error) unless e is
/// cudaSuccess.
inline void check(cudaError_t e, const char* expr, const char* file, int line) {
  if (e == cudaSuccess) return;
  cudaGetLastError();  // clears a non-sticky error so the next check reports its own
  const char* base = std::strrchr(file, '/');
  std::string what = std::string(expr) + " at " + (base ? base + 1 : file) + ":" +
                     std::to_string(line) + ": " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e);
  if (is_sticky(e)) throw sticky_error(what);
  throw backend_error(what);
}

}  // namespace proofline::gpu::cuda

#define CUDA_OK(expr) ::proofline::gpu::cuda::check((expr), #expr, __FILE__, __LINE__)
