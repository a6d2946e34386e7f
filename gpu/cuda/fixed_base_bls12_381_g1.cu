// bls12_381 G1: the fixed-base kernel (fixed_base_ops.cuh).
#include "gpu/cuda/fixed_base_impl.cuh"

namespace proofline::gpu::cuda {

PROOFLINE_CUDA_INSTANTIATE_FIXED_BASE(zk::bls12_381, g1_group)

}  // namespace proofline::gpu::cuda
