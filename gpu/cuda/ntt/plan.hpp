// The tables one NTT domain needs (gpu/cuda/ntt/): twiddles and odd-coset
// factors as two small power tables each, built on the host
// (make_host_tables) and expanded on the device (powers_fn), and where the
// executor finds them (tables).
#pragma once

#include <cstddef>
#include <vector>

namespace proofline::gpu::cuda::ntt {

/// Host-built tables for one domain of 2^log_n points.
template <class F>
struct host_tables {
  unsigned log_n = 0;
  unsigned tw_k = 0;          ///< lo-table bits for twiddles (e < n/2)
  std::vector<F> fwd_lo, fwd_hi, inv_lo, inv_hi;
  unsigned coset_k = 0;       ///< lo-table bits for g^e / n (e < n)
  std::vector<F> coset_lo, coset_hi;
};

/// lo[i] = x^i * first (i < 2^k), hi[j] = x^(j 2^k) (j < 2^(bits-k)).
template <class F>
void split_powers(const F& x, const F& first, unsigned bits, unsigned k, std::vector<F>& lo,
                  std::vector<F>& hi) {
  lo.resize(std::size_t(1) << k);
  hi.resize(std::size_t(1) << (bits - k));
  F p = first;
  for (auto& v : lo) {
    v = p;
    p = p * x;
  }
  F step = x;
  for (unsigned i = 0; i < k; ++i) step = step.sqr();  // x^(2^k)
  F q = F::one();
  for (auto& v : hi) {
    v = q;
    q = q * step;
  }
}

/// Tables for 2^log_n points: w (forward), w^-1 (inverse), odd-coset
/// generator g and 1/n, as zk::groth16::roots<F> gives them.
template <class F>
host_tables<F> make_host_tables(unsigned log_n, const F& w, const F& w_inv, const F& g,
                                const F& n_inv) {
  host_tables<F> t;
  t.log_n = log_n;
  unsigned tw_bits = log_n ? log_n - 1 : 0;  // e < n/2
  t.tw_k = (tw_bits + 1) / 2;
  split_powers(w, F::one(), tw_bits, t.tw_k, t.fwd_lo, t.fwd_hi);
  split_powers(w_inv, F::one(), tw_bits, t.tw_k, t.inv_lo, t.inv_hi);
  t.coset_k = (log_n + 1) / 2;
  split_powers(g, n_inv, log_n, t.coset_k, t.coset_lo, t.coset_hi);
  return t;
}

/// A domain's tables where the executor reads them.
template <class F>
struct tables {
  unsigned log_n = 0;
  const F* fwd = nullptr;  ///< w^e, e < n/2
  const F* inv = nullptr;  ///< w^-e, e < n/2
  const F* coset_lo = nullptr;
  const F* coset_hi = nullptr;
  unsigned coset_k = 0;
  const F* n_inv = nullptr;  ///< one element: 1/n
};

}  // namespace proofline::gpu::cuda::ntt
