// The run's time base: milliseconds since the run started, on the steady
// clock. Every span in messages and result.json is measured with one
// run_clock, so spans of different actors compare directly.
#pragma once

#include <chrono>

namespace proofline {

class run_clock {
 public:
  using clock = std::chrono::steady_clock;

  /// Starts counting now.
  run_clock() : epoch_(clock::now()) {}
  explicit run_clock(clock::time_point epoch) : epoch_(epoch) {}

  /// Milliseconds since the epoch (sub-microsecond resolution). Thread-safe.
  double now_ms() const {
    return std::chrono::duration<double, std::milli>(clock::now() - epoch_).count();
  }
  clock::time_point epoch() const { return epoch_; }

 private:
  clock::time_point epoch_;
};

}  // namespace proofline
