// a, b, c on the GPU: a key's A and B resident in the layout of
// abc/matrix.hpp, and the two passes of abc/pipeline.hpp enqueued on a
// stream. Declarations only; abc/ops.cu compiles them once per curve.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "gpu/cuda/abc/matrix.hpp"
#include "gpu/cuda/resources.cuh"

namespace proofline::gpu::cuda::abc {

/// One matrix in device memory.
template <class F>
struct device_matrix {
  device_buffer<uint32_t> col, seg_begin, row_seg;
  device_buffer<F> val;
  std::size_t segments = 0, rows = 0;

  std::size_t bytes() const { return col.bytes() + seg_begin.bytes() + row_seg.bytes() + val.bytes(); }
  matrix_view<F> view() const { return {col.get(), val.get(), seg_begin.get(), row_seg.get(), segments, rows}; }
};

/// Copies `m` to the device on stream `s` (from pageable memory: the call
/// returns once the bytes are staged, so `m` may go).
template <class F>
device_matrix<F> upload(const host_matrix<F>& m, cudaStream_t s);

/// a, b, c of the witness `w` (device memory, standard form) on stream `s`;
/// `scratch` holds scratch_bytes(A, B) bytes of device memory.
template <class F, class S>
void compute_on(const matrix_view<F>& A, const matrix_view<F>& B, const S* w, void* scratch, F* a, F* b, F* c,
                cudaStream_t s);

}  // namespace proofline::gpu::cuda::abc
