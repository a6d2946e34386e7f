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

/// Throws backend_error unless e is cudaSuccess.
inline void check(cudaError_t e, const char* expr, const char* file, int line) {
  if (e == cudaSuccess) return;
  cudaGetLastError();  // clears a non-sticky error so the next check reports its own
  const char* base = std::strrchr(file, '/');
  throw backend_error(std::string(expr) + " at " + (base ? base + 1 : file) + ":" +
                      std::to_string(line) + ": " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
}

}  // namespace proofline::gpu::cuda

#define CUDA_OK(expr) ::proofline::gpu::cuda::check((expr), #expr, __FILE__, __LINE__)
