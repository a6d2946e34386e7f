// gpu/cuda/backend/residency.hpp: finding, reserving and uploading a key.
#include <string>
#include <utility>

#include "gpu/cuda/abc/pipeline.hpp"
#include "gpu/cuda/backend/residency.hpp"
#include "gpu/cuda/ops.cuh"

namespace proofline::gpu::cuda::detail {

void key_residency::hint(resident_base& rk, std::size_t partitions) {
  if (!rk.hinted) rk.proved_at_hint = rk.proved;
  rk.hinted = true;
  rk.announced += partitions;
}

void key_residency::expect(const key_ptr& key, std::size_t partitions) {
  for (auto it = hints_.begin(); it != hints_.end();)
    it = it->second.first.expired() ? hints_.erase(it) : std::next(it);
  auto* slot = budget_.find(key.get());
  if (slot && (*slot)->owner.lock() == key)
    hint(**slot, partitions);
  else if (auto& h = hints_[key.get()]; h.first.lock() == key)
    h.second += partitions;  // taken when the key is uploaded
  else
    h = {key, partitions};
}

template <class C>
std::shared_ptr<resident_key<C>> key_residency::acquire(const key_ptr& kp, const proving_key<C>& key,
                                                        cudaStream_t s) {
  const unsigned bits = C::fr::params::bits;
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    auto* slot = budget_.find(kp.get());
    if (slot && (*slot)->owner.lock() != kp) {
      budget_.drop(kp.get());  // a different key now lives at that address
      slot = nullptr;
    }
    if (!slot) break;
    auto rk = std::static_pointer_cast<resident_key<C>>(*slot);
    if (rk->ready) {
      rk->last_use = budget_.tick();
      return rk;
    }
    key_ready_.wait(lk);  // its uploader notifies, done or failed
  }

  // Not resident: reserve its bytes, then upload without the lock. The
  // matrices for a, b, c come with the points when both fit; without them
  // partitions that come without a, b, c get them from the host.
  bool fixed = opt_.tables == table_policy::first;
  std::size_t matrices = opt_.abc ? matrix_bytes(key) : 0;
  const auto room = [&](std::size_t need, const std::string& what) {
    try {
      budget_.make_room(need, what);
      return true;
    } catch (const backend_error&) {
      return false;
    }
  };
  std::size_t bytes = key_bytes(key, key_shapes(key.info, bits, fixed));
  if (fixed && !room(bytes + matrices, "key " + key.path + " with precomputed window multiples")) {
    fixed = false;  // plain points still fit, perhaps
    bytes = key_bytes(key, key_shapes(key.info, bits, false));
  }
  if (!fixed) {
    if (!matrices || !room(bytes + matrices, "key " + key.path + " with its A and B")) {
      matrices = 0;
      budget_.make_room(bytes, "key " + key.path);
    }
  }
  bytes += matrices;
  auto rk = std::make_shared<resident_key<C>>();
  rk->owner = kp;
  rk->bytes = bytes;
  rk->last_use = budget_.tick();
  if (auto h = hints_.find(kp.get()); h != hints_.end()) {
    if (h->second.first.lock() == kp) hint(*rk, h->second.second);
    hints_.erase(h);
  }
  budget_.admit(kp.get(), rk);
  lk.unlock();

  std::shared_ptr<key_points<C>> pts;
  std::shared_ptr<key_matrices<C>> mats;
  // The upload is synchronous (upload_points waits for its stream), so the
  // host's clock around it is the span of its device work.
  const double t0 = steady_us();
  double t_abc = t0;
  try {
    pts = upload_points(key, fixed, s);
    t_abc = steady_us();
    if (matrices) mats = upload_matrices(key, s);
  } catch (...) {
    lk.lock();
    if (auto* slot = budget_.find(kp.get()); slot && *slot == rk) budget_.drop(kp.get());
    key_ready_.notify_all();  // a waiter tries the upload itself
    throw;
  }
  const double t1 = steady_us();
  const double ms = (t1 - t0) / 1000.0;

  lk.lock();
  rk->points = pts;
  rk->matrices = std::move(mats);
  rk->ready = true;
  rk->stats.resident = true;
  rk->stats.to_device_ms = ms;
  rk->stats.abc_bytes = rk->matrices ? rk->matrices->bytes() : 0;
  // With tables from the start they are built inside the upload.
  rk->stats.spans.push_back({fixed ? "key_upload_tables" : "key_upload", t0, t_abc});
  if (rk->matrices) rk->stats.spans.push_back({"key_abc", t_abc, t1});
  rk->stats.tables = fixed;
  if (fixed) {
    rk->stats.tables_bytes = bytes;
    rk->stats.tables_ms = ms;  // built with the upload
  } else {
    rk->stats.tables_note = opt_.tables == table_policy::never ? "off" : tables::to_string(rk->verdict);
  }
  key_ready_.notify_all();
  tables_.consider(lk, rk, key);
  return rk;
}

template <class C>
std::shared_ptr<key_points<C>> key_residency::upload_points(const proving_key<C>& key, bool fixed,
                                                            cudaStream_t s) const {
  const key_shapes ks(key.info, C::fr::params::bits, fixed);
  auto p = std::make_shared<key_points<C>>();
  p->fixed_base = fixed;
  p->bytes = key_bytes(key, ks);
  put(p->a, key.points_a, ks.w, s);
  put(p->b1, key.points_b1, ks.w, s);
  put(p->b2, key.points_b2, ks.w, s);
  put(p->c, key.points_c, ks.c, s);
  put(p->h, key.points_h, ks.h, s);
  CUDA_OK(cudaStreamSynchronize(s));  // other lanes may use the key next
  return p;
}

template <class C>
std::shared_ptr<key_matrices<C>> key_residency::upload_matrices(const proving_key<C>& key, cudaStream_t s) const {
  auto m = std::make_shared<key_matrices<C>>();
  m->a = abc::upload(abc::build_matrix<C>(key.coefs_a, key.info, "A"), s);
  m->b = abc::upload(abc::build_matrix<C>(key.coefs_b, key.info, "B"), s);
  CUDA_OK(cudaStreamSynchronize(s));
  return m;
}

template <class A>
void key_residency::put(device_buffer<A>& d, const zk::groth16::key_vector<A>& h, const msm::shape& sh,
                        cudaStream_t s) const {
  d = budget_.alloc<A>(sh.fixed_base ? h.size() * sh.windows : h.size());
  if (h.empty()) return;
  CUDA_OK(cudaMemcpyAsync(d.get(), h.data(), h.size() * sizeof(A), cudaMemcpyHostToDevice, s));
  if (sh.fixed_base) msm_precompute<typename A::group>(sh, d.get(), s);
}

template std::shared_ptr<resident_key<zk::bn254>> key_residency::acquire<zk::bn254>(
    const key_ptr&, const proving_key<zk::bn254>&, cudaStream_t);
template std::shared_ptr<resident_key<zk::bls12_381>> key_residency::acquire<zk::bls12_381>(
    const key_ptr&, const proving_key<zk::bls12_381>&, cudaStream_t);

}  // namespace proofline::gpu::cuda::detail
