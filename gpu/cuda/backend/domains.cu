// gpu/cuda/backend/domains.hpp: NTT tables built once a domain.
#include "gpu/cuda/backend/domains.hpp"

namespace proofline::gpu::cuda::detail {

template <class F>
const device_domain<F>& device_domains::get(zk::curve_id curve, unsigned log_n, cudaStream_t s) {
  const std::pair<zk::curve_id, unsigned> id{curve, log_n};
  {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = domains_.find(id);
    if (it != domains_.end()) return static_cast<const domain_holder<F>&>(*it->second).d;
  }
  // Built without the lock; a call racing for the same domain builds it
  // too and the first one stored wins (small: about n field elements).
  auto h = std::make_unique<domain_holder<F>>();
  build_domain(h->d, log_n, s);
  CUDA_OK(cudaStreamSynchronize(s));
  std::lock_guard<std::mutex> lk(mu_);
  auto& slot = domains_[id];
  if (!slot) {
    budget_.charge(h->d.bytes());
    slot = std::move(h);
  }
  return static_cast<const domain_holder<F>&>(*slot).d;
}

template const device_domain<zk::bn254::fr>& device_domains::get<zk::bn254::fr>(zk::curve_id, unsigned,
                                                                               cudaStream_t);
template const device_domain<zk::bls12_381::fr>& device_domains::get<zk::bls12_381::fr>(zk::curve_id, unsigned,
                                                                                       cudaStream_t);

}  // namespace proofline::gpu::cuda::detail
