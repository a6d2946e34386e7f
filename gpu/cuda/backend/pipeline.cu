// gpu/cuda/backend/pipeline.hpp: transfers and the enqueueing of one
// partition on its lane.
#include <algorithm>
#include <cstring>
#include <memory>
#include <thread>
#include <type_traits>

#include "gpu/cuda/abc/pipeline.hpp"
#include "gpu/cuda/backend/pipeline.hpp"
#include "gpu/cuda/backend/scratch.hpp"
#include "gpu/cuda/ops.cuh"

namespace proofline::gpu::cuda::detail {

namespace {

/// Host -> device: directly from pinned memory, else through the lane's
/// staging halves (memcpy into one while the other is in flight).
void upload(lane& l, void* dst, const void* src, std::size_t bytes, bool pinned, cudaStream_t s) {
  if (bytes == 0) return;
  if (pinned) {
    CUDA_OK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s));
    return;
  }
  const std::size_t half = l.staging.size() / 2;
  for (std::size_t off = 0; off < bytes; off += half) {
    const std::size_t len = std::min(half, bytes - off);
    const unsigned k = l.next_half;
    l.next_half ^= 1;
    l.staged[k].synchronize();
    unsigned char* stage = l.staging.get() + k * half;
    std::memcpy(stage, static_cast<const unsigned char*>(src) + off, len);
    CUDA_OK(cudaMemcpyAsync(static_cast<unsigned char*>(dst) + off, stage, len, cudaMemcpyHostToDevice, s));
    l.staged[k].record(s);
  }
}

}  // namespace

void partition_pipeline::ensure_scratch(lane& l, std::size_t bytes) {
  std::lock_guard<std::mutex> lk(*p_.mu);
  if (l.scratch.bytes() >= bytes) return;
  p_.budget->release(l.scratch.bytes());
  l.scratch.reset();
  p_.budget->make_room(bytes, "partition scratch");
  l.scratch = p_.budget->alloc<unsigned char>(bytes);
  p_.budget->charge(bytes);
}

