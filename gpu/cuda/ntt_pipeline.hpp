// Number-theoretic transforms as data-parallel passes, written once over an
// executor (gpu/cuda/exec.hpp) like the MSM pipeline, with the roots snarkjs
// uses (zk/groth16/domain.hpp; the CPU backend uses the same roots).
//
// Design: radix-2 butterflies; a thread loads the 2^K (K <= 3) elements its
// stages touch (stride 2^lo_bit), runs the K stages in registers and stores
// them back. Either every group of K stages is a pass over global memory
// (passes: 8 passes for 2^24), or a block keeps a tile of up to 1024
// elements in shared memory for up to 8 stages (tiled_passes: 3 passes for
// 2^24; the default). Twiddles come from one table w^e, e < n/2, which serves
// every stage (stage s of a 2h-point butterfly uses w^(e * n / 2h)).
// Measured on an H200 (BN254): 2^24 in 7.0 ms tiled, 8.8 ms in register
// passes; the 2^23 * 24 products alone take 4.2 ms at the device's 48 Gmul/s.
//
//   dif   natural in, bit-reversed out (Gentleman-Sande):
//         (x, y) -> (x + y, (x - y) w^e)
//   dit   bit-reversed in, natural out (Cooley-Tukey):
//         (x, y) -> (x + w^e y, x - w^e y)
//   to_odd_coset  dif with w^-1 (natural -> coefficients in bit-reversed
//         order), coefficient i (at position rev(i)) times g^i / n, dit with w
//         (-> values on the odd coset, natural order): no permutation pass.
//   ntt   dif, then one bit-reversal pass (out of place) for natural order.
//   h     h_i = a_i b_i - c_i, out of Montgomery form (MSM scalars).
//
// Powers g^e and w^e for large e are assembled from two small tables:
// x^e = lo[e mod 2^k] * hi[e >> k], built on the host (about 2 * 2^12
// multiplications) and expanded on the device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpu/cuda/exec.hpp"
#include "zk/common/hd.hpp"

namespace proofline::gpu::cuda::ntt {

/// Stages per pass (2^K elements per thread, in registers).
constexpr unsigned pass_stages = 3;

/// The low `bits` bits of x, reversed.
PL_HD uint32_t bit_reverse(uint32_t x, unsigned bits) {
  if (bits == 0) return 0;
#if defined(__CUDA_ARCH__)
  return __brev(x) >> (32 - bits);
#else
  uint32_t r = 0;
  for (unsigned i = 0; i < bits; ++i) r |= ((x >> i) & 1u) << (bits - 1 - i);
  return r;
#endif
}

/// Thread t's first element index: t with K zero bits inserted at lo_bit.
PL_HD std::size_t group_base(std::size_t t, unsigned lo_bit, unsigned k) {
  std::size_t low = t & ((std::size_t(1) << lo_bit) - 1);
  return ((t >> lo_bit) << (lo_bit + k)) | low;
}

/// K stages of a transform of 2^log_n elements, stages s0 .. s0+K-1, on the
/// 2^K elements v[m] = x[base + m 2^lo_bit] held in registers.
/// DIF stage s pairs indices 2^(log_n-1-s) apart; DIT stage s pairs 2^s apart.
/// With pair bit lb inside the group (half = 2^(lo_bit+lb)), the twiddle of
/// the butterfly at local index u is w^e, e = ((base mod half) + (u mod 2^lb)
/// 2^lo_bit) * 2^shift: 2^lb distinct twiddles per stage, 1 + 2 + 4 = 7
/// loads for K = 3 instead of 12.
template <class F, unsigned K, bool Dif>
PL_HD void butterflies(F* v, const F* tw, std::size_t base, unsigned lo_bit, unsigned s0, unsigned log_n) {
  PL_UNROLL for (unsigned ls = 0; ls < K; ++ls) {
    const unsigned s = s0 + ls;
    const unsigned lb = Dif ? K - 1 - ls : ls;  // pair bit within the group
    const std::size_t half = std::size_t(1) << (lo_bit + lb);
    const unsigned shift = Dif ? s : log_n - 1 - s;
    F w[1u << (K - 1)];
    PL_UNROLL for (unsigned r = 0; r < (1u << lb); ++r)
      w[r] = tw[((base & (half - 1)) + (std::size_t(r) << lo_bit)) << shift];  // tw[0] = 1
    PL_UNROLL for (unsigned m = 0; m < (1u << K); ++m) {
      if (m & (1u << lb)) continue;
      const unsigned u = m, h = m | (1u << lb);
      const F& wu = w[u & ((1u << lb) - 1)];
      if (Dif) {
        F a = v[u], b = v[h];
        v[u] = a + b;
        v[h] = (a - b) * wu;
      } else {
        F b = v[h] * wu;
        F a = v[u];
        v[u] = a + b;
        v[h] = a - b;
      }
    }
  }
}

/// One pass of K stages through global memory: thread t's group starts at
/// group_base(t) and its elements are 2^lo_bit apart.
template <class F, unsigned K, bool Dif>
struct pass_fn {
  F* x;
  const F* tw;  ///< w^e, e < n/2
  unsigned log_n, s0;

