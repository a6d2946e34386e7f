// The fixed-base precomputation kernel (gpu/cuda/msm/): a point's window
// multiples 2^(c w) P, converted to affine in batches.
#pragma once

#include <cstddef>

#include "gpu/cuda/msm/load.hpp"
#include "zk/common/hd.hpp"
#include "zk/ec/point.hpp"

namespace proofline::gpu::cuda::msm {

/// Table multiples a precompute thread converts to affine with one shared
/// inversion (Montgomery's trick: 3 multiplications each instead of an
/// inversion each).
constexpr unsigned precompute_batch = 8;

/// Thread i: out[w*n + i] = 2^(c w) points[i] for every window w (Jacobian
/// doublings; the multiples of a batch of precompute_batch windows share
/// one inversion). Equal to converting each multiple on its own: affine
/// coordinates are unique.
template <class A>
struct precompute_fn {
  const A* points;
  std::size_t n;
  unsigned c, windows;
  A* out;

  PL_HD void operator()(std::size_t i) const {
    using J = zk::ec::jacobian<typename A::group>;
    using F = typename J::field;
    const A p = load(points + i);
    out[i] = p;
    J acc = J::from_affine(p);
    J batch[precompute_batch];
    F before[precompute_batch];  // product of the non-zero Z of the batch's earlier multiples
    for (unsigned w0 = 1; w0 < windows; w0 += precompute_batch) {
      const unsigned m = windows - w0 < precompute_batch ? windows - w0 : precompute_batch;
      F run = F::one();
      for (unsigned k = 0; k < m; ++k) {
        for (unsigned d = 0; d < c; ++d) acc = acc.dbl();
        batch[k] = acc;
        before[k] = run;
        if (!acc.Z.is_zero()) run = run * acc.Z;
      }
      F inv = run.inverse();  // 1 / (product of the batch's non-zero Z)
      for (unsigned k = m; k-- > 0;) {
        A& dst = out[std::size_t(w0 + k) * n + i];
        if (batch[k].Z.is_zero()) {
          dst = A::infinity();
          continue;
        }
        const F zi = inv * before[k];
        inv = inv * batch[k].Z;
        const F zi2 = zi.sqr();
        dst = A{batch[k].X * zi2, batch[k].Y * zi2 * zi};
      }
    }
  }
};

}  // namespace proofline::gpu::cuda::msm
