// The rate at which partitions finish, for the ETA of the progress lines
// (`run`'s and `submit`'s): measured from the first finish seen on, so that
// what came before it (key loading, the first synthesis, queueing at a
// server) does not inflate the estimate early in a backlog.
#pragma once

#include <cstdint>
#include <optional>

namespace proofline::base {

class finish_rate {
 public:
  /// Records that `finished` partitions were finished at `now_ms` (any
  /// clock, the same for every call). Only a count above the last one
  /// moves the rate; the first call with a count above 0 starts it.
  void observe(double now_ms, uint64_t finished);

  /// Time left until `total` are finished, at the rate between the first
  /// observation and the last that raised the count, counted down since
  /// that one; once the next finish is late, the ones after it still take
  /// their share each. nullopt until the count has risen once after the
  /// first observation; 0 once all are finished.
  std::optional<double> eta_ms(double now_ms, uint64_t total) const;

 private:
  std::optional<double> first_ms_;  ///< when the first finish was seen
  uint64_t first_ = 0;              ///< finished then
  double last_ms_ = 0;              ///< when the count last rose
  uint64_t last_ = 0;               ///< finished then
};

}  // namespace proofline::base
