// The CUDA backend (gpu/cuda/cuda_backend.hpp): resident proving keys, lanes
// (stream + scratch + pinned staging per concurrent prove() call), the
// partition pipeline and its spans.
//
// Lifecycle of one prove():
//   lease a free lane -> the key's points on the device (uploaded once, LRU;
//   a call that finds another call uploading the same key waits for that key
//   only) -> the points partitions read now (plain, or the window tables once
//   built: a snapshot, so a switch happens between partitions) -> NTT tables
//   of the domain -> scratch sized for the partition -> the backend's clock
//   reference for the lane's spans (a new one every 2 s) -> upload
//   (staged) -> [lock] wait for the previous partition's compute event,
//   enqueue NTTs, h, MSMs, download, record this lane's compute event
//   [unlock] -> whether to build the key's tables (key_tables.hpp) -> upload
//   done: hooks.inputs_consumed -> compute done: spans, Horner combine of the
//   window sums on the host -> result.
// The backend mutex guards bookkeeping only: no upload, table build or wait
// for the device happens under it, so one key's preparation never stalls
// the partitions of a key that is ready. Tables build on a low-priority
// stream; the first call after they are done switches them in.
// Device memory is one budget: resident keys (and tables being built) + NTT
// tables + lane scratch; least recently used keys that no call is using are
// evicted to make room. Key, table and scratch memory comes from the
// stream-ordered pool, so freeing it never waits for the device.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gpu/cuda/abc/device.cuh"
#include "gpu/cuda/abc/pipeline.hpp"
#include "gpu/cuda/cuda_backend.hpp"
#include "gpu/cuda/key_tables.hpp"
#include "gpu/cuda/ops.cuh"
#include "gpu/cuda/resources.cuh"
#include "gpu/device_lost.hpp"
#include "zk/groth16/prover.hpp"

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

/// The points a key's MSMs read: as in the key, or with a fixed base the
/// n * W precomputed window multiples (msm::precompute) the planner's
/// shapes read.
template <class C>
struct key_points {
  device_buffer<typename C::g1_affine> a, b1, c, h;
  device_buffer<typename C::g2_affine> b2;
  bool fixed_base = false;
  std::size_t bytes = 0;
};

/// Points that partitions no longer start on, freed once none reads them.
struct retired_points {
  std::shared_ptr<const void> points;
  std::size_t bytes = 0;
};

/// A proving key on the device: its points, and its tables while they build.
struct resident_base {
  std::weak_ptr<const proving_key_base> owner;  ///< detects a new key at a reused address
  std::size_t bytes = 0;      ///< device bytes counted in used_ for it (while in keys_)
  bool counted = true;        ///< still in keys_, its bytes in used_
  bool ready = false;         ///< its points are on the device (else a call is uploading them)
  uint64_t last_use = 0;
  // window tables
  bool building = false;
  tables::verdict verdict = tables::verdict::not_paid;
  std::unique_ptr<event> build_start, build_end;
  std::unique_ptr<event> build_ref;  ///< recorded at build_ref_us on the steady clock
  double build_ref_us = 0;
  std::size_t proved = 0;          ///< partitions enqueued on it
  std::size_t proved_at_hint = 0;  ///< `proved` when the runtime first announced partitions
  std::size_t announced = 0;       ///< partitions the runtime announced since
  bool hinted = false;
  key_prep_stats stats;
  virtual ~resident_base() = default;
  /// The built tables become the points partitions read; returns the plain
  /// points they replace and the tables' bytes.
  virtual std::pair<retired_points, std::size_t> switch_tables() = 0;
};

/// A key's A and B on the device, for a, b, c of partitions that come
/// without them (abc/device.cuh).
template <class C>
struct key_matrices {
  abc::device_matrix<typename C::fr> a, b;
  std::size_t bytes() const { return a.bytes() + b.bytes(); }
};

template <class C>
struct resident_key final : resident_base {
  std::shared_ptr<const key_points<C>> points;  ///< what partitions read; replaced under mu_
  std::shared_ptr<key_points<C>> built;         ///< tables being built
  /// Set with the points, before `ready`; null when they did not fit.
  std::shared_ptr<const key_matrices<C>> matrices;