  PL_HD void operator()(std::size_t t) const {
    const unsigned lo_bit = Dif ? log_n - s0 - K : s0;
    const std::size_t base = group_base(t, lo_bit, K);
    F v[1u << K];
    PL_UNROLL for (unsigned m = 0; m < (1u << K); ++m) v[m] = x[base + (std::size_t(m) << lo_bit)];
    butterflies<F, K, Dif>(v, tw, base, lo_bit, s0, log_n);
    PL_UNROLL for (unsigned m = 0; m < (1u << K); ++m) x[base + (std::size_t(m) << lo_bit)] = v[m];
  }
};

/// Stages a tiled pass does at most: a tile is 2^k rows (the butterfly
/// coordinate, 2^lo_bit apart) by 2^mc adjacent columns, at most 1024
/// elements (32 KiB of shared memory for 32-byte elements).
constexpr unsigned tile_stages = 8;
constexpr unsigned tile_log_elems = 10;
constexpr unsigned tile_threads = 128;

/// One pass of k <= tile_stages stages through shared memory: a block loads
/// its tile (rows of 2^mc adjacent elements, so loads are coalesced), runs
/// the stages 3 at a time in registers (a barrier between), stores the tile.
/// Three passes do a 2^24 transform, instead of eight K = 3 passes.
template <class F, bool Dif>
struct tile_pass_fn {
  F* x;
  const F* tw;
  unsigned log_n, s0, k, mc;

  PL_HD std::size_t global(std::size_t block, std::size_t e) const {
    const unsigned lo_bit = Dif ? log_n - s0 - k : s0;
    const std::size_t rest_bits = lo_bit - mc;  // low bits above the columns
    const std::size_t low_rest = block & ((std::size_t(1) << rest_bits) - 1);
    const std::size_t high = block >> rest_bits;
    const std::size_t row = e >> mc, col = e & ((std::size_t(1) << mc) - 1);
    return (high << (lo_bit + k)) | (row << lo_bit) | (low_rest << mc) | col;
  }

  template <unsigned K, class Ctx>
  PL_HD void step(std::size_t block, const Ctx& ctx, F* tile, unsigned ls0) const {
    const unsigned lo_bit = Dif ? log_n - s0 - k : s0;
    const unsigned sb = Dif ? k - ls0 - K : ls0;  // lowest row bit of the groups
    const unsigned cols = 1u << mc;
    ctx.threads((1u << (k + mc)) >> K, [&](unsigned q) {
      const unsigned col = q & (cols - 1);
      const std::size_t rq = q >> mc;
      const std::size_t r0 = ((rq >> sb) << (sb + K)) | (rq & ((std::size_t(1) << sb) - 1));
      F v[1u << K];
      PL_UNROLL for (unsigned m = 0; m < (1u << K); ++m) v[m] = tile[((r0 + (std::size_t(m) << sb)) << mc) + col];
      butterflies<F, K, Dif>(v, tw, global(block, (r0 << mc) + col), lo_bit + sb, s0 + ls0, log_n);
      PL_UNROLL for (unsigned m = 0; m < (1u << K); ++m) tile[((r0 + (std::size_t(m) << sb)) << mc) + col] = v[m];
    });
    ctx.sync();
  }

