// How many bytes of the budget one partition takes, from the numbers a .zkey
// header gives (zk::groth16::key_info), before anything is allocated.
//
//   witness   = n_vars × n8r                     the witness, standard form
//   inputs    = 3 × domain_size × n8r            a, b, c (synthesizer output)
//   working   = domain_vectors × domain_size × n8r
//             + witness_copies × n_vars × n8r    the backend's own host copies
//   total     = witness + inputs + working
//
// The CPU backend copies w, a, b, c into its own buffers, transforms a, b, c
// in place and computes h beside them, so its peak is 4 domain vectors and 1
// witness copy (gpu/cpu/cpu_backend.cpp).
//
// The reservation is released in two steps: `bulk` = inputs when the backend
// reports that it no longer reads them (prove_hooks::inputs_consumed; the CUDA
// backend's staging slot is reusable from then on); the rest (witness and
// working copies) after the finalizer, which still reads the public signals
// from the witness. The a, b, c buffers themselves are freed when the last
// handle to the partition drops, at the end of finalize.
//
// Example: BN254 (n8r = 32), 2^20 domain, 10^6 variables, CPU backend:
// 30.5 MiB + 96 MiB + (128 MiB + 30.5 MiB) = 285 MiB.
#pragma once

#include <cstdint>

namespace proofline::memory {

/// Host memory a prover backend allocates per partition, in field elements.
struct backend_footprint {
  uint32_t domain_vectors = 0;  ///< domain-sized vectors
  uint32_t witness_copies = 0;  ///< copies of the witness
};

/// The CPU backend: copies of a, b, c plus h; one copy of w.
inline constexpr backend_footprint cpu_backend_footprint{4, 1};

struct partition_estimate {
  uint64_t witness = 0;  ///< n_vars × n8r
  uint64_t inputs = 0;   ///< 3 × domain × n8r
  uint64_t working = 0;  ///< the backend's copies

  uint64_t total() const { return witness + inputs + working; }
  /// Released once the backend has consumed the inputs.
  uint64_t bulk() const { return inputs; }
};

inline partition_estimate estimate_partition(uint64_t n_vars, uint64_t domain_size, uint32_t n8r,
                                             backend_footprint backend) {
  partition_estimate e;
  e.witness = n_vars * n8r;
  e.inputs = 3 * domain_size * n8r;
  e.working = uint64_t(backend.domain_vectors) * domain_size * n8r +
              uint64_t(backend.witness_copies) * n_vars * n8r;
  return e;
}

}  // namespace proofline::memory
