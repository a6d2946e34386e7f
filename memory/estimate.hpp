// How many bytes of the budget one partition takes, from the numbers a .zkey
// header gives (zk::groth16::key_info), before anything is allocated.
//
//   witness   = n_vars × n8r                     the witness, standard form
//   inputs    = 3 × domain_size × n8r            a, b, c (synthesizer output)
//   working   = domain_vectors × domain_size × n8r
//             + witness_copies × n_vars × n8r    the backend's own host copies
//   total     = witness + inputs + working
//   pinnable  = page(witness) + 3 × page(domain_size × n8r)
//
// Where the bytes live: with a pinned pool (memory/pinned_pool.hpp) the
// memory manager puts the witness and a, b, c of a partition into one pool
// block of `pinnable` bytes (each buffer starts on a page), and reserves only
// `working` in the ledger: the pool was counted once, whole, when it was
// made. Without a pool, or for a partition larger than the pool, everything
// is pageable and the reservation is `total`.
//
// Backends: the CPU backend copies w, a, b, c into its own buffers, transforms
// a, b, c in place and computes h beside them, so its peak is 4 domain
// vectors and 1 witness copy (gpu/cpu/cpu_backend.cpp). The CUDA backend
// keeps a partition on the device; its host memory is per backend, not per
// partition: two lanes, each with 64 MiB of pinned staging and a pinned
// window of MSM results (under 1 MiB), counted once as
// `fixed_bytes` (gpu/cuda/cuda_backend.hpp, backend_options).
//
// Release in steps: `bulk` = inputs when the backend reports that it no
// longer reads them (prove_hooks::inputs_consumed); the rest (witness and
// working copies) after the finalizer, which still reads the public signals
// from the witness. The a, b, c buffers themselves are freed when the last
// handle to the partition drops, at the end of finalize, so for pageable
// partitions the early release trades exactness for overlap (the CPU
// backend's working copies, freed when prove() returns but released with the
// rest, cover most of it). A pooled partition has no bulk: its block goes
// back to the pool only when its buffers are gone.
//
// Example: BN254 (n8r = 32), 2^20 domain, 10^6 variables, CPU backend:
// 30.5 MiB + 96 MiB + (128 MiB + 30.5 MiB) = 285 MiB, of which 126.5 MiB
// (page-rounded) go into the pool when there is one.
#pragma once

#include <cstdint>

namespace proofline::memory {

/// Host memory a prover backend allocates, per partition (in field
/// elements) and once per backend object (bytes).
struct backend_footprint {
  uint32_t domain_vectors = 0;  ///< domain-sized vectors per partition
  uint32_t witness_copies = 0;  ///< copies of the witness per partition
  uint64_t fixed_bytes = 0;     ///< host bytes held for the backend's lifetime
};

/// The CPU backend: copies of a, b, c plus h; one copy of w; nothing fixed.
inline constexpr backend_footprint cpu_backend_footprint{4, 1, 0};

/// Pinned staging of one CUDA lane (backend_options::staging_bytes).
inline constexpr uint64_t cuda_lane_staging_bytes = uint64_t(64) << 20;
/// Pinned MSM window sums of one CUDA lane, an upper bound: 5 MSMs × at most
/// 255 windows (window width >= 1 bit) × at most 384 bytes a point (G2 over
/// BLS12-381's 48-byte Fq2, 4 coordinates) = 490 KiB, allowed as 1 MiB.
inline constexpr uint64_t cuda_lane_results_bytes = uint64_t(1) << 20;
/// Concurrent prove() calls of the CUDA backend (backend_options::lanes).
inline constexpr uint32_t cuda_lanes = 2;

/// The CUDA backend with `lanes` concurrent prove() calls: partitions live on
/// the device; the host keeps only each lane's pinned staging and result
/// windows.
constexpr backend_footprint cuda_footprint(uint32_t lanes) {
  return {0, 0, lanes * (cuda_lane_staging_bytes + cuda_lane_results_bytes)};
}

/// The CUDA backend with its default lanes.
inline constexpr backend_footprint cuda_backend_footprint = cuda_footprint(cuda_lanes);

/// Page size the pool aligns each buffer to (pinned_pool::block_alignment).
inline constexpr uint64_t pinnable_page = 4096;

inline constexpr uint64_t page_round(uint64_t bytes) {
  return (bytes + pinnable_page - 1) / pinnable_page * pinnable_page;
}

struct partition_estimate {
  uint64_t witness = 0;   ///< n_vars × n8r
  uint64_t inputs = 0;    ///< 3 × domain × n8r
  uint64_t working = 0;   ///< the backend's copies
  uint64_t pinnable = 0;  ///< witness and a, b, c as a pool block stores them

  uint64_t total() const { return witness + inputs + working; }
  /// Released once the backend has consumed the inputs (pageable partitions).
  uint64_t bulk() const { return inputs; }
};

inline partition_estimate estimate_partition(uint64_t n_vars, uint64_t domain_size, uint32_t n8r,
                                             backend_footprint backend) {
  partition_estimate e;
  e.witness = n_vars * n8r;
  e.inputs = 3 * domain_size * n8r;
  e.working = uint64_t(backend.domain_vectors) * domain_size * n8r +
              uint64_t(backend.witness_copies) * n_vars * n8r;
  e.pinnable = page_round(e.witness) + 3 * page_round(domain_size * n8r);
  return e;
}

/// The most the pinned pool of `proofline run` may take: a quarter of the
/// budget, in whole MiB (the run sizes it for the partitions it can have in
/// flight, up to this); 0 when the budget is under 64 MiB (no pool).
inline constexpr uint64_t default_pool_bytes(uint64_t budget) {
  return budget < (uint64_t(64) << 20) ? 0 : budget / 4 / (uint64_t(1) << 20) * (uint64_t(1) << 20);
}

}  // namespace proofline::memory
