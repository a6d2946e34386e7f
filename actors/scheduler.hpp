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
//
// Placement: a worker pulls with its backend index, and gets only partitions
// whose placement admits that backend (a retry may be placed on one device,
// on any device but one, or on the fallback backend: actors/retry_policy.hpp).
// A backend reported lost (a sticky device error) gets nothing more while
// another can take its partitions: one placed on it goes to the other
// primary backends, else to the fallback; if no backend is left at all, its
// workers still get the partitions, and fail them at once, so jobs end.
#pragma once

#include <caf/typed_response_promise.hpp>

#include <deque>
#include <map>
#include <optional>
#include <set>

#include "messages/interfaces.hpp"

namespace proofline {

/// The backends partitions are placed on: indices 0 .. devices-1, and the
/// fallback (a backend that proves only partitions placed on it) at index
/// `devices` when there is one.
struct scheduler_config {
  int32_t devices = 1;
  bool fallback = false;
  int32_t fallback_index() const { return fallback ? devices : -1; }
};

/// A parked pull: the promise and the backend index of the worker.
struct parked_pull {
  caf::typed_response_promise<synthesized_partition> promise;
  int32_t device = 0;
};

struct scheduler_state {
  static inline const char* name = "scheduler";
  scheduler_config cfg;
  std::map<memory::grant_order, synthesized_partition> ready;
  std::deque<parked_pull> workers;  // parked pulls, oldest first
  std::set<int32_t> lost;           // backend indices reported lost
  uint64_t next_ticket = 1;       // smallest ticket neither ready nor skipped
  std::set<uint64_t> seen_ahead;  // tickets above next_ticket already seen
  uint64_t handed = 0;
};

using scheduler_pointer = scheduler_actor::stateful_pointer<scheduler_state>;

/// One backend (index 0), no fallback.
scheduler_actor::behavior_type scheduler(scheduler_pointer self);
scheduler_actor::behavior_type placing_scheduler(scheduler_pointer self, scheduler_config cfg);

void on_ready(scheduler_pointer self, const synthesized_partition& p);
void on_skip(scheduler_pointer self, uint64_t ticket);
caf::result<synthesized_partition> on_pull(scheduler_pointer self, int32_t device);
/// Backend `device` is unusable: see the header comment.
void on_lost(scheduler_pointer self, int32_t device);
/// Whether a worker of backend `device` may take a partition placed `where`
/// now, given the backends lost so far.
bool may_take(scheduler_pointer self, const placement& where, int32_t device);

/// Marks a ticket as seen and advances next_ticket over contiguous ones.
void see_ticket(scheduler_pointer self, uint64_t ticket);
/// The best ready partition that may go now (every earlier ticket seen) to
/// a worker of backend `device`, if any.
std::optional<synthesized_partition> take_next(scheduler_pointer self, int32_t device);
/// Answers parked pulls while partitions may go.
void dispatch(scheduler_pointer self);
/// Partitions ready, pulls parked and partitions handed out, for reports.
scheduler_stats queue_stats(scheduler_pointer self);

}  // namespace proofline
