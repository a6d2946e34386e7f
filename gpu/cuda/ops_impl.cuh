// Definitions of gpu/cuda/ops.cuh, included by the ops_*.cu files that
// instantiate them (one per curve, one for what both curves share).
#pragma once

#include <limits>
#include <string>

#include "gpu/cuda/device_exec.cuh"
#include "gpu/cuda/ops.cuh"
#include "zk/groth16/domain.hpp"

namespace proofline::gpu::cuda {

namespace detail {

template <class F>
void upload_table(device_buffer<F>& d, const std::vector<F>& h, cudaStream_t s) {
  d = device_buffer<F>(h.size());
  // pageable source: the call returns once the data is staged, so h may go
  CUDA_OK(cudaMemcpyAsync(d.get(), h.data(), h.size() * sizeof(F), cudaMemcpyHostToDevice, s));
}

inline void check_scratch(const char* what, std::size_t need, std::size_t have) {
  if (need > have)
    throw backend_error(std::string(what) + ": needs " + std::to_string(need) + " bytes of scratch, given " +
                        std::to_string(have));
}

}  // namespace detail

template <class F>
void build_domain(device_domain<F>& d, unsigned log_n, cudaStream_t s) {
  using roots = zk::groth16::roots<F>;
  auto h = ntt::make_host_tables<F>(log_n, roots::root(log_n), roots::inverse_root(log_n),
                                    roots::odd_coset_generator(log_n), roots::inverse_size(log_n));
  detail::upload_table(d.fwd_lo, h.fwd_lo, s);
  detail::upload_table(d.fwd_hi, h.fwd_hi, s);
  detail::upload_table(d.inv_lo, h.inv_lo, s);
  detail::upload_table(d.inv_hi, h.inv_hi, s);
  detail::upload_table(d.coset_lo, h.coset_lo, s);
  detail::upload_table(d.coset_hi, h.coset_hi, s);
  detail::upload_table(d.n_inv, std::vector<F>{roots::inverse_size(log_n)}, s);
  const std::size_t half = log_n ? std::size_t(1) << (log_n - 1) : 1;
  d.fwd = device_buffer<F>(half);
  d.inv = device_buffer<F>(half);
  device_exec ex{s};
  ex.for_each(half, ntt::powers_fn<F>{d.fwd_lo.get(), d.fwd_hi.get(), h.tw_k, d.fwd.get()});
  ex.for_each(half, ntt::powers_fn<F>{d.inv_lo.get(), d.inv_hi.get(), h.tw_k, d.inv.get()});
  d.view.log_n = log_n;
  d.view.fwd = d.fwd.get();
  d.view.inv = d.inv.get();
  d.view.coset_lo = d.coset_lo.get();
  d.view.coset_hi = d.coset_hi.get();
  d.view.coset_k = h.coset_k;
  d.view.n_inv = d.n_inv.get();
}

template <class F>
void odd_coset(const ntt::tables<F>& t, F* x, cudaStream_t s, const ntt::kernel& kc) {
  ntt::to_odd_coset(device_exec{s}, t, x, kc);
}

template <class F>
void transform(const ntt::tables<F>& t, F* x, F* out, bool inverse, cudaStream_t s, const ntt::kernel& kc) {
  ntt::transform(device_exec{s}, t, x, out, inverse, kc);
}

template <class F>
void h_values(std::size_t n, const F* a, const F* b, const F* c, typename F::repr* h, cudaStream_t s) {
  ntt::compute_h(device_exec{s}, n, a, b, c, h);
}

template <class S>
std::size_t msm_prepare_bytes(const msm::shape& sh) {
  return msm::prepare_bytes<device_exec, S>(device_exec{}, sh);
}

template <class S>
void msm_prepare(const msm::shape& sh, const S* scalars, const msm::digits& d, void* temp,
                 std::size_t temp_bytes, cudaStream_t s) {
  detail::check_scratch("msm_prepare", msm_prepare_bytes<S>(sh), temp_bytes);
  carver c(temp, temp_bytes);
  msm::prepare(device_exec{s}, sh, scalars, d, c);
}

template <class G>
std::size_t msm_accumulate_bytes(const msm::shape& sh) {
  return msm::accumulate_bytes<device_exec, zk::ec::affine<G>, zk::ec::xyzz<G>>(device_exec{}, sh);
}

template <class G>
void msm_accumulate(const msm::shape& sh, const msm::digits& d, const zk::ec::affine<G>* points,
                    zk::ec::xyzz<G>* windows, void* temp, std::size_t temp_bytes, cudaStream_t s) {
  detail::check_scratch("msm_accumulate", msm_accumulate_bytes<G>(sh), temp_bytes);
  carver c(temp, temp_bytes);
  msm::accumulate(device_exec{s}, sh, d, points, windows, c);
}

template <class G>
std::size_t msm_buckets_bytes(const msm::shape& sh) {
  return msm::bucket_pass_bytes<device_exec, zk::ec::affine<G>, zk::ec::xyzz<G>>(device_exec{}, sh);
}

template <class G>
void msm_buckets(const msm::shape& sh, const msm::digits& d, const zk::ec::affine<G>* points,
                 zk::ec::xyzz<G>* buckets, bool add, void* temp, std::size_t temp_bytes, cudaStream_t s) {
  detail::check_scratch("msm_buckets", msm_buckets_bytes<G>(sh), temp_bytes);
  carver c(temp, temp_bytes);
  msm::bucket_pass(device_exec{s}, sh, d, points, buckets, add, c);
}

template <class G>
std::size_t msm_reduce_bytes(const msm::shape& sh) {
  return msm::reduce_bytes<device_exec, zk::ec::xyzz<G>>(device_exec{}, sh);
}

template <class G>
void msm_reduce(const msm::shape& sh, const zk::ec::xyzz<G>* buckets, zk::ec::xyzz<G>* windows, void* temp,
                std::size_t temp_bytes, cudaStream_t s) {
  detail::check_scratch("msm_reduce", msm_reduce_bytes<G>(sh), temp_bytes);
  carver c(temp, temp_bytes);
  msm::reduce(device_exec{s}, sh, buckets, windows, c);
}

namespace detail {

/// The steps of msm::chunked on stream s; each chunk first waits for its
/// upload (up null: the scalars are on the device already).
template <class G>
struct device_steps {
  using S = msm_scalar;
  using A = zk::ec::affine<G>;
  using X = zk::ec::xyzz<G>;
  cudaStream_t s;
  const msm_uploads* up;

