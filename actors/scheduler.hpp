// scheduler: holds synthesized partitions in the global order (priority, job
// sequence, partition index) and hands them to GPU workers, which pull (each
// keeps a small look-ahead, so the next partition is at the worker before the
// current one finishes). A pull with nothing to hand out is parked as a
// response promise and answered as soon as a partition can go; the scheduler
// itself never blocks.
//
// Order: partitions are handed out in grant order. Every grant carries a
// ticket (1, 2, ...); a ready partition goes out only once every earlier
// ticket is ready too or skipped (its synthesis failed). Synthesizers working
// in parallel finish in any order, so without this partition k+1 of a job
// could reach the GPU before partition k. The price is bounded: a partition
// waits at most for the rest of a synthesis that started before its own, and
// under a backlog (partitions ready ahead of the GPU) it costs nothing.
#pragma once

#include <caf/typed_response_promise.hpp>

#include <deque>
#include <map>
#include <optional>
#include <set>

#include "messages/interfaces.hpp"

namespace proofline {

struct scheduler_state {
  static inline const char* name = "scheduler";
  std::map<memory::grant_order, synthesized_partition> ready;
  std::deque<caf::typed_response_promise<synthesized_partition>> workers;  // parked pulls
  uint64_t next_ticket = 1;       // smallest ticket neither ready nor skipped
  std::set<uint64_t> seen_ahead;  // tickets above next_ticket already seen
  uint64_t handed = 0;
};

using scheduler_pointer = scheduler_actor::stateful_pointer<scheduler_state>;

scheduler_actor::behavior_type scheduler(scheduler_pointer self);

void on_ready(scheduler_pointer self, const synthesized_partition& p);
void on_skip(scheduler_pointer self, uint64_t ticket);
caf::result<synthesized_partition> on_pull(scheduler_pointer self);

/// Marks a ticket as seen and advances next_ticket over contiguous ones.
void see_ticket(scheduler_pointer self, uint64_t ticket);
/// The best ready partition that may go now (every earlier ticket seen), if any.
std::optional<synthesized_partition> take_next(scheduler_pointer self);
/// Answers parked pulls while partitions may go.
void dispatch(scheduler_pointer self);
/// Partitions ready, pulls parked and partitions handed out, for reports.
scheduler_stats queue_stats(scheduler_pointer self);

}  // namespace proofline
