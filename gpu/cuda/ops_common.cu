// MSM steps that depend only on the scalar type (4-limb Fr on both curves).
#include "gpu/cuda/ops_impl.cuh"

namespace proofline::gpu::cuda {

static_assert(std::is_same_v<zk::bn254::scalar, zk::bls12_381::scalar>, "one scalar type serves both curves");
using scalar4 = msm_scalar;
template std::size_t msm_prepare_bytes<scalar4>(const msm::shape&);
template void msm_prepare<scalar4>(const msm::shape&, const scalar4*, const msm::digits&, void*, std::size_t,
                                   cudaStream_t);

}  // namespace proofline::gpu::cuda