  std::size_t prepare_bytes(const msm::shape& sh) const { return msm_prepare_bytes<S>(sh); }
  std::size_t bucket_bytes(const msm::shape& sh) const { return msm_buckets_bytes<G>(sh); }
  std::size_t reduce_bytes(const msm::shape& sh) const { return msm_reduce_bytes<G>(sh); }
  void zero(void* p, std::size_t bytes) const {
    if (bytes) CUDA_OK(cudaMemsetAsync(p, 0, bytes, s));
  }
  void wait(unsigned k) const {
    if (up) CUDA_OK(cudaStreamWaitEvent(s, up->uploaded[k].get(), 0));
  }
  void prepare(const msm::shape& sh, const S* scalars, const msm::digits& d, void* temp, std::size_t bytes) const {
    msm_prepare<S>(sh, scalars, d, temp, bytes, s);
  }
  void buckets(const msm::shape& sh, const msm::digits& d, const A* points, X* b, bool add, void* temp,
               std::size_t bytes) const {
    msm_buckets<G>(sh, d, points, b, add, temp, bytes, s);
  }
  void reduce(const msm::shape& sh, const X* b, X* windows, void* temp, std::size_t bytes) const {
    msm_reduce<G>(sh, b, windows, temp, bytes, s);
  }
};

}  // namespace detail

template <class G>
std::size_t msm_chunked_bytes(const msm::shape& sh, const msm::chunking& ch) {
  return msm::chunked_bytes<detail::device_steps<G>, msm_scalar, zk::ec::affine<G>, zk::ec::xyzz<G>>(
      detail::device_steps<G>{nullptr, nullptr}, sh, ch);
}

template <class G>
void msm_chunked(const msm::shape& sh, const msm::chunking& ch, const msm_scalar* host, msm_scalar* dev,
                 const zk::ec::affine<G>* points, zk::ec::xyzz<G>* windows, void* mem, std::size_t mem_bytes,
                 msm_uploads* up, cudaStream_t s) {
  if (ch.count < 1 || ch.count > msm::max_chunks || ch.begin[ch.count] != sh.n)
    throw backend_error("msm_chunked: " + std::to_string(ch.count) + " chunks do not cover " +
                        std::to_string(sh.n) + " scalars");
  detail::check_scratch("msm_chunked", msm_chunked_bytes<G>(sh, ch), mem_bytes);
  if (host) {
    if (!up) throw backend_error("msm_chunked: uploading the scalars needs an msm_uploads");
    const cudaStream_t copy = up->copy.get();
    up->free.record(s);
    CUDA_OK(cudaStreamWaitEvent(copy, up->free.get(), 0));
    for (unsigned k = 0; k < ch.count; ++k) {
      const std::size_t lo = ch.begin[k], len = ch.begin[k + 1] - lo;
      CUDA_OK(cudaMemcpyAsync(dev + lo, host + lo, len * sizeof(msm_scalar), cudaMemcpyHostToDevice, copy));
      up->uploaded[k].record(copy);
    }
  }
  carver c(mem, mem_bytes);
  msm::chunked(detail::device_steps<G>{s, host ? up : nullptr}, sh, ch, static_cast<const msm_scalar*>(dev),
               points, windows, c);
}

template <class G>
void msm_precompute(const msm::shape& sh, zk::ec::affine<G>* table, cudaStream_t s) {
  if (!sh.fixed_base) throw backend_error("msm_precompute: the shape has no fixed base");
  msm::precompute(device_exec{s}, sh, static_cast<const zk::ec::affine<G>*>(table), table);
}

// The digit steps are compiled once, in ops_common.cu (the radix sort is
// slow to compile); the group files that call them only link to them.
extern template std::size_t msm_prepare_bytes<msm_scalar>(const msm::shape&);
extern template void msm_prepare<msm_scalar>(const msm::shape&, const msm_scalar*, const msm::digits&, void*,
                                             std::size_t, cudaStream_t);

}  // namespace proofline::gpu::cuda

