// The MSM's window-reduction kernels (gpu/cuda/msm/), step 6 of
// docs/GPU.md's "MSM pipeline": segment sums in a block (segment_block_fn),
// the tree sums of their totals (sum_fn) and Horner's rule over the levels
// (horner_fn).
#pragma once

#include <cstddef>
#include <cstdint>

#include "gpu/cuda/msm/load.hpp"
#include "gpu/cuda/msm/plan.hpp"
#include "zk/common/hd.hpp"

namespace proofline::gpu::cuda::msm {

// ---- step 6: window sums ---------------------------------------------------

/// out[w][j] = sum_{k<F} in[w][jF+k] (indices past m read as infinity).
template <class X>
struct sum_fn {
  const X* in;
  std::size_t m, out_m;
  X* out;

  PL_HD void operator()(std::size_t t) const {
    const std::size_t w = t / out_m, j = t % out_m;
    X acc = X::infinity();
    for (uint32_t k = 0; k < reduce_fan_in; ++k) {
      std::size_t i = j * reduce_fan_in + k;
      if (i < m) acc = acc + load(in + w * m + i);
    }
    out[t] = acc;
  }
};

/// Block t = (window w, segment j) of a level with m points a window, in
/// segments of L = K R points (K = 2^tl threads, runs of R = 2^rl points):
/// tot[t] = sum_{k<L} (k+1) x[w][jL+k] and y[w][j-1] = sum_{k<L} x[w][jL+k]
/// (y[w][T-1] = infinity), T = m / L.
/// Thread i sums its run x[w][jL+iR ..] from the top by running sums:
/// p_i = sum_k x_(iR+k), t_i = sum_k (k+1) x_(iR+k) (2R additions in a row).
/// The point at iR+k counts iR+k+1 = (k+1) + iR times, so
///   tot = sum_i t_i + R sum_i i p_i,   sum_i i p_i = sum_i v_i,
/// v_i = sum_(i'>i) p_i' the suffix sums of q_i = p_(i+1) (q_(K-1) = inf):
/// a scan in shared memory (tl steps, two copies in turn), then one tree
/// (tl steps) over the v_i and the t_i together, and rl doublings. The
/// segment's plain sum is p_0 + v_0. About 2R + 2tl + rl + 2 additions in a
/// row, 2 + (2 tl + 1) / R a point.
template <class X>
struct segment_block_fn {
  const X* x;
  std::size_t m, T;
  unsigned tl, rl;
  X* tot;
  X* y;

  template <class Ctx>
  PL_HD void operator()(std::size_t t, const Ctx& ctx) const {
    const unsigned K = 1u << tl, R = 1u << rl;
    const std::size_t w = t / T, j = t % T;
    const X* b = x + w * m + j * (std::size_t(K) << rl);
    X* q[2] = {ctx.template shared<X>(), ctx.template shared<X>() + K};
    X* ts = ctx.template shared<X>() + 2 * K;
    X* p0 = ts + K;
    ctx.threads(K, [&](unsigned i) {
      X run = X::infinity(), acc = X::infinity();
      for (unsigned k = R; k-- > 0;) {
        run = run + load(b + std::size_t(i) * R + k);
        acc = acc + run;  // point k of the run counted k + 1 times
      }
      ts[i] = acc;
      if (i > 0) {
        q[0][i - 1] = run;
      } else {
        *p0 = run;
        q[0][K - 1] = X::infinity();
      }
    });
    ctx.sync();
    unsigned p = 0;
    for (unsigned d = 1; d < K; d <<= 1, p ^= 1) {
      const X* in = q[p];
      X* out = q[p ^ 1];
      ctx.threads(K, [&](unsigned i) { out[i] = i + d < K ? in[i] + in[i + d] : in[i]; });
      ctx.sync();
    }
    X* v = q[p];
    ctx.threads(1, [&](unsigned) {
      if (j > 0)
        y[t - 1] = *p0 + v[0];
      else
        y[w * T + T - 1] = X::infinity();
    });
    ctx.sync();  // v[0] is read before the tree adds into it
    for (unsigned d = K / 2; d > 0; d >>= 1) {
      // thread e < d sums the v, e >= d the t: reads [i + d], d <= i + d < 2d, not written here
      ctx.threads(2 * d, [&](unsigned e) {
        X* a = e < d ? v : ts;
        const unsigned i = e < d ? e : e - d;
        a[i] = a[i] + a[i + d];
      });
      ctx.sync();
    }
    ctx.threads(1, [&](unsigned) {
      X acc = v[0];
      for (unsigned d = 0; d < rl; ++d) acc = acc.dbl();
      tot[t] = acc + ts[0];
    });
  }
};

/// windows[w] = S_0 + 2^lg_0 (S_1 + 2^lg_1 (... + 2^lg_(n-2) S_(n-1))),
/// S_i = sums[i][w]: the levels of the reduction put together.
template <class X>
struct horner_fn {
  const X* sums;  ///< [levels][W]
  unsigned levels, windows;
  unsigned char lgs[reduce_block_levels];
  X* out;

  PL_HD void operator()(std::size_t w) const {
    X acc = load(sums + std::size_t(levels - 1) * windows + w);
    for (unsigned i = levels - 1; i-- > 0;) {
      for (unsigned d = 0; d < lgs[i]; ++d) acc = acc.dbl();
      acc = acc + load(sums + std::size_t(i) * windows + w);
    }
    out[w] = acc;
  }
};

}  // namespace proofline::gpu::cuda::msm
