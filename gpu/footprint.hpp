// What each prover backend allocates on the host, as memory/estimate.hpp
// takes it (memory::backend_footprint): memory/ knows no backend, so the
// figures live here, beside the backends they describe.
//
// CPU backend (gpu/cpu/cpu_backend.cpp): copies w, a, b, c into its own
// buffers, transforms a, b, c in place and computes h beside them, so its
// peak is 4 domain vectors and 1 witness copy; nothing fixed.
//
// CUDA backend (gpu/cuda/cuda_backend.hpp): keeps a partition on the device;
// its host memory is per backend, not per partition: each lane has its pinned
// staging (backend_options::staging_bytes) and a pinned window of MSM
// results, counted once as `fixed_bytes`.
#pragma once

#include <cstdint>

#include "memory/estimate.hpp"

namespace proofline::gpu {

/// The CPU backend: copies of a, b, c plus h; one copy of w; nothing fixed.
inline constexpr memory::backend_footprint cpu_backend_footprint{4, 1, 0};

/// Pinned staging of one CUDA lane (the default of backend_options::staging_bytes).
inline constexpr uint64_t cuda_lane_staging_bytes = uint64_t(64) << 20;
/// Pinned MSM window sums of one CUDA lane, an upper bound: 5 MSMs × at most
/// 255 windows (window width >= 1 bit) × at most 384 bytes a point (G2 over
/// BLS12-381's 48-byte Fq2, 4 coordinates) = 490 KiB, allowed as 1 MiB.
inline constexpr uint64_t cuda_lane_results_bytes = uint64_t(1) << 20;
/// Concurrent prove() calls of the CUDA backend (the default of backend_options::lanes).
inline constexpr uint32_t cuda_lanes = 2;

/// The CUDA backend with `lanes` concurrent prove() calls: partitions live on
/// the device; the host keeps only each lane's pinned staging and result
/// windows.
constexpr memory::backend_footprint cuda_footprint(uint32_t lanes) {
  return {0, 0, lanes * (cuda_lane_staging_bytes + cuda_lane_results_bytes)};
}

/// The CUDA backend with its default lanes.
inline constexpr memory::backend_footprint cuda_backend_footprint = cuda_footprint(cuda_lanes);

}  // namespace proofline::gpu
