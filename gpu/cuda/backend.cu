// The CUDA backend (gpu/cuda/cuda_backend.hpp): resident proving keys, lanes
// (stream + scratch + pinned staging per concurrent prove() call), the
// partition pipeline and its spans.
//
// Lifecycle of one prove():
//   lease a free lane -> resident key (upload once, LRU) and NTT tables of the
//   domain -> scratch sized for the partition -> calibrate the lane's clock
//   (one event, synchronised while the lane is idle) -> upload (staged) ->
//   [lock] wait for the previous partition's compute event, enqueue NTTs, h,
//   MSMs, download, record this lane's compute event [unlock] -> upload done:
//   hooks.inputs_consumed -> compute done: spans, Horner combine of the
//   window sums on the host -> result.
// Device memory is one budget: resident keys + NTT tables + lane scratch;
// least recently used keys that no call is using are evicted to make room.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "gpu/cuda/cuda_backend.hpp"
#include "gpu/cuda/ops.cuh"
#include "gpu/cuda/resources.cuh"

namespace proofline::gpu::cuda {

namespace {

using zk::groth16::key_ptr;
using zk::groth16::proving_key;
using zk::groth16::proving_key_base;

double steady_us() {
  using namespace std::chrono;
  return duration<double, std::micro>(steady_clock::now().time_since_epoch()).count();
}

std::string mib(std::size_t bytes) { return std::to_string((bytes + (1 << 19)) >> 20) + " MiB"; }

/// A proving key's points on the device.
struct resident_base {
  std::weak_ptr<const proving_key_base> owner;  ///< detects a new key at a reused address
  std::size_t bytes = 0;
  uint64_t last_use = 0;
  virtual ~resident_base() = default;
};

/// The points of each MSM: as in the key, or with a fixed base the n * W
/// precomputed window multiples (msm::precompute) the planner's shapes read.
template <class C>
struct resident_key final : resident_base {
  device_buffer<typename C::g1_affine> a, b1, c, h;
  device_buffer<typename C::g2_affine> b2;
  bool fixed_base = false;
};

/// The three MSM shapes of a key: over w (A, B1, B2), w's private part (C), h (H).
struct key_shapes {
  msm::shape w, c, h;
  key_shapes(const zk::groth16::key_info& info, unsigned bits, bool fixed_base)
      : w(msm::plan(info.n_vars, bits, 0, fixed_base)),
        c(msm::plan(info.n_private(), bits, 0, fixed_base)),
        h(msm::plan(info.domain_size, bits, 0, fixed_base)) {}
};

struct domain_base {
  virtual ~domain_base() = default;
};
template <class F>
struct domain_holder final : domain_base {
  device_domain<F> d;
};

/// Span boundaries recorded on a lane's stream, in order.
enum mark : unsigned {
  m_upload_start,
  m_upload_end,
  m_compute_start,
  m_ntt_a,
  m_ntt_b,
  m_ntt_c,
  m_h,
  m_msm_a,
  m_msm_b1,
  m_msm_b2,
  m_msm_c,
  m_msm_h,
  m_download,
  m_count
};
constexpr const char* span_names[] = {"ntt_a", "ntt_b", "ntt_c", "h", "msm_a",
                                      "msm_b1", "msm_b2", "msm_c", "msm_h", "download"};

/// One prove() in flight.
struct lane {
  stream s;
  event marks[m_count];
  event calib;            ///< clock reference, recorded while the lane is idle
  double calib_us = 0;    ///< steady clock at calib
  event staged[2];        ///< staging half k may be overwritten
  event done;             ///< end of this lane's compute (download included)
  pinned_buffer<unsigned char> staging;
  pinned_buffer<unsigned char> results;
  device_buffer<unsigned char> scratch;
  unsigned next_half = 0;
  bool busy = false;
};

/// Where one partition's data lives in its lane's scratch.
template <class C>
struct layout {
  using fr = typename C::fr;
  using scalar = typename C::scalar;
  using x1 = typename C::g1_xyzz;
  using x2 = typename C::g2_xyzz;
  scalar* w = nullptr;
  fr *a = nullptr, *b = nullptr, *c = nullptr;
  msm::digits digits;
  void* temp = nullptr;
  std::size_t temp_bytes = 0;
  x1 *win_a = nullptr, *win_b1 = nullptr, *win_c = nullptr, *win_h = nullptr;
  x2* win_b2 = nullptr;

