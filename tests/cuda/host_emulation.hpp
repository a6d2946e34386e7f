// Runs the CUDA backend's NTT and MSM pipelines on the host (host_exec), the
// same functors the kernels execute, so their logic is tested without a GPU.
#pragma once

#include <cstddef>
#include <vector>

#include "gpu/cuda/exec.hpp"
#include "gpu/cuda/msm_pipeline.hpp"
#include "gpu/cuda/ntt_pipeline.hpp"
#include "zk/groth16/domain.hpp"

namespace proofline::test {

/// sum scalars[i] * points[i] through the MSM pipeline on the host; c = 0
/// lets plan() choose the window; fixed_base precomputes the window
/// multiples; chunks > 1 runs msm::chunked() over that many chunks of the
/// scalars (chunks = 0: msm::chunk_count()'s choice for the size); level1:
/// the level-1 kernel (plain or lazy Fq2 products); reduce: step 6's kernel.
template <class C, class G>
zk::ec::jacobian<G> emulated_msm(const std::vector<zk::ec::affine<G>>& points,
                                 const std::vector<typename C::scalar>& scalars, unsigned c = 0,
                                 bool fixed_base = false, unsigned chunks = 1,
                                 const gpu::cuda::msm::level1_kernel& level1 = gpu::cuda::msm::default_level1(),
                                 gpu::cuda::msm::reduce_kernel reduce = gpu::cuda::msm::default_reduce()) {
  namespace msm = gpu::cuda::msm;
  using A = zk::ec::affine<G>;
  using X = zk::ec::xyzz<G>;
  using S = typename C::scalar;
  const gpu::cuda::host_exec ex;
  const msm::chunking ch = msm::split(points.size(), msm::chunk_count(points.size(), chunks));
  msm::shape s = msm::plan(points.size(), C::fr::params::bits, c, fixed_base, ch.count);
  s.level1 = level1;
  s.reduce = reduce;
  std::vector<A> table;
  if (fixed_base) {
    table.resize(points.size() * s.windows);
    msm::precompute(ex, s, points.data(), table.data());
  }
  const A* pts = fixed_base ? table.data() : points.data();
  std::vector<X> windows(s.sums);
  if (ch.count > 1) {
    const msm::exec_steps<gpu::cuda::host_exec, S, A, X> st{ex};
    std::vector<char> mem(msm::chunked_bytes<decltype(st), S, A, X>(st, s, ch));
    gpu::cuda::carver cv(mem.data(), mem.size());
    msm::chunked(st, s, ch, scalars.data(), pts, windows.data(), cv);
    return msm::combine(windows.data(), s).to_jacobian();
  }
  std::vector<char> dig(msm::digits_bytes(s));
  std::size_t temp_bytes = std::max(msm::prepare_bytes<gpu::cuda::host_exec, S>(ex, s),
                                    msm::accumulate_bytes<gpu::cuda::host_exec, A, X>(ex, s));
  std::vector<char> temp(temp_bytes);
  gpu::cuda::carver dc(dig.data(), dig.size());
  const msm::digits d = msm::carve_digits(dc, s);
  gpu::cuda::carver t1(temp.data(), temp.size());
  msm::prepare(ex, s, scalars.data(), d, t1);
  gpu::cuda::carver t2(temp.data(), temp.size());
  msm::accumulate(ex, s, d, pts, windows.data(), t2);
  return msm::combine(windows.data(), s).to_jacobian();
}

/// A domain's tables in host memory (what the backend builds on the device).
template <class F>
struct emulated_domain {
  std::vector<F> fwd, inv, coset_lo, coset_hi, n_inv;
  gpu::cuda::ntt::tables<F> view;

  explicit emulated_domain(unsigned log_n) {
    namespace ntt = gpu::cuda::ntt;
    using roots = zk::groth16::roots<F>;
    auto h = ntt::make_host_tables<F>(log_n, roots::root(log_n), roots::inverse_root(log_n),
                                      roots::odd_coset_generator(log_n), roots::inverse_size(log_n));
    const std::size_t half = log_n ? std::size_t(1) << (log_n - 1) : 1;
    fwd.resize(half);
    inv.resize(half);
    const gpu::cuda::host_exec ex;
    ex.for_each(half, ntt::powers_fn<F>{h.fwd_lo.data(), h.fwd_hi.data(), h.tw_k, fwd.data()});
    ex.for_each(half, ntt::powers_fn<F>{h.inv_lo.data(), h.inv_hi.data(), h.tw_k, inv.data()});
    coset_lo = h.coset_lo;
    coset_hi = h.coset_hi;
    n_inv = {roots::inverse_size(log_n)};
    view.log_n = log_n;
    view.fwd = fwd.data();
    view.inv = inv.data();
    view.coset_lo = coset_lo.data();
    view.coset_hi = coset_hi.data();
    view.coset_k = h.coset_k;
    view.n_inv = n_inv.data();
  }
};

}  // namespace proofline::test
