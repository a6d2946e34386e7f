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
// Backends: each one's host allocations come in as a backend_footprint
// (gpu/footprint.hpp: the CPU backend's copies, the CUDA backend's pinned
// staging); this header knows no backend.
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
