#include "actors/detail/drain_count.hpp"

namespace proofline {

void drain_count::answered(uint64_t seq, uint64_t unfinished, uint64_t dropped) {
  --answers_;
  auto held = held_[seq];
  held_.erase(seq);
  in_flight_[seq] = static_cast<int64_t>(unfinished) - static_cast<int64_t>(dropped + held);
}

void drain_count::left(uint64_t seq) {
  if (auto it = in_flight_.find(seq); it != in_flight_.end()) --it->second;
}

void drain_count::held(uint64_t seq) {
  if (auto it = in_flight_.find(seq); it != in_flight_.end())
    --it->second;
  else
    ++held_[seq];
}

bool drain_count::drained() const {
  if (!on_ || answers_ > 0) return false;
  for (const auto& [seq, n] : in_flight_)
    if (n > 0) return false;
  return true;
}

}  // namespace proofline
