// bn254: NTT over Fr and the G1 MSM steps (ops.cuh).
#include "gpu/cuda/ops_impl.cuh"

namespace proofline::gpu::cuda {

PROOFLINE_CUDA_INSTANTIATE_FR(zk::bn254::fr)
PROOFLINE_CUDA_INSTANTIATE_GROUP(zk::bn254::g1_group)

}  // namespace proofline::gpu::cuda
