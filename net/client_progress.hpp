// The progress line of `submit` and `await`, and its ETA:
//
//   [3/8 proofs, ETA 4.1 s] batch 2/4 other 1/4
//
// The count and ETA come first, so that cutting the line to the terminal's
// width drops job details before them. The ETA is the rate of finished
// partitions (done or failed) since the first one the client saw finish,
// applied to those left: the time before the first finish (key loading,
// queueing at the server) does not count, so it does not inflate the
// estimate early in a backlog.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace proofline::net {

/// Finishes seen so far, for the ETA.
class finish_rate {
 public:
  /// Records that `finished` partitions were finished at `now_ms` (any clock;
  /// the same one for every call). Calls with fewer or as many as before
  /// change nothing but the first.
  void observe(double now_ms, uint64_t finished);

  /// Time left until `total` partitions are finished, at the rate of those
  /// finished after the first observed finish, counted down since the last
  /// one; nullopt until two observations a finish apart exist. 0 once all
  /// are finished.
  std::optional<double> eta_ms(double now_ms, uint64_t total) const;

 private:
  std::optional<double> first_ms_;  ///< when the first finish was seen
  uint64_t first_ = 0;              ///< finished then
  double last_ms_ = 0;              ///< when the count last grew
  uint64_t last_ = 0;               ///< finished then
};

/// One job of the line.
struct job_count {
  std::string id;  ///< shown with control characters escaped
  uint32_t done = 0;
  uint32_t total = 0;
  bool complete = false;  ///< left out of the details
};

/// "850 ms", "3.2 s", "4 min 05 s", "2 h 03 min".
std::string format_duration(double ms);

/// The line, without a newline, at most `width` bytes when `width` > 0.
std::string client_progress_line(const std::vector<job_count>& jobs, std::optional<double> eta_ms,
                                 std::size_t width = 0);

}  // namespace proofline::net