  std::pair<retired_points, std::size_t> switch_tables() override {
    retired_points old{points, points ? points->bytes : 0};
    points = std::move(built);
    return {std::move(old), points->bytes};
  }
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
  m_abc,
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
constexpr const char* span_names[] = {"abc",    "ntt_a",  "ntt_b", "ntt_c", "h",       "msm_a",
                                      "msm_b1", "msm_b2", "msm_c", "msm_h", "download"};

/// The five MSMs of a partition, in the order their bucket passes run.
enum msm_index : unsigned { msm_a, msm_b1, msm_b2, msm_c, msm_h, msm_count };

/// One prove() in flight.
/// The device's event clock placed once on the steady clock (an event on the
/// idle clock stream and the host time around it), shared by every lane of a
/// backend: a span is the reference's time plus the event time elapsed since
/// the reference, measured on the device, so spans of two lanes compare
/// exactly instead of through two host-side calibrations, each off by the
/// wake-up of a blocking sync (tens to hundreds of microseconds).
struct clock_ref {
  event e;
  double us = 0;     ///< the steady clock at e
  double taken = 0;  ///< the steady clock when e was taken (its age)
};

struct lane {
  stream s{stream::high};  ///< partitions come before table builds (build_stream_)
  /// Window reductions (MSM step 6): a long chain of dependent additions on
  /// few threads, latency-bound, so each MSM's runs here while the next
  /// MSM's bucket pass fills the GPU on s. Its priority is above s's, so a
  /// reduction's blocks take the SMs that a bucket pass's blocks free
  /// before the pass's next ones do (measured: docs/BENCHMARKS.md).
  stream r{stream::highest};
  event bucketed[msm_count];  ///< on s: MSM k's buckets are complete
  event reduced[msm_count];   ///< on r: MSM k's window sums are complete, its buckets free
  event r_tail;               ///< on r: everything enqueued there so far
  event marks[m_count];
  std::shared_ptr<const clock_ref> clock;  ///< the reference its spans are measured from
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
  void* temp = nullptr;  ///< scalar digests and bucket passes, on the lane's stream s
  std::size_t temp_bytes = 0;
  void* reduce_temp = nullptr;  ///< window reductions, one after another on stream r
  std::size_t reduce_bytes = 0;
  /// Two bucket arrays, taken in turn by the MSMs: MSM k's reduction on r
  /// reads one while MSM k+1's bucket pass fills the other on s.
  void* buckets[2] = {nullptr, nullptr};
  x1 *win_a = nullptr, *win_b1 = nullptr, *win_c = nullptr, *win_h = nullptr;
  x2* win_b2 = nullptr;