  void carve(carver& cv, const msm::shape& sw, const msm::shape& sc, const msm::shape& sh,
             std::size_t temp_need) {
    w = cv.take<scalar>(sw.n);
    a = cv.take<fr>(sh.n);
    b = cv.take<fr>(sh.n);
    c = cv.take<fr>(sh.n);
    const msm::shape* big = &sw;
    if (sc.entries > big->entries) big = &sc;
    if (sh.entries > big->entries) big = &sh;
    digits = msm::carve_digits(cv, *big);
    temp = cv.take_bytes(temp_need);
    temp_bytes = temp_need;
    win_a = cv.take<x1>(sw.sums);
    win_b1 = cv.take<x1>(sw.sums);
    win_c = cv.take<x1>(sc.sums);
    win_h = cv.take<x1>(sh.sums);
    win_b2 = cv.take<x2>(sw.sums);
    win_end = win_b2 + sw.sums;
  }
  x2* win_end = nullptr;
  /// Bytes of the window sums (carved one after another, win_a first, win_b2 last).
  std::size_t window_bytes() const {
    return std::size_t(reinterpret_cast<const char*>(win_end) - reinterpret_cast<const char*>(win_a));
  }
  /// Where a window array lands in the host copy of that region.
  template <class X>
  const X* in_copy(const unsigned char* copy, const X* dev) const {
    return reinterpret_cast<const X*>(copy + (reinterpret_cast<const char*>(dev) -
                                              reinterpret_cast<const char*>(win_a)));
  }
};

class cuda_backend final : public backend {
 public:
  cuda_backend(int device, const backend_options& opt) : device_(device), opt_(opt) {
    std::string why;
    int count = device_count(&why);
    if (device < 0 || device >= count)
      throw backend_error("CUDA device " + std::to_string(device) + " is not available (" +
                          (count ? std::to_string(count) + " visible" : why) + ")");
    device_guard g(device_);
    cudaDeviceProp prop{};
    CUDA_OK(cudaGetDeviceProperties(&prop, device_));
    std::size_t free_bytes = 0, total = 0;
    CUDA_OK(cudaMemGetInfo(&free_bytes, &total));
    limit_ = opt_.memory_limit ? opt_.memory_limit : free_bytes / 10 * 9;
    name_ = "CUDA device " + std::to_string(device_) + ": " + prop.name + " (" +
            std::to_string(prop.multiProcessorCount) + " SMs, " + mib(total) + ", limit " + mib(limit_) + ")";
    if (opt_.lanes == 0) opt_.lanes = 1;
    const std::size_t staging = std::max<std::size_t>(opt_.staging_bytes, 2 << 20) & ~std::size_t(4095);
    for (unsigned i = 0; i < opt_.lanes; ++i) {
      auto l = std::make_unique<lane>();
      l->staging = pinned_buffer<unsigned char>(staging);
      lanes_.push_back(std::move(l));
    }
  }

  ~cuda_backend() override {
    try {
      device_guard g(device_);
      for (auto& l : lanes_) l->s.synchronize();
    } catch (...) {
      // nothing to report to: the buffers are freed either way
    }
  }

  const char* kind() const override { return "cuda"; }
  std::string describe() const override { return name_; }
  unsigned lanes() const override { return opt_.lanes; }

  result_ptr prove(const key_ptr& key, const partition_ptr& part, const prove_hooks& hooks) override {
    if (!key || !part) throw backend_error("cuda backend: prove() needs a key and a partition");
    if (part->curve != key->info.curve)
      throw backend_error("cuda backend: partition is on " + std::string(zk::to_string(part->curve)) +
                          ", key " + key->path + " is on " + zk::to_string(key->info.curve));
    try {
      return zk::visit_curve(key->info.curve, [&](auto curve) -> result_ptr {
        using C = decltype(curve);
        return prove_typed<C>(key, zk::groth16::typed<C>(*key), static_cast<const partition<C>&>(*part),
                              hooks);
      });
    } catch (const backend_error& e) {
      throw backend_error("cuda backend (" + key->path + "): " + e.what());
    } catch (const std::exception& e) {
      throw backend_error("cuda backend (" + key->path + "): " + e.what());
    }
  }

