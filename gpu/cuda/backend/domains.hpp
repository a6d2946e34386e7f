// The NTT tables of each domain the CUDA backend has proved on, built once
// per (curve, size) and kept on the device, their bytes counted in the
// budget.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "gpu/cuda/backend/budget.hpp"
#include "gpu/cuda/ops.cuh"
#include "zk/curves.hpp"

namespace proofline::gpu::cuda::detail {

class device_domains {
 public:
  /// mu: the backend's lock, which guards the budget and the tables held here.
  device_domains(std::mutex& mu, device_budget& budget) : mu_(mu), budget_(budget) {}

  /// The tables of 2^log_n points of `curve`'s Fr (F), built on stream s
  /// (and synchronised) the first time. Takes the backend's lock.
  template <class F>
  const device_domain<F>& get(zk::curve_id curve, unsigned log_n, cudaStream_t s);

 private:
  struct domain_base {
    virtual ~domain_base() = default;
  };
  template <class F>
  struct domain_holder final : domain_base {
    device_domain<F> d;
  };

  std::mutex& mu_;
  device_budget& budget_;
  std::map<std::pair<zk::curve_id, unsigned>, std::unique_ptr<domain_base>> domains_;
};

}  // namespace proofline::gpu::cuda::detail
