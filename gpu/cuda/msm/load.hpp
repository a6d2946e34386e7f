// Point loads shared by the MSM kernels (gpu/cuda/msm/).
#pragma once

#include "zk/common/hd.hpp"

namespace proofline::gpu::cuda::msm {

/// Loads a point with 16-byte loads on the device (read-only path); a plain
/// copy on the host. Every point type here is a multiple of 16 bytes and
/// arrays come from cudaMalloc (256-byte aligned).
template <class T>
PL_HD T load(const T* p) {
#if defined(__CUDA_ARCH__)
  static_assert(sizeof(T) % 16 == 0, "points load as 16-byte vectors");
  T r;
  const uint4* s = reinterpret_cast<const uint4*>(p);
  uint4* d = reinterpret_cast<uint4*>(&r);
  PL_UNROLL for (unsigned i = 0; i < sizeof(T) / 16; ++i) d[i] = __ldg(s + i);
  return r;
#else
  return *p;
#endif
}

}  // namespace proofline::gpu::cuda::msm