template <class C>
result_ptr partition_pipeline::prove(const key_ptr& kp, const proving_key<C>& key, const partition<C>& part,
                                     const prove_hooks& hooks) {
  using g1 = typename C::g1_group;
  using g2 = typename C::g2_group;
  using fr = typename C::fr;
  using scalar = typename C::scalar;
  check_partition(key, part, 31);  // 32-bit indices on the device
  const auto& info = key.info;
  device_guard guard(p_.device);
  lane_pool::lease lease(*p_.lanes);
  lane& l = lease.get();
  const cudaStream_t s = l.s.get();

  auto rk = p_.residency->acquire<C>(kp, key, s);
  std::shared_ptr<const key_points<C>> pts;  // this partition's points, tables or not, to the end
  {
    std::lock_guard<std::mutex> lk(*p_.mu);
    p_.tables->poll(*rk);
    pts = rk->points;
    rk->last_use = p_.budget->tick();
  }
  const auto& dom = p_.domains->get<fr>(C::id, info.log_domain, s);

  // a, b, c: from synthesis, or here from the key's resident A and B, or,
  // when those did not fit, computed on the host as synthesis would.
  const key_matrices<C>* mats = part.has_abc() ? nullptr : rk->matrices.get();
  const fr *in_a = part.a.data(), *in_b = part.b.data(), *in_c = part.c.data();
  bool in_pinned = part.a.origin().pinned;
  memory::buffer<fr> host_a, host_b, host_c;
  if (!part.has_abc() && !mats) {
    const std::size_t n = info.domain_size;
    host_a = memory::buffer<fr>(n);
    host_b = memory::buffer<fr>(n);
    host_c = memory::buffer<fr>(n);
    zk::groth16::synthesize_abc<C>(key, part.witness.data(), host_a.data(), host_b.data(), host_c.data(),
                                   std::max(1u, std::thread::hardware_concurrency() / 2));
    in_a = host_a.data();
    in_b = host_b.data();
    in_c = host_c.data();
    in_pinned = false;
  }

  const key_shapes ks(info, fr::params::bits, pts->fixed_base);
  const msm::shape &sw = ks.w, &sc = ks.c, &sh = ks.h;
  scratch_needs needs = scratch_needs_of<C>(ks);
  // the passes' segment sums use the MSMs' temporary space, which is free before the MSMs
  if (mats) needs.temp = std::max(needs.temp, abc::scratch_bytes(mats->a.view(), mats->b.view()));
  layout<C> lay;
  {
    ensure_scratch(l, scratch_bytes<C>(ks, needs));
    carver cv(l.scratch.get(), l.scratch.bytes());
    lay.carve(cv, sw, sc, sh, needs.temp, needs.reduce);
  }
  if (l.results.size() < lay.window_bytes()) l.results = pinned_buffer<unsigned char>(lay.window_bytes());

  // Nothing an earlier partition of this lane left on r (a call that threw
  // before its end) may still use the scratch this one is about to fill.
  l.r_tail.record(l.r.get());
  CUDA_OK(cudaStreamWaitEvent(s, l.r_tail.get(), 0));
  p_.clock->calibrate(l);
  l.marks[m_upload_start].record(s);
  upload(l, lay.w, part.witness.data(), part.witness.bytes(), part.witness.origin().pinned, s);
  if (!mats) {
    const std::size_t abc_bytes = sizeof(fr) * info.domain_size;
    upload(l, lay.a, in_a, abc_bytes, in_pinned, s);
    upload(l, lay.b, in_b, abc_bytes, in_pinned, s);
    upload(l, lay.c, in_c, abc_bytes, in_pinned, s);
  }
  l.marks[m_upload_end].record(s);

  {
    std::lock_guard<std::mutex> lk(*p_.mu);  // compute runs in call order, one partition at a time
    if (last_compute_) CUDA_OK(cudaStreamWaitEvent(s, last_compute_, 0));
    l.marks[m_compute_start].record(s);
    if (mats)
      abc::compute_on(mats->a.view(), mats->b.view(), lay.w, lay.temp, lay.a,
                      lay.b, lay.c, s);
    l.marks[m_abc].record(s);
    odd_coset(dom.view, lay.a, s);
    l.marks[m_ntt_a].record(s);
    odd_coset(dom.view, lay.b, s);
    l.marks[m_ntt_b].record(s);
    odd_coset(dom.view, lay.c, s);
    l.marks[m_ntt_c].record(s);
    auto* h = reinterpret_cast<scalar*>(lay.a);  // h overwrites the coset values of a
    h_values(info.domain_size, lay.a, lay.b, lay.c, h, s);
    l.marks[m_h].record(s);
    // Each MSM: its bucket pass on s into bucket array k % 2 (once MSM
    // k-2's reduction has read it), then its window reduction on r,
    // overlapping MSM k+1's bucket pass. The spans msm_a .. msm_c time
    // the bucket passes; msm_h also waits for the reductions still running.
    const cudaStream_t r = l.r.get();
    const auto run_msm = [&](const msm::shape& shp, const auto* points, auto* windows, msm_index k) {
      using X = std::remove_pointer_t<decltype(windows)>;
      using G = typename X::group;
      auto* buckets = static_cast<X*>(lay.buckets[k % 2]);
      if (k >= 2) CUDA_OK(cudaStreamWaitEvent(s, l.reduced[k - 2].get(), 0));
      CUDA_OK(cudaMemsetAsync(buckets, 0, sizeof(X) * shp.buckets, s));  // all at infinity
      msm_buckets<G>(shp, lay.digits, points, buckets, false, lay.temp, lay.temp_bytes, s);
      l.bucketed[k].record(s);
      CUDA_OK(cudaStreamWaitEvent(r, l.bucketed[k].get(), 0));
      msm_reduce<G>(shp, buckets, windows, lay.reduce_temp, lay.reduce_bytes, r);
      l.reduced[k].record(r);
    };
    msm_prepare(sw, lay.w, lay.digits, lay.temp, lay.temp_bytes, s);
    run_msm(sw, pts->a.get(), lay.win_a, msm_a);
    l.marks[m_msm_a].record(s);
    run_msm(sw, pts->b1.get(), lay.win_b1, msm_b1);
    l.marks[m_msm_b1].record(s);
    run_msm(sw, pts->b2.get(), lay.win_b2, msm_b2);
    l.marks[m_msm_b2].record(s);
    msm_prepare(sc, lay.w + info.n_public + 1, lay.digits, lay.temp, lay.temp_bytes, s);
    run_msm(sc, pts->c.get(), lay.win_c, msm_c);
    l.marks[m_msm_c].record(s);
    msm_prepare(sh, h, lay.digits, lay.temp, lay.temp_bytes, s);
    run_msm(sh, pts->h.get(), lay.win_h, msm_h);
    CUDA_OK(cudaStreamWaitEvent(s, l.reduced[msm_h].get(), 0));  // r runs in order: every reduction is done
    l.marks[m_msm_h].record(s);
    CUDA_OK(cudaMemcpyAsync(l.results.get(), lay.win_a, lay.window_bytes(), cudaMemcpyDeviceToHost, s));
    l.marks[m_download].record(s);
    l.done.record(s);
    last_compute_ = l.done.get();
    ++rk->proved;
  }
  {
    // While this partition computes: do the partitions to come now pay for tables?
    std::unique_lock<std::mutex> lk(*p_.mu);
    p_.tables->consider(lk, rk, key);
  }

  l.marks[m_upload_end].synchronize();
  if (hooks.inputs_consumed) hooks.inputs_consumed();
  l.done.synchronize();

  if (hooks.spans) {
    hooks.spans->push_back({"upload", device_clock::at_us(l, l.marks[m_upload_start]),
                            device_clock::at_us(l, l.marks[m_upload_end])});
    for (unsigned m = m_compute_start; m + 1 < m_count; ++m) {
      if (m == m_compute_start && !mats) continue;  // no a, b, c computed here
      hooks.spans->push_back({span_names[m - m_compute_start], device_clock::at_us(l, l.marks[m]),
                              device_clock::at_us(l, l.marks[m + 1])});
    }
  }

  // Window sums -> points (Horner on the host: W*c doublings, well under a millisecond).
  const unsigned char* copy = l.results.get();
  auto res = std::make_shared<result<C>>();
  res->msm.a = msm::combine(lay.in_copy(copy, lay.win_a), sw).to_jacobian();
  res->msm.b1 = msm::combine(lay.in_copy(copy, lay.win_b1), sw).to_jacobian();
  res->msm.b2 = msm::combine(lay.in_copy(copy, lay.win_b2), sw).to_jacobian();
  res->msm.c = msm::combine(lay.in_copy(copy, lay.win_c), sc).to_jacobian();
  res->msm.h = msm::combine(lay.in_copy(copy, lay.win_h), sh).to_jacobian();
  return res;
}

template result_ptr partition_pipeline::prove<zk::bn254>(const key_ptr&, const proving_key<zk::bn254>&,
                                                         const partition<zk::bn254>&, const prove_hooks&);
template result_ptr partition_pipeline::prove<zk::bls12_381>(const key_ptr&, const proving_key<zk::bls12_381>&,
                                                             const partition<zk::bls12_381>&, const prove_hooks&);

}  // namespace proofline::gpu::cuda::detail
