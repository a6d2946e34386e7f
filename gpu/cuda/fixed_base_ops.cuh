// The fixed-base kernel's entry point (gpu/cuda/fixed_base.hpp), declared
// for the engine; defined in fixed_base_impl.cuh and compiled once per curve
// and group in fixed_base_<curve>_<group>.cu, so the four instantiations
// build in parallel and a change to one group rebuilds only its file.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "zk/dev/fixed_base_view.hpp"

namespace proofline::gpu::cuda {

/// out[i] = scalars[i] * base in affine form (infinity for 0) for i < n, on
/// stream s; `table` is the base's window table in device memory, the
/// scalars are Montgomery-form field elements on the device. Enqueued only.
template <class G, class F>
void fixed_base_products(const zk::dev::fixed_base_view<G>& table, const F* scalars, std::size_t n,
                         zk::ec::affine<G>* out, cudaStream_t s);

}  // namespace proofline::gpu::cuda
