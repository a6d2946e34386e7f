// bn254: the G2 MSM steps (ops.cuh), in a file of their own because Fq2
// point arithmetic is the slowest code to compile.
#include "gpu/cuda/ops_impl.cuh"

namespace proofline::gpu::cuda {

PROOFLINE_CUDA_INSTANTIATE_GROUP(zk::bn254::g2_group)

}  // namespace proofline::gpu::cuda