  template <class Ctx>
  PL_HD void operator()(std::size_t block, const Ctx& ctx) const {
    F* tile = ctx.template shared<F>();
    const unsigned elems = 1u << (k + mc);
    ctx.threads(elems, [&](unsigned e) { tile[e] = x[global(block, e)]; });
    ctx.sync();
    unsigned ls = 0;
    while (ls < k) {
      const unsigned ks = k - ls < 3 ? k - ls : 3;
      if (ks == 3)
        step<3>(block, ctx, tile, ls);
      else if (ks == 2)
        step<2>(block, ctx, tile, ls);
      else
        step<1>(block, ctx, tile, ls);
      ls += ks;
    }
    ctx.threads(elems, [&](unsigned e) { x[global(block, e)] = tile[e]; });
  }
};

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

/// The K-stage passes of one transform, in order.
template <bool Dif, class Exec, class F>
void passes(const Exec& ex, F* x, const F* tw, unsigned log_n) {
  unsigned s0 = 0;
  const std::size_t n = std::size_t(1) << log_n;
  while (s0 < log_n) {
    unsigned k = log_n - s0 < pass_stages ? log_n - s0 : pass_stages;
    switch (k) {
      case 1: ex.for_each(n >> 1, pass_fn<F, 1, Dif>{x, tw, log_n, s0}); break;
      case 2: ex.for_each(n >> 2, pass_fn<F, 2, Dif>{x, tw, log_n, s0}); break;
      default: ex.for_each(n >> 3, pass_fn<F, 3, Dif>{x, tw, log_n, s0}); break;
    }
    s0 += k;
  }
}

/// The same stages in ceil(log_n / tile_stages) tiled passes of about equal
/// size (shared memory; 3 passes for 2^24).
template <bool Dif, class Exec, class F>
void tiled_passes(const Exec& ex, F* x, const F* tw, unsigned log_n) {
  if (log_n == 0) return;
  const unsigned count = (log_n + tile_stages - 1) / tile_stages;
  unsigned s0 = 0;
  for (unsigned p = 0; p < count; ++p) {
    const unsigned k = (log_n - s0) / (count - p);  // the remaining stages, spread evenly
    const unsigned lo_bit = Dif ? log_n - s0 - k : s0;
    const unsigned mc = lo_bit < tile_log_elems - k ? lo_bit : tile_log_elems - k;
    const unsigned elems = 1u << (k + mc);
    const unsigned threads = elems / 8 < tile_threads ? (elems / 8 ? elems / 8 : 1) : tile_threads;
    ex.for_each_block(std::size_t(1) << (log_n - k - mc), threads, sizeof(F) * elems,
                      tile_pass_fn<F, Dif>{x, tw, log_n, s0, k, mc});
    s0 += k;
  }
}

template <bool Dif, class Exec, class F>
void run_passes(const Exec& ex, F* x, const F* tw, unsigned log_n, bool tiled) {
  if (tiled)
    tiled_passes<Dif>(ex, x, tw, log_n);
  else
    passes<Dif>(ex, x, tw, log_n);
}

/// Whether transforms use the shared-memory passes by default.
constexpr bool tiled_default = true;

/// Natural-order transform of x into out (distinct arrays; x is clobbered).
template <class Exec, class F>
void transform(const Exec& ex, const tables<F>& t, F* x, F* out, bool inverse, bool tiled = tiled_default) {
  run_passes<true>(ex, x, inverse ? t.inv : t.fwd, t.log_n, tiled);
  ex.for_each(std::size_t(1) << t.log_n, bitrev_fn<F>{x, out, t.log_n, inverse ? t.n_inv : nullptr});
}

/// Values on the n-domain -> values on its odd coset, in place.
template <class Exec, class F>
void to_odd_coset(const Exec& ex, const tables<F>& t, F* x, bool tiled = tiled_default) {
  const std::size_t n = std::size_t(1) << t.log_n;
  run_passes<true>(ex, x, t.inv, t.log_n, tiled);
  ex.for_each(n, coset_fn<F>{x, t.coset_lo, t.coset_hi, t.coset_k, t.log_n});
  run_passes<false>(ex, x, t.fwd, t.log_n, tiled);
}

/// h = a*b - c out of Montgomery form, into h (may alias a).
template <class Exec, class F>
void compute_h(const Exec& ex, std::size_t n, const F* a, const F* b, const F* c,
               typename F::repr* h) {
  ex.for_each(n, h_fn<F>{a, b, c, h});
}

}  // namespace proofline::gpu::cuda::ntt
