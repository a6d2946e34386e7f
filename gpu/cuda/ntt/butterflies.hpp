// The NTT's butterflies (gpu/cuda/ntt/): K radix-2 stages on elements held
// in registers (butterflies), and the steps of a tile in shared memory
// (tile_step, run_tile_stages) that every shared-memory pass runs. The
// design: docs/GPU.md, "NTT passes".
#pragma once

#include <cstddef>
#include <cstdint>

#include "gpu/cuda/ntt_lazy.hpp"
#include "zk/common/hd.hpp"

namespace proofline::gpu::cuda::ntt {

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
/// A is the butterfly arithmetic (exact_arith or lazy_arith, ntt_lazy.hpp).
/// Unit: the caller knows lo_bit = 0, so base's low K bits are 0 and the
/// twiddle of r = 0 is w^0 = 1 in every stage: those butterflies (all of the
/// stage with pair bit 0, half of pair bit 1, a quarter of pair bit 2) skip
/// the load and the product (A::dif1 / A::dit1).
template <class F, unsigned K, bool Dif, class A = exact_arith<F>, bool Unit = false>
PL_HD void butterflies(F* v, const F* tw, std::size_t base, unsigned lo_bit, unsigned s0, unsigned log_n) {
  PL_UNROLL for (unsigned ls = 0; ls < K; ++ls) {
    const unsigned s = s0 + ls;
    const unsigned lb = Dif ? K - 1 - ls : ls;  // pair bit within the group
    const std::size_t half = std::size_t(1) << (lo_bit + lb);
    const unsigned shift = Dif ? s : log_n - 1 - s;
    F w[1u << (K - 1)];
    PL_UNROLL for (unsigned r = Unit ? 1 : 0; r < (1u << lb); ++r)
      w[r] = tw[((base & (half - 1)) + (std::size_t(r) << lo_bit)) << shift];  // tw[0] = 1
    PL_UNROLL for (unsigned m = 0; m < (1u << K); ++m) {
      if (m & (1u << lb)) continue;
      const unsigned u = m, h = m | (1u << lb);
      const unsigned r = u & ((1u << lb) - 1);
      if (Unit && r == 0) {
        if (Dif)
          A::dif1(v[u], v[h]);
        else
          A::dit1(v[u], v[h]);
      } else if (Dif) {
        A::dif(v[u], v[h], w[r]);
      } else {
        A::dit(v[u], v[h], w[r]);
      }
    }
  }
}

/// S stages of a tile held in shared memory, done in registers: the tile is
/// 2^p.k rows (the butterfly coordinate) by 2^p.mc columns, and each thread
/// takes the 2^S rows of one butterfly group in one column. `lo` is the
/// transform's bit of row 0, ls0 the tile's first stage not yet done.
/// `p` is the pass (tw, log_n, s0, k, mc, global(block, e), and, when
/// Pass::unit_steps (a compile-time flag, so passes without it compile as
/// before): skip the products by w^0 when
/// the step's lowest bit is the transform's bit 0). A: butterflies()'s.
template <class F, bool Dif, unsigned S, class A, class Pass, class Ctx>
PL_HD void tile_step(const Pass& p, std::size_t block, const Ctx& ctx, F* tile, unsigned lo,
                     unsigned ls0) {
  const unsigned sb = Dif ? p.k - ls0 - S : ls0;  // lowest row bit of the groups
  const unsigned mc = p.mc, cols = 1u << mc;
  ctx.threads((1u << (p.k + mc)) >> S, [&](unsigned q) {
    const unsigned col = q & (cols - 1);
    const std::size_t rq = q >> mc;
    const std::size_t r0 = ((rq >> sb) << (sb + S)) | (rq & ((std::size_t(1) << sb) - 1));
    F v[1u << S];
    PL_UNROLL for (unsigned m = 0; m < (1u << S); ++m) v[m] = tile[((r0 + (std::size_t(m) << sb)) << mc) + col];
    const std::size_t base = p.global(block, (r0 << mc) + col);
    if constexpr (Pass::unit_steps) {
      if (lo + sb == 0)  // the same in every thread
        butterflies<F, S, Dif, A, true>(v, p.tw, base, 0, p.s0 + ls0, p.log_n);
      else
        butterflies<F, S, Dif, A>(v, p.tw, base, lo + sb, p.s0 + ls0, p.log_n);
    } else {
      butterflies<F, S, Dif, A>(v, p.tw, base, lo + sb, p.s0 + ls0, p.log_n);
    }
    PL_UNROLL for (unsigned m = 0; m < (1u << S); ++m) tile[((r0 + (std::size_t(m) << sb)) << mc) + col] = v[m];
  });
  ctx.sync();
}

/// All p.k stages of a tile in shared memory, at most Smax (1..3) at a time
/// in registers, a barrier after each step. The short step (k mod Smax
/// stages) comes last, except in a DIF pass with Pass::unit_steps, where it comes
/// first, so that the step at the transform's bit 0 (the last) is a full
/// Smax stages and skips as many w^0 products as it can.
template <class F, bool Dif, unsigned Smax, class A, class Pass, class Ctx>
PL_HD void run_tile_stages(const Pass& p, std::size_t block, const Ctx& ctx, F* tile, unsigned lo) {
  unsigned ls = 0, first = 0;  // first: the short step's size when it goes first
  if constexpr (Dif && Pass::unit_steps) first = p.k % Smax;
  while (ls < p.k) {
    const unsigned left = ls == 0 && first ? first : p.k - ls;
    if (Smax >= 3 && left >= 3) {
      tile_step<F, Dif, (Smax >= 3 ? 3 : 1), A>(p, block, ctx, tile, lo, ls);
      ls += 3;
    } else if (Smax >= 2 && left >= 2) {
      tile_step<F, Dif, (Smax >= 2 ? 2 : 1), A>(p, block, ctx, tile, lo, ls);
      ls += 2;
    } else {
      tile_step<F, Dif, 1, A>(p, block, ctx, tile, lo, ls);
      ls += 1;
    }
  }
}

}  // namespace proofline::gpu::cuda::ntt