  void prepare(const key_ptr& key) override {
    if (!key) return;
    try {
      zk::visit_curve(key->info.curve, [&](auto curve) {
        using C = decltype(curve);
        using fr = typename C::fr;
        device_guard guard(device_);
        lane_lease lease(*this);
        const cudaStream_t s = lease.get().s.get();
        resident<C>(key, zk::groth16::typed<C>(*key), s);
        domain<fr>(C::id, key->info.log_domain, s);
        CUDA_OK(cudaStreamSynchronize(s));
      });
    } catch (const std::exception& e) {
      throw backend_error("cuda backend (" + key->path + "): making the key resident: " + e.what());
    }
  }

  void evict(const proving_key_base* key) override {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = keys_.find(key);
    if (it == keys_.end()) return;
    used_ -= it->second->bytes;
    keys_.erase(it);  // freed here, or when the last call using it returns
  }

 private:
  // ---- lanes -----------------------------------------------------------------

  class lane_lease {
   public:
    explicit lane_lease(cuda_backend& b) : b_(b) {
      std::unique_lock<std::mutex> lk(b_.mu_);
      b_.lane_free_.wait(lk, [&] {
        for (auto& l : b_.lanes_)
          if (!l->busy) return true;
        return false;
      });
      for (auto& l : b_.lanes_)
        if (!l->busy) {
          l_ = l.get();
          break;
        }
      l_->busy = true;
    }
    ~lane_lease() {
      {
        std::lock_guard<std::mutex> lk(b_.mu_);
        l_->busy = false;
      }
      b_.lane_free_.notify_one();
    }
    lane& get() const { return *l_; }

   private:
    cuda_backend& b_;
    lane* l_ = nullptr;
  };

  // ---- device memory ---------------------------------------------------------

  /// Evicts least recently used keys that no call holds until `need` more
  /// bytes fit the limit. Caller holds mu_.
  void make_room(std::size_t need, const std::string& what) {
    while (used_ + need > limit_) {
      auto victim = keys_.end();
      for (auto it = keys_.begin(); it != keys_.end(); ++it)
        if (it->second.use_count() == 1 && (victim == keys_.end() || it->second->last_use < victim->second->last_use))
          victim = it;
      if (victim == keys_.end())
        throw backend_error("device memory: " + what + " needs " + mib(need) + ", " + mib(used_) + " of the " +
                            mib(limit_) + " limit are in use and nothing can be evicted");
      used_ -= victim->second->bytes;
      keys_.erase(victim);
    }
  }

  /// Device bytes of a key's points, with or without precomputed multiples.
  template <class C>
  static std::size_t key_bytes(const proving_key<C>& key, const key_shapes& ks) {
    const std::size_t fw = ks.w.fixed_base ? ks.w.windows : 1, fc = ks.c.fixed_base ? ks.c.windows : 1,
                      fh = ks.h.fixed_base ? ks.h.windows : 1;
    return sizeof(typename C::g1_affine) *
               ((key.points_a.size() + key.points_b1.size()) * fw + key.points_c.size() * fc +
                key.points_h.size() * fh) +
           sizeof(typename C::g2_affine) * key.points_b2.size() * fw;
  }

  template <class C>
  std::shared_ptr<resident_key<C>> resident(const key_ptr& kp, const proving_key<C>& key, cudaStream_t s) {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = keys_.find(kp.get());
    if (it != keys_.end()) {
      if (it->second->owner.lock() == kp) {
        it->second->last_use = ++tick_;
        return std::static_pointer_cast<resident_key<C>>(it->second);
      }
      used_ -= it->second->bytes;  // a different key now lives at that address
      keys_.erase(it);
    }
    const unsigned bits = C::fr::params::bits;
    bool fixed = opt_.precompute;
    std::size_t bytes = key_bytes(key, key_shapes(key.info, bits, fixed));
    if (fixed) {
      try {
        make_room(bytes, "key " + key.path + " with precomputed window multiples");
      } catch (const backend_error&) {
        fixed = false;  // plain points still fit, perhaps
        bytes = key_bytes(key, key_shapes(key.info, bits, false));
      }
    }
    if (!fixed) make_room(bytes, "key " + key.path);
    const key_shapes ks(key.info, bits, fixed);
    auto rk = std::make_shared<resident_key<C>>();
    rk->owner = kp;
    rk->bytes = bytes;
    rk->last_use = ++tick_;
    rk->fixed_base = fixed;
    put(rk->a, key.points_a, ks.w, s);
    put(rk->b1, key.points_b1, ks.w, s);
    put(rk->b2, key.points_b2, ks.w, s);
    put(rk->c, key.points_c, ks.c, s);
    put(rk->h, key.points_h, ks.h, s);
    CUDA_OK(cudaStreamSynchronize(s));  // other lanes may use the key next
    used_ += bytes;
    keys_[kp.get()] = rk;
    return rk;
  }

