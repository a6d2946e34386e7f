// gpu/cuda/backend/lanes.hpp: leasing lanes and the lanes' clock reference.
#include <cmath>
#include <utility>

#include "gpu/cuda/backend/lanes.hpp"

namespace proofline::gpu::cuda::detail {

lane_pool::lane_pool(unsigned count, std::size_t staging) {
  for (unsigned i = 0; i < count; ++i) {
    auto l = std::make_unique<lane>();
    l->staging = pinned_buffer<unsigned char>(staging);
    lanes_.push_back(std::move(l));
  }
}

void lane_pool::synchronize() const {
  for (auto& l : lanes_) l->s.synchronize();
}

lane_pool::lease::lease(lane_pool& pool) : pool_(pool) {
  std::unique_lock<std::mutex> lk(pool_.mu_);
  pool_.free_.wait(lk, [&] {
    for (auto& l : pool_.lanes_)
      if (!l->busy) return true;
    return false;
  });
  for (auto& l : pool_.lanes_)
    if (!l->busy) {
      l_ = l.get();
      break;
    }
  l_->busy = true;
}

lane_pool::lease::~lease() {
  {
    std::lock_guard<std::mutex> lk(pool_.mu_);
    l_->busy = false;
  }
  pool_.free_.notify_one();
}

device_clock::device_clock() : stream_(std::make_unique<stream>()) {}

double device_clock::mark(const event& e) const {
  const double t0 = steady_us();
  e.record(stream_->get());
  e.synchronize();
  return (t0 + steady_us()) / 2;
}

void device_clock::calibrate(lane& l) {
  constexpr double clock_refresh_us = 2e6;
  constexpr double clock_drift_us = 1000;
  std::shared_ptr<const clock_ref> ref;
  {
    std::lock_guard<std::mutex> lk(mu_);
    ref = ref_;
  }
  if (!ref || steady_us() - ref->taken > clock_refresh_us) {
    auto next = std::make_shared<clock_ref>();
    const double host = mark(next->e);
    next->taken = steady_us();
    next->us = host;
    if (ref) {
      const double continued = ref->us + 1000.0 * double(next->e.since(ref->e));
      if (std::abs(continued - host) < clock_drift_us) next->us = continued;
    }
    std::lock_guard<std::mutex> lk(mu_);
    if (!ref_ || ref_->taken < next->taken) ref_ = next;
    ref = ref_;
  }
  l.clock = std::move(ref);
}

}  // namespace proofline::gpu::cuda::detail
