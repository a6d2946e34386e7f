// bls12_381 G2: the fixed-base kernel (fixed_base_ops.cuh), alone in its file because
// Fq2 point arithmetic is the slowest code to compile.
#include "gpu/cuda/fixed_base_impl.cuh"

namespace proofline::gpu::cuda {

PROOFLINE_CUDA_INSTANTIATE_FIXED_BASE(zk::bls12_381, g2_group)

}  // namespace proofline::gpu::cuda
