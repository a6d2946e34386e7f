// memory_manager: the only budget ledger, the owner of the pinned pool and the
// only place that purges arenas.
//
// Budget: --memory-budget covers the pinned pool and the backends' fixed host
// buffers (charged once, at start), proving keys (charged while the key
// cache holds them: key_memory messages) and partitions. It queues partitions for memory in the global order
// (priority, job sequence, partition index), grants them to idle synthesizers
// as reservations (memory/reservation.hpp) while the budget allows, and paces
// synthesis: at most `pacing` granted partitions may be waiting (in
// synthesis, at the scheduler or in a GPU worker's look-ahead) before a GPU
// worker starts proving them, so memory is not filled with partitions that
// wait. 1 synthesizes just in time: partition k+1 while k proves. A partition
// that could never fit (beside the permanent charges and its own key) is
// refused at once. When the head does not fit and warm keys are idle (no
// job uses them), the key cache is asked to evict some (least recently used
// first) before anything else; one held back only by other jobs' keys while
// nothing else is in flight is granted over the budget (logged), so keys
// never deadlock the queue.
//
// Pinned pool: made once (at start, or sized for the first partitions that
// could use it), pinned once, never purged. When the pool can hold a
// partition's witness and a, b, c, the grant carries a pool block for them
// (memory/pinned_pool.hpp) and the reservation covers only the backend's
// working copies; the head of the queue then also waits for a block, never
// overtaken. Blocks come back by message (pool_free) once the partition's
// buffers are gone.
//
// Cancel: a job's queued requests are dropped at once (drop_queued, which answers
// how many); its granted partitions come back through their reservations and
// pool blocks when the stages drop them.
//
// Pacing adapts: it starts at `pacing` and grows by one, up to `max_pacing`,
// each time a GPU worker runs dry while pacing (not memory, not an empty
// queue) held back the next grant. Synthesis slower than proving thus earns
// more partitions in flight, and more synthesizers at work; fast synthesis
// keeps the just-in-time minimum.
//
// Purges: finalizers ask for the arena of a partition's buffers (and their
// own) to be purged once they have freed them; a GPU worker's arena (see
// gpu/worker_arena.hpp) is purged when the worker runs dry. Requests for
// one arena coalesce: the first schedules a purge `purge_delay` later (a
// delayed_send to itself), later ones before it runs only add to its count.
// The purge runs here, on this actor's own thread in production (spawned
// detached), timed, with the thread's name and id recorded, so it never
// runs on a GPU worker's thread and blocks only this actor's mailbox (grants
// and releases wait behind it) and allocations in that one arena.
//
// Synthesizers pull: an idle one sends grant_request and gets a response promise that
// is delivered when a grant is possible; nothing here ever blocks but a purge.
// Synthesizers left idle after a round of grants lend their threads to the
// partitions granted in it (grant::threads), so one large partition is
// synthesized on many cores when nothing else waits.
#pragma once

#include <caf/fwd.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "actors/detail/run_clock.hpp"
#include "memory/pinned_pool.hpp"
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

/// One purge, as an observer sees it (tests, benchmarks, traces).
struct purge_event {
  int arena = -1;
  uint64_t requests = 0;   ///< purge requests it served (coalesced)
  double start_ms = 0;     ///< steady clock, ms since the memory manager started
  double ms = 0;           ///< time arena.<i>.purge took
  uint64_t bytes = 0;      ///< dirty and muzzy bytes of the arena just before
  uint64_t thread_id = 0;  ///< kernel id of the thread it ran on
  std::string thread;      ///< that thread's name
};

struct memory_manager_config {
  /// The ledger and pacing; the memory-system fields below keep their defaults.
  memory_manager_config(uint64_t budget_bytes = 0, uint32_t pacing_limit = 1,
                        uint32_t max_pacing_limit = 1,
                        std::function<void(const grant_event&)> grant_observer = {})
      : budget(budget_bytes),
        pacing(pacing_limit),
        max_pacing(max_pacing_limit),
        on_grant(std::move(grant_observer)) {}

  uint64_t budget = 0;  ///< bytes
  /// The run's time base, for partition_spans::memory (queued, granted).
  run_clock clock;
  uint32_t pacing = 1;      ///< granted partitions not yet being proved, at most (at first)
  uint32_t max_pacing = 1;  ///< ceiling of adaptive pacing; == pacing keeps it fixed
  std::function<void(const grant_event&)> on_grant;  ///< optional observer
  // ---- memory system
  /// Pinned pool capacity, or with pool_partitions its ceiling; 0: no pool
  /// (everything pageable).
  uint64_t pool_bytes = 0;
  /// > 0: the pool is made at the first reservation, sized for this many
  /// partitions of that job's key (their witness and a, b, c), at most
  /// pool_bytes; 0: made at start with pool_bytes. Either way, once.
  uint32_t pool_partitions = 0;
  memory::pinner pinner;    ///< pins the pool; empty: ordinary pages
  uint64_t fixed_bytes = 0;  ///< the backends' fixed host buffers, counted once
  bool purge = true;         ///< false: purge requests are counted, nothing is purged
  /// Coalescing window: requests for one arena within it make one purge.
  /// Zero purges at the next message (deterministic tests).
  std::chrono::milliseconds purge_delay{5};
  /// Spawned detached: names its thread "pl.memory".
  bool own_thread = false;
  /// The GPU workers' arenas (gpu::with_worker_arena): purged when a worker runs
  /// dry, not after every partition, so under a backlog the next partition
  /// reuses the pages without faulting them in again on the worker's thread.
  std::vector<int> worker_arenas;
  std::function<void(const purge_event&)> on_purge;  ///< optional observer
};

/// Spawns the memory manager, detached (on a thread of its own) when cfg.own_thread.
memory_manager_actor spawn_memory_manager(caf::actor_system& sys, memory_manager_config cfg);

}  // namespace proofline