  void carve(carver& cv, const msm::shape& sw, const msm::shape& sc, const msm::shape& sh,
             std::size_t temp_need, std::size_t reduce_need) {
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
    reduce_temp = cv.take_bytes(reduce_need);
    reduce_bytes = reduce_need;
    const std::size_t bucket_bytes = std::max(
        {sizeof(x1) * sw.buckets, sizeof(x2) * sw.buckets, sizeof(x1) * sc.buckets, sizeof(x1) * sh.buckets});
    for (auto& b : buckets) b = cv.take_bytes(bucket_bytes);
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

/// The MSM steps' temporary space of a key's shapes: `temp` for the digests
/// and bucket passes, `reduce` for the window reductions.
struct scratch_needs {
  std::size_t temp = 0, reduce = 0;
};

template <class C>
scratch_needs scratch_needs_of(const key_shapes& ks) {
  using g1 = typename C::g1_group;
  using g2 = typename C::g2_group;
  using scalar = typename C::scalar;
  scratch_needs n;
  n.temp = std::max({msm_prepare_bytes<scalar>(ks.w), msm_prepare_bytes<scalar>(ks.c),
                     msm_prepare_bytes<scalar>(ks.h), msm_buckets_bytes<g1>(ks.w), msm_buckets_bytes<g2>(ks.w),
                     msm_buckets_bytes<g1>(ks.c), msm_buckets_bytes<g1>(ks.h)});
  n.reduce = std::max({msm_reduce_bytes<g1>(ks.w), msm_reduce_bytes<g2>(ks.w), msm_reduce_bytes<g1>(ks.c),
                       msm_reduce_bytes<g1>(ks.h)});
  return n;
}

/// Scratch of one partition in a lane for a key's shapes: the layout, the
/// MSMs' buckets and their steps' temporary space n.
template <class C>
std::size_t scratch_bytes(const key_shapes& ks, const scratch_needs& n) {
  layout<C> lay;
  carver count;
  lay.carve(count, ks.w, ks.c, ks.h, n.temp, n.reduce);
  return count.used();
}

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
    int pools = 0;
    CUDA_OK(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, device_));
    pools_ = pools != 0;
    limit_ = opt_.memory_limit ? opt_.memory_limit : free_bytes / 10 * 9;
    name_ = "CUDA device " + std::to_string(device_) + ": " + prop.name + " (" +
            std::to_string(prop.multiProcessorCount) + " SMs, " + mib(total) + ", limit " + mib(limit_) + ")";
    if (opt_.lanes == 0) opt_.lanes = 1;
    alloc_stream_ = std::make_unique<stream>();
    build_stream_ = std::make_unique<stream>(stream::low);
    clock_stream_ = std::make_unique<stream>();
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
      build_stream_->synchronize();  // no table build writes into memory freed below
    } catch (...) {
      // nothing to report to: the buffers are freed either way
    }
  }

  const char* kind() const override { return "cuda"; }
  std::string describe() const override { return name_; }
  unsigned lanes() const override { return opt_.lanes; }

  result_ptr prove(const key_ptr& key, const partition_ptr& part, const prove_hooks& hooks) override {
    if (!key || !part) throw backend_error("cuda backend: prove() needs a key and a partition");
    if (lost_.load(std::memory_order_acquire)) throw device_lost(lost_message());
    if (part->curve != key->info.curve)
      throw backend_error("cuda backend: partition is on " + std::string(zk::to_string(part->curve)) +
                          ", key " + key->path + " is on " + zk::to_string(key->info.curve));
    try {
      return zk::visit_curve(key->info.curve, [&](auto curve) -> result_ptr {
        using C = decltype(curve);
        return prove_typed<C>(key, zk::groth16::typed<C>(*key), static_cast<const partition<C>&>(*part),
                              hooks);
      });
    } catch (const sticky_error& e) {
      throw device_lost(mark_lost("cuda backend (" + key->path + "): " + e.what()));
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
        stream own;  // not a lane: partitions of ready keys keep both lanes meanwhile
        const auto& typed = zk::groth16::typed<C>(*key);
        auto rk = acquire<C>(key, typed, own.get());
        domain<fr>(C::id, key->info.log_domain, own.get());
      });
    } catch (const sticky_error& e) {
      throw device_lost(
          mark_lost("cuda backend (" + key->path + "): making the key resident: " + e.what()));
    } catch (const std::exception& e) {
      throw backend_error("cuda backend (" + key->path + "): making the key resident: " + e.what());
    }
  }

  void expect_partitions(const key_ptr& key, std::size_t partitions) override {
    if (!key) return;
    std::lock_guard<std::mutex> lk(mu_);
    for (auto it = hints_.begin(); it != hints_.end();)
      it = it->second.first.expired() ? hints_.erase(it) : std::next(it);
    auto it = keys_.find(key.get());
    if (it != keys_.end() && it->second->owner.lock() == key)
      hint(*it->second, partitions);
    else if (auto& h = hints_[key.get()]; h.first.lock() == key)
      h.second += partitions;  // taken when the key is uploaded
    else
      h = {key, partitions};
  }

  key_prep_stats key_stats(const proving_key_base* key) override {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = keys_.find(key);
    if (it == keys_.end() || !it->second->ready) return {};
    key_prep_stats st;
    try {
      poll_tables(*it->second);
      st = it->second->stats;
    } catch (const std::exception& e) {
      st = it->second->stats;
      st.tables_note = std::string("table build failed: ") + e.what();
    }
    st.device_bytes = it->second->bytes;
    return st;
  }

  void evict(const proving_key_base* key) override {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = keys_.find(key);
    if (it == keys_.end()) return;
    drop(it);  // freed here, or when the last call using it returns
  }

  bool computes_abc(const proving_key_base& key) const override {
    if (!opt_.abc) return false;
    return zk::visit_curve(key.info.curve, [&](auto curve) {
      using C = decltype(curve);
      const auto& typed = zk::groth16::typed<C>(key);
      const std::size_t points = key_bytes(typed, key_shapes(key.info, C::fr::params::bits, false));
      return points + matrix_bytes(typed) <= limit_;
    });
  }

 private:
  using key_map = std::map<const proving_key_base*, std::shared_ptr<resident_base>>;

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

  /// Device memory for keys, tables and scratch: from the stream-ordered
  /// pool where the device has one, so that freeing it never waits for the
  /// device (a table build may be running).
  template <class T>
  device_buffer<T> alloc(std::size_t count) const {
    return pools_ ? device_buffer<T>(count, alloc_stream_->get()) : device_buffer<T>(count);
  }

  /// A table build of rk is enqueued and not finished. Caller holds mu_.
  static bool build_pending(const resident_base& rk) {
    if (!rk.building) return false;
    if (!rk.build_end) return true;  // still being enqueued
    return cudaEventQuery(rk.build_end->get()) == cudaErrorNotReady;
  }

  /// Takes a key out of keys_. Its bytes leave used_ at once, or, while a
  /// table build still writes into its memory, when that build is done and
  /// no call holds the key (sweep()). Caller holds mu_.
  void drop(key_map::iterator it) {
    auto rk = std::move(it->second);
    keys_.erase(it);
    if (build_pending(*rk)) {
      retired_keys_.push_back(std::move(rk));
      return;
    }
    used_ -= rk->bytes;
    rk->counted = false;
  }

  /// Frees what was retired and is no longer read: plain points replaced by
  /// tables, keys dropped during their table build. Caller holds mu_.
  void sweep() {
    for (auto it = retired_points_.begin(); it != retired_points_.end();) {
      if (it->points.use_count() == 1) {
        used_ -= it->bytes;
        it = retired_points_.erase(it);
      } else {
        ++it;
      }
    }
    for (auto it = retired_keys_.begin(); it != retired_keys_.end();) {
      if (it->use_count() == 1 && !build_pending(**it)) {
        used_ -= (*it)->bytes;
        (*it)->counted = false;
        it = retired_keys_.erase(it);
      } else {
        ++it;
      }
    }
  }

  /// Evicts least recently used keys that no call holds until `need` more
  /// bytes fit the limit. Caller holds mu_.
  void make_room(std::size_t need, const std::string& what) {
    sweep();
    while (used_ + need > limit_) {
      auto victim = keys_.end();
      for (auto it = keys_.begin(); it != keys_.end(); ++it)
        if (it->second.use_count() == 1 && it->second->ready && !it->second->building &&
            (victim == keys_.end() || it->second->last_use < victim->second->last_use))
          victim = it;
      if (victim == keys_.end())
        throw backend_error("device memory: " + what + " needs " + mib(need) + ", " + mib(used_) + " of the " +
                            mib(limit_) + " limit are in use and nothing can be evicted");
      drop(victim);
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

  /// Device bytes of a key's A and B (at most; abc::matrix_bytes).
  template <class C>
  static std::size_t matrix_bytes(const proving_key<C>& key) {
    using F = typename C::fr;
    return abc::matrix_bytes<F>(key.coefs_a.size(), key.info.domain_size) +
           abc::matrix_bytes<F>(key.coefs_b.size(), key.info.domain_size);
  }

  /// The runtime queued `partitions` more of a key. Caller holds mu_.
  static void hint(resident_base& rk, std::size_t partitions) {
    if (!rk.hinted) rk.proved_at_hint = rk.proved;
    rk.hinted = true;
    rk.announced += partitions;
  }

  /// The key's resident entry with its points on the device: found, waited
  /// for (another call is uploading this key: only calls needing this key
  /// wait), or uploaded here on stream s without holding mu_.
  template <class C>
  std::shared_ptr<resident_key<C>> acquire(const key_ptr& kp, const proving_key<C>& key, cudaStream_t s) {
    const unsigned bits = C::fr::params::bits;
    std::unique_lock<std::mutex> lk(mu_);
    for (;;) {
      auto it = keys_.find(kp.get());
      if (it != keys_.end() && it->second->owner.lock() != kp) {
        drop(it);  // a different key now lives at that address
        it = keys_.end();
      }
      if (it == keys_.end()) break;
      auto rk = std::static_pointer_cast<resident_key<C>>(it->second);
      if (rk->ready) {
        rk->last_use = ++tick_;
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
        make_room(need, what);
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
        make_room(bytes, "key " + key.path);
      }
    }
    bytes += matrices;
    auto rk = std::make_shared<resident_key<C>>();
    rk->owner = kp;
    rk->bytes = bytes;
    rk->last_use = ++tick_;
    if (auto h = hints_.find(kp.get()); h != hints_.end()) {
      if (h->second.first.lock() == kp) hint(*rk, h->second.second);
      hints_.erase(h);
    }
    used_ += bytes;
    keys_[kp.get()] = rk;
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
      auto it = keys_.find(kp.get());
      if (it != keys_.end() && it->second == rk) drop(it);
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
    consider_tables(lk, rk, key);
    return rk;
  }

  /// The key's points on stream s (synchronised before returning), with
  /// their window tables when `fixed`.
  template <class C>
  std::shared_ptr<key_points<C>> upload_points(const proving_key<C>& key, bool fixed, cudaStream_t s) const {
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

  /// The key's A and B laid out by row (built here, on the host) on stream
  /// s, synchronised before returning.
  template <class C>
  std::shared_ptr<key_matrices<C>> upload_matrices(const proving_key<C>& key, cudaStream_t s) const {
    auto m = std::make_shared<key_matrices<C>>();
    m->a = abc::upload(abc::build_matrix<C>(key.coefs_a, key.info, "A"), s);
    m->b = abc::upload(abc::build_matrix<C>(key.coefs_b, key.info, "B"), s);
    CUDA_OK(cudaStreamSynchronize(s));
    return m;
  }

  /// Uploads points (pageable: the call returns once they are staged) and,
  /// for a fixed-base shape, precomputes their window multiples in place.
  template <class A>
  void put(device_buffer<A>& d, const zk::groth16::key_vector<A>& h, const msm::shape& sh, cudaStream_t s) const {
    d = alloc<A>(sh.fixed_base ? h.size() * sh.windows : h.size());
    if (h.empty()) return;
    CUDA_OK(cudaMemcpyAsync(d.get(), h.data(), h.size() * sizeof(A), cudaMemcpyHostToDevice, s));
    if (sh.fixed_base) msm_precompute<typename A::group>(sh, d.get(), s);
  }

  /// A table of the plain points `src` (n of them): copied on the device,
  /// then multiplied out in place.
  template <class A>
  void table_from(device_buffer<A>& d, const device_buffer<A>& src, const msm::shape& sh, cudaStream_t s) const {
    d = alloc<A>(src.size() * sh.windows);
    if (src.size() == 0) return;
    CUDA_OK(cudaMemcpyAsync(d.get(), src.get(), src.bytes(), cudaMemcpyDeviceToDevice, s));
    msm_precompute<typename A::group>(sh, d.get(), s);
  }

  // ---- window tables -----------------------------------------------------------

  template <class C>
  static tables::key_sizes sizes_of(const zk::groth16::key_info& info) {
    tables::key_sizes k;
    k.n_w = info.n_vars;
    k.n_c = info.n_private();
    k.n_h = info.domain_size;
    k.bits = C::fr::params::bits;
    k.g1_bytes = sizeof(typename C::g1_affine);
    k.g2_bytes = sizeof(typename C::g2_affine);
    return k;
  }

  /// Starts building rk's tables on the low-priority stream when they pay
  /// and fit (key_tables.hpp). Called with lk held; releases it while
  /// allocating and enqueueing, never while anything runs.
  template <class C>
  void consider_tables(std::unique_lock<std::mutex>& lk, const std::shared_ptr<resident_key<C>>& rk,
                       const proving_key<C>& key) {
    if (opt_.tables != table_policy::when_paying) return;
    if (!rk->ready || rk->building || rk->points->fixed_base || !rk->counted) return;
    const unsigned bits = C::fr::params::bits;
    const auto& info = key.info;
    tables::inputs in;
    in.costs = tables::estimate(sizes_of<C>(info));
    in.partitions_to_come =
        tables::to_come(rk->hinted, rk->announced, rk->proved - rk->proved_at_hint, rk->proved);
    sweep();
    in.device_free = limit_ > used_ ? limit_ - used_ : 0;
    const key_shapes plain(info, bits, false), fixed(info, bits, true);
    const std::size_t plain_scratch = scratch_bytes<C>(plain, scratch_needs_of<C>(plain)),
                      fixed_scratch = scratch_bytes<C>(fixed, scratch_needs_of<C>(fixed));
    in.scratch_growth = fixed_scratch > plain_scratch ? (fixed_scratch - plain_scratch) * lanes_.size() : 0;
    rk->verdict = tables::decide(in);
    if (rk->verdict != tables::verdict::build) {
      rk->stats.tables_note = tables::to_string(rk->verdict);
      return;
    }
    // tables_bytes from the key's own arrays, which the build allocates
    const std::size_t table_bytes = key_bytes(key, key_shapes(info, bits, true));
    rk->building = true;
    rk->bytes += table_bytes;
    used_ += table_bytes;
    rk->stats.tables_note = "building";
    auto src = rk->points;
    lk.unlock();

    auto t = std::make_shared<key_points<C>>();
    auto start = std::make_unique<event>(), end = std::make_unique<event>();
    auto ref = std::make_unique<event>();
    double ref_us = 0;
    std::string error;
    try {
      const key_shapes ks(info, bits, true);
      const cudaStream_t s = build_stream_->get();
      t->fixed_base = true;
      t->bytes = table_bytes;
      ref_us = clock_mark(*ref);
      start->record(s);
      table_from(t->a, src->a, ks.w, s);
      table_from(t->b1, src->b1, ks.w, s);
      table_from(t->b2, src->b2, ks.w, s);
      table_from(t->c, src->c, ks.c, s);
      table_from(t->h, src->h, ks.h, s);
      end->record(s);
    } catch (const std::exception& e) {
      error = e.what();
      try {
        build_stream_->synchronize();  // nothing enqueued may still write into t
      } catch (...) {
      }
    }
    src.reset();

    lk.lock();
    if (!error.empty()) {
      rk->building = false;
      if (rk->counted) {
        rk->bytes -= table_bytes;
        used_ -= table_bytes;
      }
      rk->stats.tables_note = "table build failed: " + error;
      return;
    }
    rk->built = std::move(t);
    rk->build_start = std::move(start);
    rk->build_end = std::move(end);
    rk->build_ref = std::move(ref);
    rk->build_ref_us = ref_us;
  }

  /// Switches in rk's tables once their build is done. Caller holds mu_.
  void poll_tables(resident_base& rk) {
    if (!rk.building || !rk.build_end) return;
    const cudaError_t e = cudaEventQuery(rk.build_end->get());
    if (e == cudaErrorNotReady) return;
    rk.building = false;
    CUDA_OK(e);  // a failed build is an error of the device, which the caller reports
    auto plain = rk.switch_tables();
    rk.stats.tables = true;
    rk.stats.tables_ms = double(rk.build_end->since(*rk.build_start));
    // Device time of the build, placed on the steady clock through the
    // reference event recorded when it was enqueued.
    const double start_us = rk.build_ref_us + 1000.0 * double(rk.build_start->since(*rk.build_ref));
    rk.stats.spans.push_back({"key_tables", start_us, start_us + 1000.0 * rk.stats.tables_ms});
    rk.stats.tables_bytes = plain.second;
    rk.stats.tables_note.clear();
    rk.bytes -= plain.first.bytes;
    if (rk.counted) retired_points_.push_back(std::move(plain.first));
    sweep();
  }

  template <class F>
  const device_domain<F>& domain(zk::curve_id curve, unsigned log_n, cudaStream_t s) {
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
    l.scratch = alloc<unsigned char>(bytes);
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

  /// Records `e` on the clock stream (which runs nothing else, so the event
  /// completes at once) and returns when that was on the steady clock:
  /// events recorded on any stream of the device can then be placed on the
  /// steady clock by their elapsed time from `e`.
  double clock_mark(const event& e) const {
    const double t0 = steady_us();
    e.record(clock_stream_->get());
    e.synchronize();
    return (t0 + steady_us()) / 2;
  }

  /// Gives the lane the backend's clock reference, taking a new one when it
  /// is older than clock_refresh_us (elapsed times are floats: within 2 s
  /// they resolve a fraction of a microsecond). A new reference continues
  /// the old one on the device clock, so spans before and after it still
  /// compare exactly, unless the two clocks drifted apart by more than
  /// clock_drift_us; then it starts again from the host's time.
  void calibrate(lane& l) {
    constexpr double clock_refresh_us = 2e6;
    constexpr double clock_drift_us = 1000;
    std::shared_ptr<const clock_ref> ref;
    {
      std::lock_guard<std::mutex> lk(mu_);
      ref = clock_;
    }
    if (!ref || steady_us() - ref->taken > clock_refresh_us) {
      auto next = std::make_shared<clock_ref>();
      const double host = clock_mark(next->e);
      next->taken = steady_us();
      next->us = host;
      if (ref) {
        const double continued = ref->us + 1000.0 * double(next->e.since(ref->e));
        if (std::abs(continued - host) < clock_drift_us) next->us = continued;
      }
      std::lock_guard<std::mutex> lk(mu_);
      if (!clock_ || clock_->taken < next->taken) clock_ = next;
      ref = clock_;
    }
    l.clock = std::move(ref);
  }

  static double at_us(const lane& l, const event& e) {
    return l.clock->us + 1000.0 * double(e.since(l.clock->e));
  }

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

    auto rk = acquire<C>(kp, key, s);
    std::shared_ptr<const key_points<C>> pts;  // this partition's points, tables or not, to the end
    {
      std::lock_guard<std::mutex> lk(mu_);
      poll_tables(*rk);
      pts = rk->points;
      rk->last_use = ++tick_;
    }
    const auto& dom = domain<fr>(C::id, info.log_domain, s);

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
    calibrate(l);
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
      std::lock_guard<std::mutex> lk(mu_);  // compute runs in call order, one partition at a time
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
      std::unique_lock<std::mutex> lk(mu_);
      consider_tables(lk, rk, key);
    }

    l.marks[m_upload_end].synchronize();
    if (hooks.inputs_consumed) hooks.inputs_consumed();
    l.done.synchronize();

    if (hooks.spans) {
      hooks.spans->push_back({"upload", at_us(l, l.marks[m_upload_start]), at_us(l, l.marks[m_upload_end])});
      for (unsigned m = m_compute_start; m + 1 < m_count; ++m) {
        if (m == m_compute_start && !mats) continue;  // no a, b, c computed here
        hooks.spans->push_back({span_names[m - m_compute_start], at_us(l, l.marks[m]), at_us(l, l.marks[m + 1])});
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

  int device_;
  backend_options opt_;
  std::string name_;
  bool pools_ = false;    ///< the device has a stream-ordered memory pool
  std::size_t limit_ = 0;
  std::size_t used_ = 0;  ///< resident keys (tables being built included) + NTT tables + lane scratch
  uint64_t tick_ = 0;
  std::mutex mu_;  ///< everything below, the entries' fields, lanes' busy flags, last_compute_
  std::condition_variable lane_free_;
  std::condition_variable key_ready_;  ///< a key's upload finished or failed
  std::unique_ptr<stream> alloc_stream_;  ///< orders pool allocations (idle otherwise)
  std::unique_ptr<stream> build_stream_;  ///< window-table builds, low priority
  std::unique_ptr<stream> clock_stream_;  ///< runs nothing: clock_mark's events complete at once
  std::vector<std::unique_ptr<lane>> lanes_;
  key_map keys_;
  std::vector<std::shared_ptr<resident_base>> retired_keys_;  ///< dropped while their tables built
  std::vector<retired_points> retired_points_;               ///< plain points replaced by tables
  std::map<const proving_key_base*, std::pair<std::weak_ptr<const proving_key_base>, std::size_t>> hints_;
  std::map<std::pair<zk::curve_id, unsigned>, std::unique_ptr<domain_base>> domains_;
  cudaEvent_t last_compute_ = nullptr;  ///< a lane's `done` event, recorded last
  std::shared_ptr<const clock_ref> clock_;  ///< the lanes' clock reference (calibrate)

  // A sticky error poisoned the context: every later prove() fails at once
  // with the first error's words, without calling CUDA. The device is not
  // reset: the other lane may be inside a call on the same context, the
  // resident keys' memory belongs to it, and CUDA does not promise a reset
  // recovers from these errors; the runtime proves elsewhere instead.
  std::atomic<bool> lost_{false};
  std::string lost_what_;  ///< guarded by mu_

  /// Records the first sticky error; returns `what` for the exception.
  std::string mark_lost(std::string what) {
    std::lock_guard<std::mutex> lk(mu_);
    if (!lost_.load(std::memory_order_relaxed)) {
      lost_what_ = what;
      lost_.store(true, std::memory_order_release);
    }
    return what;
  }
  std::string lost_message() {
    std::lock_guard<std::mutex> lk(mu_);
    return "CUDA device " + std::to_string(device_) + " is lost after an earlier error, " +
           "partitions go to other backends: " + lost_what_;
  }
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
