// The fused NTT passes (gpu/cuda/ntt/), the kind the prover runs: tiles in
// shared memory, the last DIF pass storing bit-reversed or coset-scaled on
// its way out (fused_pass_fn), launched pass by pass for a kernel policy
// (fused_passes). The design: docs/GPU.md, "NTT passes".
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "gpu/cuda/ntt/butterflies.hpp"
#include "gpu/cuda/ntt/tuning.hpp"
#include "gpu/cuda/ntt_lazy.hpp"
#include "zk/common/hd.hpp"

namespace proofline::gpu::cuda::ntt {

/// One fused pass of k stages through shared memory. The tile is 2^k rows
/// (the butterfly coordinate) by 2^mc columns. Rows are 2^lo_bit apart; the
/// columns are either 2^mc adjacent elements below lo_bit (loads of 2^mc
/// adjacent elements), or, when lo_bit = 0 (rows adjacent), the top mc index
/// bits (`top`), which the bit reversal turns into the low bits, so the
/// reversed stores are 2^mc adjacent elements too. Reads `in`, writes `out`
/// (may be the same array: a block reads its whole tile before it stores),
/// at rev(i) when `reverse`, times *scale when set, times g^rev(i) / n from
/// the coset tables when coset_lo is set. A: the butterfly arithmetic; its
/// out() gives each element's reduced value before the store. Unit: the
/// step at the transform's bit 0 skips its products by w^0.
template <class F, bool Dif, unsigned K, class A, bool Unit>
struct fused_pass_fn {
  static constexpr bool unit_steps = Unit;
  const F* in;
  F* out;
  const F* tw;
  unsigned log_n, s0, k, mc;
  bool top, reverse;
  const F* scale;
  const F* coset_lo;
  const F* coset_hi;
  unsigned coset_k;

  PL_HD unsigned lo_bit() const { return Dif ? log_n - s0 - k : s0; }

  PL_HD std::size_t global(std::size_t block, std::size_t e) const {
    const std::size_t row = e >> mc, col = e & ((std::size_t(1) << mc) - 1);
    if (top) return (col << (log_n - mc)) | (block << k) | row;
    const unsigned lo = lo_bit();
    const unsigned rest_bits = lo - mc;  // low bits above the columns
    const std::size_t low_rest = block & ((std::size_t(1) << rest_bits) - 1);
    const std::size_t high = block >> rest_bits;
    return (high << (lo + k)) | (row << lo) | (low_rest << mc) | col;
  }

  /// The q-th tile element a thread moves: columns fastest, or rows fastest
  /// (top tiles read from memory: rows are the adjacent elements there).
  PL_HD unsigned element(unsigned q, bool rows_fast) const {
    if (!rows_fast) return q;
    const unsigned row = q & ((1u << k) - 1), col = q >> k;
    return (row << mc) | col;
  }