  /// Uploads points (pageable: the call returns once they are staged) and,
  /// for a fixed-base shape, precomputes their window multiples in place.
  template <class A>
  static void put(device_buffer<A>& d, const std::vector<A>& h, const msm::shape& sh, cudaStream_t s) {
    d = device_buffer<A>(sh.fixed_base ? h.size() * sh.windows : h.size());
    if (h.empty()) return;
    CUDA_OK(cudaMemcpyAsync(d.get(), h.data(), h.size() * sizeof(A), cudaMemcpyHostToDevice, s));
    if (sh.fixed_base) msm_precompute<typename A::group>(sh, d.get(), s);
  }

  template <class F>
  const device_domain<F>& domain(zk::curve_id curve, unsigned log_n, cudaStream_t s) {
    std::lock_guard<std::mutex> lk(mu_);
    auto& slot = domains_[{curve, log_n}];
    if (!slot) {
      auto h = std::make_unique<domain_holder<F>>();
      build_domain(h->d, log_n, s);
      CUDA_OK(cudaStreamSynchronize(s));
      used_ += h->d.bytes();
      slot = std::move(h);
    }
    return static_cast<const domain_holder<F>&>(*slot).d;
  }

  void ensure_scratch(lane& l, std::size_t bytes) {
    std::lock_guard<std::mutex> lk(mu_);
    if (l.scratch.bytes() >= bytes) return;
    used_ -= l.scratch.bytes();
    l.scratch.reset();
    make_room(bytes, "partition scratch");
    l.scratch = device_buffer<unsigned char>(bytes);
    used_ += bytes;
  }

  // ---- transfers -------------------------------------------------------------

