// a = A·w, b = B·w and c = a∘b for one partition, from the key's matrices
// (abc/matrix.hpp) and the partition's witness, written against an executor
// (gpu/cuda/exec.hpp) so the same functors run on the GPU and, in the tests,
// on the host.
//
//   pass 1  one index per segment of A, then of B: the sum of its terms'
//           value · w[signal] (a Montgomery product of the zkey's c·R² with a
//           standard-form witness value is the Montgomery form of c·w, as in
//           zk::groth16::synthesize_abc)
//   pass 2  one index per row: the row's segment sums of A and of B, and
//           their product
//
// Field addition is exact, so the sums equal the CPU's bit for bit in any
// order of terms.
#pragma once

#include <cstddef>

#include "gpu/cuda/abc/matrix.hpp"
#include "zk/common/hd.hpp"

namespace proofline::gpu::cuda::abc {

template <class F, class S>
struct segment_fn {
  matrix_view<F> m;
  const S* w;
  F* partial;
  PL_HD void operator()(std::size_t s) const {
    F acc = F::zero();
    for (uint32_t t = m.seg_begin[s]; t < m.seg_begin[s + 1]; ++t)
      acc += m.val[t] * F::from_montgomery_limbs(w[m.col[t]]);
    partial[s] = acc;
  }
};

template <class F>
struct rows_fn {
  const uint32_t* row_seg_a;
  const uint32_t* row_seg_b;
  const F* partial_a;
  const F* partial_b;
  F* a;
  F* b;
  F* c;
  PL_HD void operator()(std::size_t r) const {
    F x = F::zero(), y = F::zero();
    for (uint32_t s = row_seg_a[r]; s < row_seg_a[r + 1]; ++s) x += partial_a[s];
    for (uint32_t s = row_seg_b[r]; s < row_seg_b[r + 1]; ++s) y += partial_b[s];
    a[r] = x;
    b[r] = y;
    c[r] = x * y;
  }
};

/// Scratch of compute(): one field element per segment of A and of B.
template <class F>
std::size_t scratch_bytes(const matrix_view<F>& A, const matrix_view<F>& B) {
  return sizeof(F) * (A.segments + B.segments);
}

/// a, b, c (each A.rows elements) of witness w; `scratch` holds
/// scratch_bytes(A, B). A and B have the same rows (the key's domain).
template <class Exec, class F, class S>
void compute(const Exec& ex, const matrix_view<F>& A, const matrix_view<F>& B, const S* w, void* scratch,
             F* a, F* b, F* c) {
  F* partial_a = static_cast<F*>(scratch);
  F* partial_b = partial_a + A.segments;
  if (A.segments) ex.for_each(A.segments, segment_fn<F, S>{A, w, partial_a});
  if (B.segments) ex.for_each(B.segments, segment_fn<F, S>{B, w, partial_b});
  ex.for_each(A.rows, rows_fn<F>{A.row_seg, B.row_seg, partial_a, partial_b, a, b, c});
}

}  // namespace proofline::gpu::cuda::abc