  template <class Ctx>
  PL_HD void operator()(std::size_t block, const Ctx& ctx) const {
    F* tile = ctx.template shared<F>();
    const unsigned elems = 1u << (k + mc);
    ctx.threads(elems, [&](unsigned q) {
      const unsigned e = element(q, top);
      tile[e] = in[global(block, e)];
    });
    ctx.sync();
    run_tile_stages<F, Dif, K, A>(*this, block, ctx, tile, lo_bit());
    ctx.threads(elems, [&](unsigned q) {
      const unsigned e = element(q, top && !reverse);
      const std::size_t i = global(block, e);
      F v = A::out(tile[e]);
      if (coset_lo) {
        const uint32_t r = bit_reverse(uint32_t(i), log_n);
        v = v * coset_lo[r & ((uint32_t(1) << coset_k) - 1)] * coset_hi[r >> coset_k];
      }
      if (scale) v = v * *scale;
      out[reverse ? bit_reverse(uint32_t(i), log_n) : i] = v;
    });
  }
};

/// How the last DIF pass of fused_passes() stores its tile.
template <class F>
struct fused_epilogue {
  F* out = nullptr;         ///< null: in place
  bool reverse = false;     ///< at bit-reversed positions (out must differ from x)
  const F* scale = nullptr;
  const F* coset_lo = nullptr;
  const F* coset_hi = nullptr;
  unsigned coset_k = 0;
};

template <bool Dif, unsigned K, class A, bool Unit, class Exec, class F>
void fused_passes_k(const Exec& ex, F* x, const F* tw, unsigned log_n, const kernel& kc,
                    const fused_epilogue<F>& ep) {
  const unsigned tile_log = tile_log_for(kc, log_n);
  const unsigned max_k = tile_log - kc.cols;
  const unsigned count = (log_n + max_k - 1) / max_k;
  unsigned s0 = 0;
  for (unsigned p = 0; p < count; ++p) {
    const unsigned k = (log_n - s0) / (count - p);  // the remaining stages, spread evenly
    const unsigned lo = Dif ? log_n - s0 - k : s0;
    const bool top = lo == 0;
    const unsigned room = tile_log - k;  // column bits the tile has space for
    const unsigned avail = top ? log_n - k : lo;
    const unsigned mc = avail < room ? avail : room;
    const unsigned elems = 1u << (k + mc);
    const unsigned want = elems >> (K < k ? K : k);
    const unsigned cap = kc.threads ? kc.threads : (K == 3 ? 128 : 256);
    const unsigned threads = want < cap ? (want ? want : 1) : cap;
    const bool last = p + 1 == count;
    fused_pass_fn<F, Dif, K, A, Unit> f{x, x, tw, log_n, s0, k, mc, top, false, nullptr, nullptr, nullptr, 0};
    if (Dif && last) {
      if (ep.out) f.out = ep.out;
      f.reverse = ep.reverse;
      f.scale = ep.scale;
      f.coset_lo = ep.coset_lo;
      f.coset_hi = ep.coset_hi;
      f.coset_k = ep.coset_k;
    }
    ex.for_each_block(std::size_t(1) << (log_n - k - mc), threads, sizeof(F) * elems, f);
    s0 += k;
  }
}

/// The stages of one transform in fused passes (kernel kc); the last DIF
/// pass stores as ep says. log_n >= 1. kc.lazy picks lazy_arith where the
/// field allows it (lazy_supported), exact_arith otherwise; kc.unit the
/// passes that skip the products by w^0. Both only at radix 2.
template <bool Dif, class Exec, class F>
void fused_passes(const Exec& ex, F* x, const F* tw, unsigned log_n, const kernel& kc,
                  const fused_epilogue<F>& ep = {}) {
  if (kc.lazy || kc.unit) {
    if (kc.radix != 2)
      throw std::invalid_argument("NTT kernel " + describe(kc) + ": l1 and u1 take radix 2");
    if constexpr (lazy_supported<F>) {
      if (kc.lazy) {
        if (kc.unit)
          fused_passes_k<Dif, 2, lazy_arith<F>, true>(ex, x, tw, log_n, kc, ep);
        else
          fused_passes_k<Dif, 2, lazy_arith<F>, false>(ex, x, tw, log_n, kc, ep);
        return;
      }
    }
    if (kc.unit) {
      fused_passes_k<Dif, 2, exact_arith<F>, true>(ex, x, tw, log_n, kc, ep);
      return;
    }
  }
  switch (kc.radix) {
    case 1: fused_passes_k<Dif, 1, exact_arith<F>, false>(ex, x, tw, log_n, kc, ep); break;
    case 2: fused_passes_k<Dif, 2, exact_arith<F>, false>(ex, x, tw, log_n, kc, ep); break;
    default: fused_passes_k<Dif, 3, exact_arith<F>, false>(ex, x, tw, log_n, kc, ep); break;
  }
}

}  // namespace proofline::gpu::cuda::ntt
