// The NTT's entry points over an executor (gpu/cuda/exec.hpp): the
// natural-order transform, the odd-coset step of a proof and h. Each picks
// its passes from a kernel policy (tuning.hpp); the prover's are fused
// (fused.hpp).
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

#include "gpu/cuda/ntt/elementwise_kernels.hpp"
#include "gpu/cuda/ntt/fused.hpp"
#include "gpu/cuda/ntt/plan.hpp"
#include "gpu/cuda/ntt/tuning.hpp"

namespace proofline::gpu::cuda::ntt {

/// The error of a transform asked for a kind of pass the prover does not
/// carry (registers, tiled: bench/cuda/ntt_families.hpp runs them).
inline std::invalid_argument not_fused(const kernel& kc) {
  return std::invalid_argument("NTT kernel '" + describe(kc) +
                               "': only the tests and benchmarks run it (bench/cuda/ntt_families.hpp); "
                               "the prover runs fused passes");
}

/// Natural-order transform of x into out (distinct arrays; x is clobbered).
/// Fused passes only; a 2^0 transform is the permutation alone.
template <class Exec, class F>
void transform(const Exec& ex, const tables<F>& t, F* x, F* out, bool inverse,
               const kernel& kc = default_kernel()) {
  const F* scale = inverse ? t.n_inv : nullptr;
  if (kc.kind == kernel::fused && t.log_n > 0) {
    fused_epilogue<F> ep;
    ep.out = out;
    ep.reverse = true;
    ep.scale = scale;
    fused_passes<true>(ex, x, inverse ? t.inv : t.fwd, t.log_n, kc, ep);
    return;
  }
  if (kc.kind != kernel::fused) throw not_fused(kc);
  ex.for_each(std::size_t(1) << t.log_n, bitrev_fn<F>{x, out, t.log_n, scale});
}

/// Values on the n-domain -> values on its odd coset, in place.
template <class Exec, class F>
void to_odd_coset(const Exec& ex, const tables<F>& t, F* x, const kernel& kc = default_kernel()) {
  const std::size_t n = std::size_t(1) << t.log_n;
  if (kc.kind == kernel::fused && t.log_n > 0) {
    fused_epilogue<F> ep;
    ep.coset_lo = t.coset_lo;
    ep.coset_hi = t.coset_hi;
    ep.coset_k = t.coset_k;
    fused_passes<true>(ex, x, t.inv, t.log_n, kc, ep);
    fused_passes<false>(ex, x, t.fwd, t.log_n, kc);
    return;
  }
  if (kc.kind != kernel::fused) throw not_fused(kc);
  ex.for_each(n, coset_fn<F>{x, t.coset_lo, t.coset_hi, t.coset_k, t.log_n});
}

/// h = a*b - c out of Montgomery form, into h (may alias a).
template <class Exec, class F>
void compute_h(const Exec& ex, std::size_t n, const F* a, const F* b, const F* c,
               typename F::repr* h) {
  ex.for_each(n, h_fn<F>{a, b, c, h});
}

}  // namespace proofline::gpu::cuda::ntt
