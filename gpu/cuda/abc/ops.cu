// abc/device.cuh compiled for both curves' Fr.
#include "gpu/cuda/abc/device.cuh"
#include "gpu/cuda/abc/pipeline.hpp"
#include "gpu/cuda/check.cuh"
#include "gpu/cuda/device_exec.cuh"
#include "zk/curves.hpp"

namespace proofline::gpu::cuda::abc {

namespace {

template <class T>
device_buffer<T> copy_up(const std::vector<T>& h, cudaStream_t s) {
  device_buffer<T> d(h.size());
  if (!h.empty()) CUDA_OK(cudaMemcpyAsync(d.get(), h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice, s));
  return d;
}

}  // namespace

template <class F>
device_matrix<F> upload(const host_matrix<F>& m, cudaStream_t s) {
  device_matrix<F> d;
  d.col = copy_up(m.col, s);
  d.val = copy_up(m.val, s);
  d.seg_begin = copy_up(m.seg_begin, s);
  d.row_seg = copy_up(m.row_seg, s);
  d.segments = m.segments();
  d.rows = m.rows();
  return d;
}

template <class F, class S>
void compute_on(const matrix_view<F>& A, const matrix_view<F>& B, const S* w, void* scratch, F* a, F* b, F* c,
                cudaStream_t s) {
  compute(device_exec{s}, A, B, w, scratch, a, b, c);
}

#define PROOFLINE_ABC_INSTANTIATE(C)                                                                         \
  template device_matrix<C::fr> upload<C::fr>(const host_matrix<C::fr>&, cudaStream_t);                     \
  template void compute_on<C::fr, C::scalar>(const matrix_view<C::fr>&, const matrix_view<C::fr>&,          \
                                             const C::scalar*, void*, C::fr*, C::fr*, C::fr*, cudaStream_t);

PROOFLINE_ABC_INSTANTIATE(zk::bn254)
PROOFLINE_ABC_INSTANTIATE(zk::bls12_381)

}  // namespace proofline::gpu::cuda::abc
