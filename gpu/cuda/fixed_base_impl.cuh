// Definition of gpu/cuda/fixed_base_ops.cuh, included by the
// fixed_base_<curve>_<group>.cu files that instantiate it.
#pragma once

#include "gpu/cuda/device_exec.cuh"
#include "gpu/cuda/fixed_base_ops.cuh"
#include "gpu/cuda/fixed_base_plan.hpp"

namespace proofline::gpu::cuda {

template <class G, class F>
void fixed_base_products(const zk::dev::fixed_base_view<G>& table, const F* scalars, std::size_t n,
                         zk::ec::affine<G>* out, cudaStream_t s) {
  device_exec{s}.for_each(n, fixed_base_fn<G, F>{table, scalars, out});
}

}  // namespace proofline::gpu::cuda

#define PROOFLINE_CUDA_INSTANTIATE_FIXED_BASE(C, G)                                              \
  template void fixed_base_products<C::G, C::fr>(const zk::dev::fixed_base_view<C::G>&, const C::fr*, \
                                                  std::size_t, zk::ec::affine<C::G>*, cudaStream_t);