  /// Host -> device: directly from pinned memory, else through the lane's
  /// staging halves (memcpy into one while the other is in flight).
  static void upload(lane& l, void* dst, const void* src, std::size_t bytes, bool pinned, cudaStream_t s) {
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

  /// The lane's event clock against the steady clock; the lane must be idle.
  static void calibrate(lane& l) {
    double t0 = steady_us();
    l.calib.record(l.s.get());
    l.calib.synchronize();
    double t1 = steady_us();
    l.calib_us = (t0 + t1) / 2;
  }

  static double at_us(const lane& l, const event& e) { return l.calib_us + 1000.0 * double(e.since(l.calib)); }

  // ---- the partition ---------------------------------------------------------

  template <class C>
  result_ptr prove_typed(const key_ptr& kp, const proving_key<C>& key, const partition<C>& part,
                         const prove_hooks& hooks) {
    using g1 = typename C::g1_group;
    using g2 = typename C::g2_group;
    using fr = typename C::fr;
    using scalar = typename C::scalar;
    check_partition(key, part, 31);  // 32-bit indices on the device
    const auto& info = key.info;
    device_guard guard(device_);
    lane_lease lease(*this);
    lane& l = lease.get();
    const cudaStream_t s = l.s.get();

    auto rk = resident<C>(kp, key, s);
    const auto& dom = domain<fr>(C::id, info.log_domain, s);

    const key_shapes ks(info, fr::params::bits, rk->fixed_base);
    const msm::shape &sw = ks.w, &sc = ks.c, &sh = ks.h;
    const std::size_t temp_need = std::max(
        {msm_prepare_bytes<scalar>(sw), msm_prepare_bytes<scalar>(sc), msm_prepare_bytes<scalar>(sh),
         msm_accumulate_bytes<g1>(sw), msm_accumulate_bytes<g2>(sw), msm_accumulate_bytes<g1>(sc),
         msm_accumulate_bytes<g1>(sh)});
    layout<C> lay;
    {
      carver count;
      lay.carve(count, sw, sc, sh, temp_need);
      ensure_scratch(l, count.used());
      carver cv(l.scratch.get(), l.scratch.bytes());
      lay.carve(cv, sw, sc, sh, temp_need);
    }
    if (l.results.size() < lay.window_bytes()) l.results = pinned_buffer<unsigned char>(lay.window_bytes());

    calibrate(l);
    l.marks[m_upload_start].record(s);
    upload(l, lay.w, part.witness.data(), part.witness.bytes(), part.witness.origin().pinned, s);
    upload(l, lay.a, part.a.data(), part.a.bytes(), part.a.origin().pinned, s);
    upload(l, lay.b, part.b.data(), part.b.bytes(), part.b.origin().pinned, s);
    upload(l, lay.c, part.c.data(), part.c.bytes(), part.c.origin().pinned, s);
    l.marks[m_upload_end].record(s);

    {
      std::lock_guard<std::mutex> lk(mu_);  // compute runs in call order, one partition at a time
      if (last_compute_) CUDA_OK(cudaStreamWaitEvent(s, last_compute_, 0));
      l.marks[m_compute_start].record(s);
      odd_coset(dom.view, lay.a, s);
      l.marks[m_ntt_a].record(s);
      odd_coset(dom.view, lay.b, s);
      l.marks[m_ntt_b].record(s);
      odd_coset(dom.view, lay.c, s);
      l.marks[m_ntt_c].record(s);
      auto* h = reinterpret_cast<scalar*>(lay.a);  // h overwrites the coset values of a
      h_values(info.domain_size, lay.a, lay.b, lay.c, h, s);
      l.marks[m_h].record(s);
      msm_prepare(sw, lay.w, lay.digits, lay.temp, lay.temp_bytes, s);
      msm_accumulate<g1>(sw, lay.digits, rk->a.get(), lay.win_a, lay.temp, lay.temp_bytes, s);
      l.marks[m_msm_a].record(s);
      msm_accumulate<g1>(sw, lay.digits, rk->b1.get(), lay.win_b1, lay.temp, lay.temp_bytes, s);
      l.marks[m_msm_b1].record(s);
      msm_accumulate<g2>(sw, lay.digits, rk->b2.get(), lay.win_b2, lay.temp, lay.temp_bytes, s);
      l.marks[m_msm_b2].record(s);
      msm_prepare(sc, lay.w + info.n_public + 1, lay.digits, lay.temp, lay.temp_bytes, s);
      msm_accumulate<g1>(sc, lay.digits, rk->c.get(), lay.win_c, lay.temp, lay.temp_bytes, s);
      l.marks[m_msm_c].record(s);
      msm_prepare(sh, h, lay.digits, lay.temp, lay.temp_bytes, s);
      msm_accumulate<g1>(sh, lay.digits, rk->h.get(), lay.win_h, lay.temp, lay.temp_bytes, s);
      l.marks[m_msm_h].record(s);
      CUDA_OK(cudaMemcpyAsync(l.results.get(), lay.win_a, lay.window_bytes(), cudaMemcpyDeviceToHost, s));
      l.marks[m_download].record(s);
      l.done.record(s);
      last_compute_ = l.done.get();
    }

    l.marks[m_upload_end].synchronize();
    if (hooks.inputs_consumed) hooks.inputs_consumed();
    l.done.synchronize();

    if (hooks.spans) {
      hooks.spans->push_back({"upload", at_us(l, l.marks[m_upload_start]), at_us(l, l.marks[m_upload_end])});
      for (unsigned m = m_compute_start; m + 1 < m_count; ++m)
        hooks.spans->push_back({span_names[m - m_compute_start], at_us(l, l.marks[m]), at_us(l, l.marks[m + 1])});
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

  int device_;
  backend_options opt_;
  std::string name_;
  std::size_t limit_ = 0;
  std::size_t used_ = 0;  ///< resident keys + NTT tables + lane scratch
  uint64_t tick_ = 0;
  std::mutex mu_;  ///< keys_, domains_, used_, lanes' busy flags, last_compute_
  std::condition_variable lane_free_;
  std::vector<std::unique_ptr<lane>> lanes_;
  std::map<const proving_key_base*, std::shared_ptr<resident_base>> keys_;
  std::map<std::pair<zk::curve_id, unsigned>, std::unique_ptr<domain_base>> domains_;
  cudaEvent_t last_compute_ = nullptr;  ///< a lane's `done` event, recorded last
};

}  // namespace

int device_count(std::string* why) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();
    if (why) *why = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(e);
    return 0;
  }
  if (count == 0 && why) *why = "no CUDA device is visible";
  return count;
}

std::unique_ptr<backend> make_backend(int device) { return make_backend(device, backend_options{}); }

std::unique_ptr<backend> make_backend(int device, const backend_options& options) {
  return std::make_unique<cuda_backend>(device, options);
}

}  // namespace proofline::gpu::cuda
