#include "base/finish_rate.hpp"

#include <algorithm>

namespace proofline::base {

void finish_rate::observe(double now_ms, uint64_t finished) {
  if (finished == 0) return;
  if (!first_ms_) {
    first_ms_ = now_ms;
    first_ = last_ = finished;
    last_ms_ = now_ms;
    return;
  }
  if (finished > last_) {
    last_ = finished;
    last_ms_ = std::max(last_ms_, now_ms);
  }
}

std::optional<double> finish_rate::eta_ms(double now_ms, uint64_t total) const {
  if (first_ms_ && last_ >= total) return 0.0;
  if (!first_ms_ || last_ <= first_ || last_ms_ <= *first_ms_) return std::nullopt;
  const double every = (last_ms_ - *first_ms_) / static_cast<double>(last_ - first_);
  const auto left = static_cast<double>(total - last_);
  const double since = std::max(0.0, now_ms - last_ms_);
  return std::max({every * left - since, every * (left - 1), 0.0});
}

}  // namespace proofline::base
