// memory_manager: the only budget ledger. It queues partitions for memory in
// the global order (priority, job sequence, partition index), grants them to
// idle synthesizers as reservations (memory/reservation.hpp) while the budget
// allows, and paces synthesis: at most `pacing` granted partitions may be
// waiting (in synthesis, at the scheduler or in a GPU worker's look-ahead)
// before a GPU worker starts proving them, so memory is not filled with
// partitions that wait. 1 synthesizes just in time: partition k+1 while k
// proves.
//
// Pacing adapts: it starts at `pacing` and grows by one, up to `max_pacing`,
// each time a GPU worker runs dry while pacing (not memory, not an empty
// queue) held back the next grant. Synthesis slower than proving thus earns
// more partitions in flight, and more synthesizers at work; fast synthesis
// keeps the just-in-time minimum.
//
// Synthesizers pull: an idle one sends pull and gets a response promise that
// is delivered when a grant is possible; nothing here ever blocks. Purge
// requests from finalizers are counted and logged; purging jemalloc arenas
// (memory::source::arena) comes with the arenas.
#pragma once

#include <caf/typed_response_promise.hpp>

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "memory/ledger.hpp"
#include "messages/interfaces.hpp"

namespace proofline {

/// One grant, as an observer sees it (tests and traces).
struct grant_event {
  uint64_t job_seq;
  uint32_t index;
  std::string witness;  ///< the partition's witness path
  uint64_t bytes;
  uint64_t reserved_after;  ///< ledger total right after this grant
};

struct memory_manager_config {
  uint64_t budget = 0;  ///< bytes
  uint32_t pacing = 1;      ///< granted partitions not yet being proved, at most (at first)
  uint32_t max_pacing = 1;  ///< ceiling of adaptive pacing; == pacing keeps it fixed
  std::function<void(const grant_event&)> on_grant;  ///< optional observer
};

struct memory_manager_state {
  static inline const char* name = "memory_manager";
  memory_manager_config cfg;
  std::optional<memory::ledger> ledger;
  uint64_t next_id = 1;
  std::unordered_map<uint64_t, work_order> waiting;     // queued in the ledger, by id
  std::deque<caf::typed_response_promise<grant>> idle;  // synthesizers waiting for work
  std::unordered_set<uint64_t> untaken;                 // granted, not yet being proved
  uint32_t pacing = 1;          // current limit on granted, untaken partitions
  bool pacing_blocked = false;  // the last try_grant stopped on pacing alone
  uint64_t grants = 0;
  uint64_t purges = 0;
};

using memory_manager_pointer = memory_manager_actor::stateful_pointer<memory_manager_state>;

memory_manager_actor::behavior_type memory_manager(memory_manager_pointer self,
                                                   memory_manager_config cfg);

/// Queues the orders; returns those larger than the whole budget.
std::vector<partition_failure> reserve(memory_manager_pointer self,
                                       const std::vector<work_order>& orders);
/// Registers an idle synthesizer; the promise is delivered by try_grant.
caf::result<grant> pull_work(memory_manager_pointer self);
void release(memory_manager_pointer self, uint64_t id, uint64_t bytes, bool final);
void mark_taken(memory_manager_pointer self, uint64_t id);
/// A GPU worker ran dry: widens pacing by one if pacing held synthesis back.
void on_starved(memory_manager_pointer self);
void purge(memory_manager_pointer self, int arena);
memory_stats stats(memory_manager_pointer self);
/// Grants to idle synthesizers while the ledger's head fits and pacing allows.
void try_grant(memory_manager_pointer self);

}  // namespace proofline
