// The NTT's element-wise kernels (gpu/cuda/ntt/): power tables expanded,
// the bit-reversal permutation, the odd-coset scaling and h = a b - c.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gpu/cuda/ntt/butterflies.hpp"
#include "zk/common/hd.hpp"

namespace proofline::gpu::cuda::ntt {

/// tw[e] = lo[e mod 2^k] * hi[e >> k] for e < count.
template <class F>
struct powers_fn {
  const F* lo;
  const F* hi;
  unsigned k;
  F* out;
  PL_HD void operator()(std::size_t e) const {
    out[e] = lo[e & ((std::size_t(1) << k) - 1)] * hi[e >> k];
  }
};

/// out[rev(i)] = in[i] * scale (scale may be null: a plain permutation).
template <class F>
struct bitrev_fn {
  const F* in;
  F* out;
  unsigned log_n;
  const F* scale;
  PL_HD void operator()(std::size_t i) const {
    F v = in[i];
    if (scale) v = v * *scale;
    out[bit_reverse(uint32_t(i), log_n)] = v;
  }
};

/// x[j] *= g^rev(j) / n (lo already holds the 1/n factor).
template <class F>
struct coset_fn {
  F* x;
  const F* lo;
  const F* hi;
  unsigned k, log_n;
  PL_HD void operator()(std::size_t j) const {
    uint32_t e = bit_reverse(uint32_t(j), log_n);
    x[j] = x[j] * lo[e & ((uint32_t(1) << k) - 1)] * hi[e >> k];
  }
};

/// h[i] = (a[i] b[i] - c[i]) in standard form; h may alias a.
template <class F>
struct h_fn {
  const F* a;
  const F* b;
  const F* c;
  typename F::repr* h;
  PL_HD void operator()(std::size_t i) const { h[i] = (a[i] * b[i] - c[i]).to_standard(); }
};

}  // namespace proofline::gpu::cuda::ntt
