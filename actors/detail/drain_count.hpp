// drain_count: the job registry's count of partitions in flight while serve
// drains (drain_atom). A job's count is set when the memory manager answers
// how many of its queued partitions it dropped: the job's other unfinished
// partitions, less those held back, were granted and are in flight. Each one
// that finishes or is held back (a retry not queued again) counts down; a
// job that ends stops counting. Plain bookkeeping, no actor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

namespace proofline {

class drain_count {
 public:
  /// Draining from now on, with `answers` drop answers to come.
  void start(size_t answers) {
    on_ = true;
    answers_ = answers;
  }
  bool on() const { return on_; }

  /// The memory manager dropped `dropped` of job `seq`'s partitions, which
  /// has `unfinished` partitions not done, failed or cancelled.
  void answered(uint64_t seq, uint64_t unfinished, uint64_t dropped);
  /// The drop answer for a job that has ended meanwhile.
  void answered() { --answers_; }
  /// A partition of job `seq` finished.
  void left(uint64_t seq);
  /// A partition of job `seq` failed and is not queued again.
  void held(uint64_t seq);
  /// Job `seq` ended (done, failed or cancelled).
  void ended(uint64_t seq) { in_flight_.erase(seq); }
  /// Every answer is in and no partition is in flight.
  bool drained() const;

 private:
  bool on_ = false;
  size_t answers_ = 0;
  std::map<uint64_t, int64_t> in_flight_;  ///< by job, once answered
  std::map<uint64_t, uint64_t> held_;      ///< by job, before it is answered
};

}  // namespace proofline
