#include "memory/reservation.hpp"

#include <algorithm>

namespace proofline::memory {

reservation::reservation(uint64_t id, uint64_t bytes, release_fn release)
    : id_(id), granted_(bytes), held_(bytes), release_(std::move(release)) {}

reservation::~reservation() { release_all(); }

uint64_t reservation::release(uint64_t bytes) {
  if (ended_.load(std::memory_order_acquire)) return 0;
  uint64_t cur = held_.load(std::memory_order_acquire);
  uint64_t n = 0;
  do {
    n = std::min(bytes, cur);
    if (n == 0) return 0;
  } while (!held_.compare_exchange_weak(cur, cur - n, std::memory_order_acq_rel));
  if (release_) release_(id_, n, false);
  return n;
}

void reservation::release_all() {
  if (ended_.exchange(true, std::memory_order_acq_rel)) return;
  uint64_t n = held_.exchange(0, std::memory_order_acq_rel);
  if (release_) release_(id_, n, true);
}

}  // namespace proofline::memory
