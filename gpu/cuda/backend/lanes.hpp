// The CUDA backend's lanes and streams: a lane is what one prove() call runs
// on (its streams, events, scratch and pinned staging), leased from the pool
// for the call; the device clock places the events the lanes record on the
// host's steady clock, which is how their spans are reported.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "gpu/cuda/resources.cuh"

namespace proofline::gpu::cuda::detail {

/// Microseconds on the steady clock, the clock of every span.
inline double steady_us() {
  using namespace std::chrono;
  return duration<double, std::micro>(steady_clock::now().time_since_epoch()).count();
}

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
/// The spans' names, from m_compute_start on: span k ends at mark k + 1.
constexpr const char* span_names[] = {"abc",    "ntt_a",  "ntt_b", "ntt_c", "h",       "msm_a",
                                      "msm_b1", "msm_b2", "msm_c", "msm_h", "download"};

/// The five MSMs of a partition, in the order their bucket passes run.
enum msm_index : unsigned { msm_a, msm_b1, msm_b2, msm_c, msm_h, msm_count };

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

/// One prove() in flight.
struct lane {
  stream s{stream::high};  ///< partitions come before table builds (table_builds.hpp)
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
  bool busy = false;  ///< leased (guarded by the pool's lock)
};

/// The lanes of one backend, created on the current device.
class lane_pool {
 public:
  /// count lanes, each with `staging` bytes of pinned staging.
  lane_pool(unsigned count, std::size_t staging);

  /// A free lane for the lifetime of the lease (waits for one).
  class lease {
   public:
    explicit lease(lane_pool& pool);
    ~lease();
    lease(const lease&) = delete;
    lease& operator=(const lease&) = delete;
    lane& get() const { return *l_; }

   private:
    lane_pool& pool_;
    lane* l_ = nullptr;
  };

  std::size_t size() const { return lanes_.size(); }
  /// Waits until nothing enqueued on a lane's partition stream is left.
  void synchronize() const;

 private:
  std::mutex mu_;  ///< the lanes' busy flags
  std::condition_variable free_;
  std::vector<std::unique_ptr<lane>> lanes_;
};

/// The backend's clock reference for the lanes' spans.
class device_clock {
 public:
  device_clock();

  /// Records `e` on the clock stream (which runs nothing else, so the event
  /// completes at once) and returns when that was on the steady clock:
  /// events recorded on any stream of the device can then be placed on the
  /// steady clock by their elapsed time from `e`.
  double mark(const event& e) const;

  /// Gives the lane the backend's clock reference, taking a new one when it
  /// is older than clock_refresh_us (elapsed times are floats: within 2 s
  /// they resolve a fraction of a microsecond). A new reference continues
  /// the old one on the device clock, so spans before and after it still
  /// compare exactly, unless the two clocks drifted apart by more than
  /// clock_drift_us; then it starts again from the host's time.
  void calibrate(lane& l);

  /// When `e`, recorded on l's streams, was on the steady clock.
  static double at_us(const lane& l, const event& e) {
    return l.clock->us + 1000.0 * double(e.since(l.clock->e));
  }

 private:
  std::unique_ptr<stream> stream_;  ///< runs nothing: mark()'s events complete at once
  std::mutex mu_;                   ///< ref_
  std::shared_ptr<const clock_ref> ref_;
};

}  // namespace proofline::gpu::cuda::detail
