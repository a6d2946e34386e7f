// The NTT pass kinds the prover does not run, kept for the tests and the
// benchmarks as the references the fused passes (gpu/cuda/ntt/fused.hpp)
// are measured and checked against:
//   registers  every group of K = 3 stages is a pass over global memory
//              (8 passes for 2^24);
//   tiled      a block keeps a tile of up to 1024 elements in shared memory
//              for up to 8 stages (3 passes for 2^24), then a separate pass
//              permutes (bit reversal) or scales (coset).
// transform() and to_odd_coset() here run every kind of ntt::kernel: these
// two, and fused ones through the prover's own entry points
// (gpu/cuda/ntt/transform.hpp). Over any executor: host_exec in the host
// tests, device_exec in bench/cuda/testing.cu.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gpu/cuda/ntt/butterflies.hpp"
#include "gpu/cuda/ntt/elementwise_kernels.hpp"
#include "gpu/cuda/ntt/transform.hpp"
#include "gpu/cuda/ntt/tuning.hpp"
#include "zk/common/hd.hpp"

namespace proofline::gpu::cuda::ntt::families {

/// Stages per pass (2^K elements per thread, in registers).
constexpr unsigned pass_stages = 3;

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
  static constexpr bool unit_steps = false;
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

  template <class Ctx>
  PL_HD void operator()(std::size_t block, const Ctx& ctx) const {
    F* tile = ctx.template shared<F>();
    const unsigned elems = 1u << (k + mc);
    ctx.threads(elems, [&](unsigned e) { tile[e] = x[global(block, e)]; });
    ctx.sync();
    run_tile_stages<F, Dif, 3, exact_arith<F>>(*this, block, ctx, tile, Dif ? log_n - s0 - k : s0);
    ctx.threads(elems, [&](unsigned e) { x[global(block, e)] = tile[e]; });
  }
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
void run_passes(const Exec& ex, F* x, const F* tw, unsigned log_n, const kernel& kc) {
  if (kc.kind == kernel::registers)
    passes<Dif>(ex, x, tw, log_n);
  else
    tiled_passes<Dif>(ex, x, tw, log_n);
}

/// Natural-order transform of x into out (distinct arrays; x is clobbered)
/// with passes of any kind.
template <class Exec, class F>
void transform(const Exec& ex, const tables<F>& t, F* x, F* out, bool inverse,
               const kernel& kc = default_kernel()) {
  if (kc.kind == kernel::fused) {
    ntt::transform(ex, t, x, out, inverse, kc);
    return;
  }
  const F* scale = inverse ? t.n_inv : nullptr;
  run_passes<true>(ex, x, inverse ? t.inv : t.fwd, t.log_n, kc);
  ex.for_each(std::size_t(1) << t.log_n, bitrev_fn<F>{x, out, t.log_n, scale});
}

/// Values on the n-domain -> values on its odd coset, in place, with passes
/// of any kind.
template <class Exec, class F>
void to_odd_coset(const Exec& ex, const tables<F>& t, F* x, const kernel& kc = default_kernel()) {
  if (kc.kind == kernel::fused) {
    ntt::to_odd_coset(ex, t, x, kc);
    return;
  }
  const std::size_t n = std::size_t(1) << t.log_n;
  run_passes<true>(ex, x, t.inv, t.log_n, kc);
  ex.for_each(n, coset_fn<F>{x, t.coset_lo, t.coset_hi, t.coset_k, t.log_n});
  run_passes<false>(ex, x, t.fwd, t.log_n, kc);
}

}  // namespace proofline::gpu::cuda::ntt::families
