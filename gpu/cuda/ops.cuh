// Device operations the backend, the tests and the benchmarks enqueue on a
// stream: NTTs, h, MSM steps and a few helpers. Declarations only: the
// definitions (ops_impl.cuh) are compiled once per curve in ops_<curve>.cu
// (explicit instantiations), so the heavy point arithmetic is not compiled
// again in every file that calls it.
//
// Nothing here synchronises with the host or allocates partition-sized
// memory: callers pass device pointers and scratch (msm_*_bytes tell how
// much).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "gpu/cuda/msm_pipeline.hpp"
#include "gpu/cuda/ntt_pipeline.hpp"
#include "gpu/cuda/resources.cuh"
#include "zk/curves.hpp"

namespace proofline::gpu::cuda {

/// The NTT tables of one domain size on the device (about n field elements:
/// two twiddle tables of n/2, plus 2 sqrt(n)-sized power tables each).
template <class F>
struct device_domain {
  device_buffer<F> fwd, inv, fwd_lo, fwd_hi, inv_lo, inv_hi, coset_lo, coset_hi, n_inv;
  ntt::tables<F> view;
  std::size_t bytes() const {
    return fwd.bytes() + inv.bytes() + fwd_lo.bytes() + fwd_hi.bytes() + inv_lo.bytes() +
           inv_hi.bytes() + coset_lo.bytes() + coset_hi.bytes() + n_inv.bytes();
  }
};

/// Fills d for 2^log_n points with snarkjs's roots (zk::groth16::roots<F>);
/// the work is enqueued on s.
template <class F>
void build_domain(device_domain<F>& d, unsigned log_n, cudaStream_t s);

/// x (values on the domain, natural order) -> values on the odd coset, in
/// place; kc: which passes (ntt::kernel in ntt_pipeline.hpp).
template <class F>
void odd_coset(const ntt::tables<F>& t, F* x, cudaStream_t s, const ntt::kernel& kc = ntt::default_kernel());

/// Natural-order forward or inverse NTT of x into out (x is clobbered).
template <class F>
void transform(const ntt::tables<F>& t, F* x, F* out, bool inverse, cudaStream_t s,
               const ntt::kernel& kc = ntt::default_kernel());

/// h[i] = a[i] b[i] - c[i] in standard form (h may alias a).
template <class F>
void h_values(std::size_t n, const F* a, const F* b, const F* c, typename F::repr* h, cudaStream_t s);

/// Scratch for msm_prepare on shape sh (scalars of type S).
template <class S>
std::size_t msm_prepare_bytes(const msm::shape& sh);

/// Signed digits of scalars[0 .. sh.n), sorted into d.
template <class S>
void msm_prepare(const msm::shape& sh, const S* scalars, const msm::digits& d, void* temp,
                 std::size_t temp_bytes, cudaStream_t s);

/// Scratch for msm_accumulate on shape sh over group G.
template <class G>
std::size_t msm_accumulate_bytes(const msm::shape& sh);

/// The sh.windows window sums of sum_i s_i P_i, for the digits d of the s_i.
template <class G>
void msm_accumulate(const msm::shape& sh, const msm::digits& d, const zk::ec::affine<G>* points,
                    zk::ec::xyzz<G>* windows, void* temp, std::size_t temp_bytes, cudaStream_t s);

/// Scratch for msm_buckets on shape sh over group G.
template <class G>
std::size_t msm_buckets_bytes(const msm::shape& sh);

/// Steps 3-5 (msm::bucket_pass): the digits d into buckets[0 .. sh.buckets),
/// stored, or added to the buckets' contents when `add`.
template <class G>
void msm_buckets(const msm::shape& sh, const msm::digits& d, const zk::ec::affine<G>* points,
                 zk::ec::xyzz<G>* buckets, bool add, void* temp, std::size_t temp_bytes, cudaStream_t s);

/// Scratch for msm_reduce on shape sh over group G.
template <class G>
std::size_t msm_reduce_bytes(const msm::shape& sh);

/// Step 6 (msm::reduce): the sh.sums window sums of buckets[0 .. sh.buckets).
template <class G>
void msm_reduce(const msm::shape& sh, const zk::ec::xyzz<G>* buckets, zk::ec::xyzz<G>* windows, void* temp,
                std::size_t temp_bytes, cudaStream_t s);

/// MSM scalars: standard-form 4-limb Fr (one type serves both curves).
using msm_scalar = zk::bn254::scalar;

/// The copy stream and events of msm_chunked's uploads; reusable by one
/// MSM after another.
struct msm_uploads {
  stream copy;
  event free;                         ///< the compute stream reached the MSM: the scalar buffer may be written
  event uploaded[msm::max_chunks];    ///< chunk k is on the device
};

/// Device memory msm_chunked takes for shape sh and chunks ch.
template <class G>
std::size_t msm_chunked_bytes(const msm::shape& sh, const msm::chunking& ch);

/// The sh.sums window sums of sum_i s_i P_i with the scalars in the chunks
/// of ch (msm::chunked): with `host` set, chunk k is copied from host to
/// dev on up->copy while the chunks before it compute on s (host should be
/// pinned memory, or the copies block the thread); with host null the
/// scalars are on the device already. sh is planned with ch.count passes
/// (msm::plan); mem holds msm_chunked_bytes. Enqueued only; the window sums
/// and every copy are done when s reaches the end of what this enqueues.
template <class G>
void msm_chunked(const msm::shape& sh, const msm::chunking& ch, const msm_scalar* host, msm_scalar* dev,
                 const zk::ec::affine<G>* points, zk::ec::xyzz<G>* windows, void* mem, std::size_t mem_bytes,
                 msm_uploads* up, cudaStream_t s);

/// table[w*n + i] = 2^(c w) table[i] for the windows of a fixed-base shape
/// sh; table[0 .. n) holds the points on entry (in place).
template <class G>
void msm_precompute(const msm::shape& sh, zk::ec::affine<G>* table, cudaStream_t s);

}  // namespace proofline::gpu::cuda