// Explicit instantiation lists for the ops_*.cu files.
#define PROOFLINE_CUDA_INSTANTIATE_FR(F)                                                           \
  template void build_domain<F>(device_domain<F>&, unsigned, cudaStream_t);                        \
  template void odd_coset<F>(const ntt::tables<F>&, F*, cudaStream_t, const ntt::kernel&);         \
  template void transform<F>(const ntt::tables<F>&, F*, F*, bool, cudaStream_t, const ntt::kernel&); \
  template void h_values<F>(std::size_t, const F*, const F*, const F*, typename F::repr*, cudaStream_t);

#define PROOFLINE_CUDA_INSTANTIATE_GROUP(G)                                                        \
  template std::size_t msm_accumulate_bytes<G>(const msm::shape&);                                 \
  template void msm_accumulate<G>(const msm::shape&, const msm::digits&, const zk::ec::affine<G>*, \
                                  zk::ec::xyzz<G>*, void*, std::size_t, cudaStream_t);             \
  template std::size_t msm_buckets_bytes<G>(const msm::shape&);                                    \
  template void msm_buckets<G>(const msm::shape&, const msm::digits&, const zk::ec::affine<G>*,    \
                               zk::ec::xyzz<G>*, bool, void*, std::size_t, cudaStream_t);          \
  template std::size_t msm_reduce_bytes<G>(const msm::shape&);                                     \
  template void msm_reduce<G>(const msm::shape&, const zk::ec::xyzz<G>*, zk::ec::xyzz<G>*, void*,   \
                              std::size_t, cudaStream_t);                                          \
  template std::size_t msm_chunked_bytes<G>(const msm::shape&, const msm::chunking&);              \
  template void msm_chunked<G>(const msm::shape&, const msm::chunking&, const msm_scalar*, msm_scalar*, \
                               const zk::ec::affine<G>*, zk::ec::xyzz<G>*, void*, std::size_t,     \
                               msm_uploads*, cudaStream_t);                                        \
  template void msm_precompute<G>(const msm::shape&, zk::ec::affine<G>*, cudaStream_t);
