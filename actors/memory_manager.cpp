// The memory manager actor (actors/memory_manager.hpp says what it does): its
// state class owns the handlers, the ledger, the pinned pool, the proving
// keys' charges and the purges.
#include "actors/memory_manager.hpp"

#include "actors/detail/spawn.hpp"

#include <caf/actor_cast.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>
#include <caf/spawn_options.hpp>
#include <caf/typed_response_promise.hpp>

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <spdlog/spdlog.h>

#include "memory/arena.hpp"
#include "memory/ledger.hpp"
#include "memory/pinned_pool.hpp"
#include "memory/process.hpp"
#include "memory/size.hpp"

namespace proofline {

namespace {

using memory::format_bytes;

template <class... Ts>
void send_weak(const caf::weak_actor_ptr& weak, Ts&&... xs) {
  if (auto strong = caf::actor_cast<caf::strong_actor_ptr>(weak))
    caf::anon_send(caf::actor_cast<memory_manager_actor>(strong), std::forward<Ts>(xs)...);
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

/// A proving key's charge in the ledger.
struct key_charge {
  uint64_t id = 0;
  uint64_t bytes = 0;
  bool idle = false;  ///< no job uses it: the key cache may evict it
};

class memory_manager_state {
 public:
  static inline const char* name = "memory_manager";
  using pointer = memory_manager_actor::stateful_pointer<memory_manager_state>;

  explicit memory_manager_state(pointer self) : self(self) {}

  memory_manager_actor::behavior_type make_behavior(memory_manager_config config);

 private:
  // ---- handlers
  /// Queues the orders; returns those that could never be granted.
  std::vector<partition_failure> reserve(const std::vector<work_order>& orders);
  /// Registers an idle synthesizer; the promise is delivered by try_grant.
  caf::result<grant> pull_work();
  void release(uint64_t id, uint64_t bytes, bool final);
  void mark_taken(uint64_t id);
  /// A GPU worker ran dry: widens pacing by one if pacing held synthesis back.
  void on_starved();
  /// A purge request: counts it and schedules the arena's coalesced purge.
  void purge(int arena);
  /// Runs the arena's purge now (the timer fired).
  void run_purge(int arena);
  /// Drops job `seq`'s queued requests; returns how many.
  uint64_t cancel_queued(uint64_t seq);
  /// A pool block is free again.
  void pool_free(uint64_t offset);
  /// Pinning the pool finished on its own thread.
  void pool_pinned(bool pinned, double ms, const std::string& error);
  memory_stats stats() const;
  // ---- proving keys in the budget
  /// Charges (bytes > 0) or releases (0) the key at `path`.
  void key_memory(const std::string& path, uint64_t bytes);
  /// Marks the key at `path` idle (evictable) or in use.
  void key_idle(const std::string& path, bool idle);

  // ---- helpers
  /// Grants to idle synthesizers while the ledger's head fits (and its pool
  /// block, if it has one) and pacing allows.
  void try_grant();
  /// The head does not fit: asks the key cache to evict idle keys for it.
  /// Returns true while such a request is outstanding (the head then waits).
  bool ask_key_room();
  /// Schedules the arena's purge `purge_delay` from now unless one is pending.
  void schedule_purge(int arena);
  /// Charges the fixed buffers, and makes the pool now if its size is fixed.
  void set_up_charges();
  /// Makes the pinned pool of `capacity` bytes and charges it, once.
  void make_pool(uint64_t capacity);
  /// A pool sized by its first partitions: made at the first reservation that
  /// could use it, for pool_partitions of them, at most pool_bytes.
  void make_pool_for(const std::vector<work_order>& orders);
  /// A weak handle to this actor, so reservations and pool blocks never keep it alive.
  caf::weak_actor_ptr weak_self() const;
  /// The function a reservation calls to give bytes back: a message to this actor.
  memory::reservation::release_fn releaser() const;

  // ---- data
  pointer self;
  memory_manager_config cfg;
  std::optional<memory::ledger> ledger;
  uint64_t next_id = 1;
  std::unordered_map<uint64_t, work_order> waiting;     // queued in the ledger, by id
  std::unordered_map<uint64_t, uint64_t> pooled;        // queued ids placed in the pool: block bytes
  std::deque<caf::typed_response_promise<grant>> idle;  // synthesizers waiting for work
  std::unordered_set<uint64_t> untaken;                 // granted, not yet being proved
  std::unordered_set<uint64_t> live;                    // granted, not yet released in full
  uint32_t pacing = 1;          // current limit on granted, untaken partitions
  bool pacing_blocked = false;  // the last try_grant stopped on pacing alone
  uint64_t grants = 0;
  uint64_t purges = 0;  // requests received
  uint64_t cancelled = 0;
  // memory system
  std::unique_ptr<memory::pinned_pool> pool;
  bool pool_made = false;  // tried once; never again
  uint64_t fixed = 0;
  std::map<std::string, key_charge> keys;  // by path
  uint64_t key_bytes = 0;                  // sum over keys
  uint64_t peak_key_bytes = 0;
  key_cache_actor key_cache;  // asked for room when idle keys hold the budget
  bool room_asked = false;    // an evict request is outstanding
  std::unordered_map<int, uint64_t> purge_pending;  // arena -> requests waiting for its purge
  uint64_t purges_run = 0;
  double purge_ms_total = 0;
  double purge_ms_max = 0;
  uint64_t purged_bytes = 0;
  std::set<std::string> purge_threads;
  std::set<uint64_t> purge_thread_ids;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
};

caf::weak_actor_ptr memory_manager_state::weak_self() const {
  return caf::actor_cast<caf::weak_actor_ptr>(self->ctrl());
}

memory::reservation::release_fn memory_manager_state::releaser() const {
  auto weak = weak_self();
  return [weak](uint64_t id, uint64_t bytes, bool final) {
    send_weak(weak, release_atom::value, id, bytes, final);
  };
}

void memory_manager_state::make_pool(uint64_t capacity) {
  pool_made = true;
  if (capacity == 0) return;
  if (capacity >= ledger->request_limit()) {
    spdlog::error("memory: a pinned pool of {} does not fit a budget of {}; running without one",
                  format_bytes(capacity), format_bytes(ledger->budget()));
    return;
  }
  // On its own thread the manager pins the pool on another one: pinning
  // fresh pages is slow (docs/BENCHMARKS.md), and blocks are usable at once
  // (their buffers say unpinned until it is done, so the backend stages them).
  const bool later = cfg.pinner && cfg.own_thread;
  try {
    pool = std::make_unique<memory::pinned_pool>(capacity, cfg.pinner, later);
  } catch (const std::exception& e) {
    spdlog::error("memory: {}; running without a pinned pool", e.what());
    return;
  }
  ledger->charge(next_id++, pool->capacity(), true);
  if (later) {
    auto task = pool->pin_task();
    auto weak = weak_self();
    self->spawn<caf::detached>([task, weak] {
      memory::set_thread_name("pl.pin");
      auto r = task();
      send_weak(weak, pool_pinned_atom::value, r.pinned, r.ms, r.error);
    });
    spdlog::info("memory: pool {}; pinning it on its own thread ({})",
                 format_bytes(pool->capacity()), cfg.pinner.name);
    return;
  }
  spdlog::info("memory: {}", pool->describe(cfg.pinner.name));
}

void memory_manager_state::set_up_charges() {
  uint64_t budget = ledger->budget();
  if (cfg.fixed_bytes) {
    if (cfg.fixed_bytes >= budget) {
      spdlog::error("memory: the backends' fixed host buffers ({}) exceed the budget ({}); not counted",
                    format_bytes(cfg.fixed_bytes), format_bytes(budget));
    } else {
      ledger->charge(next_id++, cfg.fixed_bytes, true);
      fixed = cfg.fixed_bytes;
    }
  }
  if (cfg.pool_partitions == 0) make_pool(cfg.pool_bytes);
}

void memory_manager_state::make_pool_for(const std::vector<work_order>& orders) {
  if (pool_made || cfg.pool_bytes == 0) return;
  uint64_t largest = 0;
  for (const auto& o : orders) largest = std::max(largest, o.pinnable);
  if (largest == 0) return;
  make_pool(std::min<uint64_t>(cfg.pool_bytes, largest * cfg.pool_partitions));
}

memory_manager_actor::behavior_type memory_manager_state::make_behavior(
    memory_manager_config config) {
  ledger.emplace(config.budget);
  if (config.pacing == 0) config.pacing = 1;
  if (config.max_pacing < config.pacing) config.max_pacing = config.pacing;
  pacing = config.pacing;
  cfg = std::move(config);
  if (cfg.own_thread) memory::set_thread_name("pl.memory");
  set_up_charges();
  return {
      [this](reserve_atom, const std::vector<work_order>& orders) { return reserve(orders); },
      [this](grant_request_atom) { return pull_work(); },
      [this](release_atom, uint64_t id, uint64_t bytes, bool final) { release(id, bytes, final); },
      [this](taken_atom, uint64_t id) { mark_taken(id); },
      [this](starved_atom) { on_starved(); },
      [this](purge_atom, int arena) { purge(arena); },
      [this](stats_atom) { return stats(); },
      [this](drop_queued_atom, uint64_t seq) { return cancel_queued(seq); },
      [this](key_memory_atom, const std::string& path, uint64_t bytes) { key_memory(path, bytes); },
      [this](key_idle_atom, const std::string& path, bool now_idle) { key_idle(path, now_idle); },
      [this](attach_atom, const key_cache_actor& k) { key_cache = k; },
      [this](pool_free_atom, uint64_t offset) { pool_free(offset); },
      [this](pool_pinned_atom, bool pinned, double ms, const std::string& error) {
        pool_pinned(pinned, ms, error);
      },
      [this](purge_due_atom, int arena) { run_purge(arena); },
  };
}

void memory_manager_state::pool_pinned(bool pinned, double ms, const std::string& error) {
  if (!pool) return;
  pool->pin_finished({pinned, ms, error});
  spdlog::info("memory: {}", pool->describe(cfg.pinner.name));
}

std::vector<partition_failure> memory_manager_state::reserve(
    const std::vector<work_order>& orders) {
  make_pool_for(orders);
  std::vector<partition_failure> refused;
  const double queued_ms = cfg.clock.now_ms();
  for (const auto& o : orders) {
    uint64_t id = next_id++;
    bool in_pool = pool && o.pinnable > 0 && o.pinnable <= pool->capacity();
    uint64_t bytes = in_pool ? o.working : o.bytes;
    uint64_t key_bytes = 0;
    if (auto k = keys.find(o.part.job->spec.zkey); k != keys.end()) key_bytes = k->second.bytes;
    bool fits = bytes + key_bytes <= ledger->request_limit();
    if (fits && ledger->submit(id, o.part.order(), bytes)) {
      waiting.emplace(id, o).first->second.part.spans.memory.start = queued_ms;
      if (in_pool) pooled.emplace(id, o.pinnable);
      continue;
    }
    partition_failure f;
    f.job_seq = o.part.job->seq;
    f.index = o.part.index;
    f.spans = o.part.spans;
    const auto& zkey = o.part.job->spec.zkey;
    f.error = {zkey, zkey + ": " + memory::refusal_message(bytes, key_bytes, ledger->budget(),
                                                           ledger->permanent())};
    refused.push_back(std::move(f));
  }
  try_grant();
  return refused;
}

caf::result<grant> memory_manager_state::pull_work() {
  auto rp = self->make_response_promise<grant>();
  idle.push_back(rp);
  try_grant();
  return rp;
}

void memory_manager_state::try_grant() {
  pacing_blocked = false;
  std::vector<std::pair<caf::typed_response_promise<grant>, grant>> granted;
  while (!idle.empty()) {
    auto head = ledger->head();
    if (!head) break;
    if (untaken.size() >= pacing) {
      pacing_blocked = ledger->head_fits();
      break;
    }
    // Over the budget only as a last resort: nothing is in flight, so nothing
    // but other jobs' keys (released only after this job) holds the budget.
    bool over = false;
    if (!ledger->head_fits()) {
      if (ask_key_room()) break;  // idle warm keys go first
      bool idle_pipeline = live.empty() && (!pool || pool->blocks() == 0);
      if (!idle_pipeline || keys.empty()) break;
      over = true;
    }
    memory::block_ptr block;
    if (auto p = pooled.find(head->id); p != pooled.end()) {
      auto weak = weak_self();
      block = pool->take(p->second, [weak](std::size_t offset) {
        send_weak(weak, pool_free_atom::value, static_cast<uint64_t>(offset));
      });
      if (!block) break;  // the head waits for the pool; nothing overtakes it
    }
    auto g = ledger->grant_next(over);
    if (!g) break;  // (cannot happen: checked above) the block goes back by message
    pooled.erase(g->id);
    if (over)
      spdlog::warn("memory: granting {} over the budget: proving keys of waiting jobs hold {} of {}",
                   format_bytes(g->bytes), format_bytes(ledger->reserved() - g->bytes),
                   format_bytes(ledger->budget()));
    auto node = waiting.extract(g->id);
    grant out;
    out.part = std::move(node.mapped().part);
    out.bulk = block ? 0 : node.mapped().bulk;  // a pooled partition's inputs stay until finalize
    out.block = std::move(block);
    out.reservation = std::make_shared<memory::reservation>(g->id, g->bytes, releaser());
    out.part.ticket = ++grants;
    out.part.spans.memory.end = cfg.clock.now_ms();
    untaken.insert(g->id);
    live.insert(g->id);
    if (spdlog::should_log(spdlog::level::debug))
      spdlog::debug("memory: grant {} partition {}: {}{} ({} of {} reserved)",
                    out.part.job->spec.id, out.part.index, format_bytes(g->bytes),
                    out.block ? " + pool block " + format_bytes(out.block->bytes()) : "",
                    format_bytes(ledger->reserved()), format_bytes(ledger->budget()));
    if (cfg.on_grant)
      cfg.on_grant(
          {out.part.job->seq, out.part.index, out.part.witness(), g->bytes, ledger->reserved()});
    granted.emplace_back(std::move(idle.front()), std::move(out));
    idle.pop_front();
  }
  // Synthesizers still idle lend their cores to the partitions just granted.
  const size_t spare = idle.size();
  for (size_t i = 0; i < granted.size(); ++i) {
    auto& [rp, out] = granted[i];
    out.threads = static_cast<uint32_t>(1 + spare / granted.size() + (i < spare % granted.size()));
    rp.deliver(std::move(out));
  }
}

void memory_manager_state::release(uint64_t id, uint64_t bytes, bool final) {
  if (final) {
    ledger->release_all(id);
    untaken.erase(id);
    live.erase(id);
  } else {
    ledger->release(id, bytes);
  }
  try_grant();
}

void memory_manager_state::mark_taken(uint64_t id) {
  untaken.erase(id);
  try_grant();
}

void memory_manager_state::on_starved() {
  // The worker ran dry: its arena's dirty pages (the last partition's working
  // copies) are no longer about to be reused; return them.
  for (int arena : cfg.worker_arenas) schedule_purge(arena);
  if (!pacing_blocked || pacing >= cfg.max_pacing) return;
  ++pacing;
  spdlog::debug("memory: a GPU worker ran dry while pacing held synthesis back; pacing {} -> {}",
                pacing - 1, pacing);
  try_grant();
}

void memory_manager_state::purge(int arena) {
  ++purges;
  schedule_purge(arena);
}

void memory_manager_state::schedule_purge(int arena) {
  // -1 is the process heap (and the pool, which is never purged).
  if (arena < 0 || !cfg.purge) return;
  auto [it, first] = purge_pending.emplace(arena, 0);
  ++it->second;
  if (!first) return;  // coalesced into the purge already scheduled
  if (cfg.purge_delay.count() > 0)
    self->delayed_send(self, cfg.purge_delay, purge_due_atom::value, arena);
  else
    self->send(self, purge_due_atom::value, arena);
}

void memory_manager_state::run_purge(int arena) {
  auto pending = purge_pending.find(arena);
  if (pending == purge_pending.end()) return;
  purge_event e;
  e.arena = arena;
  e.requests = pending->second;
  purge_pending.erase(pending);
  if (auto before = memory::read_arena_stats(static_cast<unsigned>(arena)))
    e.bytes = before->dirty + before->muzzy;
  auto t0 = std::chrono::steady_clock::now();
  e.start_ms = std::chrono::duration<double, std::milli>(t0 - started).count();
  bool ok = memory::purge_arena(static_cast<unsigned>(arena));
  e.ms = ms_since(t0);
  e.thread_id = memory::thread_id();
  e.thread = memory::thread_name();
  if (!ok) {
    spdlog::debug("memory: arena {} could not be purged (no jemalloc, or destroyed)", arena);
    return;
  }
  ++purges_run;
  purge_ms_total += e.ms;
  purge_ms_max = std::max(purge_ms_max, e.ms);
  purged_bytes += e.bytes;
  purge_threads.insert(e.thread);
  purge_thread_ids.insert(e.thread_id);
  spdlog::debug("memory: purged arena {} ({} request(s)): {} in {:.2f} ms on thread {} ({})", arena,
                e.requests, format_bytes(e.bytes), e.ms, e.thread, e.thread_id);
  if (cfg.on_purge) cfg.on_purge(e);
}

uint64_t memory_manager_state::cancel_queued(uint64_t seq) {
  uint64_t dropped = 0;
  for (auto it = waiting.begin(); it != waiting.end();) {
    if (it->second.part.job->seq != seq) {
      ++it;
      continue;
    }
    ledger->cancel(it->first);
    pooled.erase(it->first);
    it = waiting.erase(it);
    ++dropped;
  }
  cancelled += dropped;
  if (dropped) spdlog::debug("memory: job #{} cancelled: {} queued partition(s) dropped", seq, dropped);
  try_grant();  // the head may have changed
  return dropped;
}

void memory_manager_state::pool_free(uint64_t offset) {
  if (pool) pool->give_back(offset);
  try_grant();
}

memory_stats memory_manager_state::stats() const {
  memory_stats s;
  s.budget = ledger->budget();
  s.reserved = ledger->reserved();
  s.peak_reserved = ledger->peak_reserved();
  s.queued = ledger->queued();
  s.reservations = ledger->reservations();
  s.untaken = untaken.size();
  s.pacing = pacing;
  s.grants = grants;
  s.purges = purges;
  s.keys = key_bytes;
  s.peak_keys = peak_key_bytes;
  if (pool) {
    s.pool = pool->capacity();
    s.pool_pinned = pool->pinned();
    s.pool_used = pool->used();
    s.pool_pin_ms = pool->pin_ms();
  }
  s.fixed = fixed;
  s.rss = memory::current_rss();
  s.peak_rss = memory::peak_rss();
  s.purges_run = purges_run;
  s.purge_ms_total = purge_ms_total;
  s.purge_ms_max = purge_ms_max;
  s.purged_bytes = purged_bytes;
  s.purge_threads.assign(purge_threads.begin(), purge_threads.end());
  s.purge_thread_ids.assign(purge_thread_ids.begin(), purge_thread_ids.end());
  s.cancelled = cancelled;
  return s;
}

// ---- proving keys in the budget: a loaded key's host bytes are charged to
// the ledger like a partition's (the key cache reports them), and an idle
// warm key may be evicted, by a request to the key cache, to make room for
// the ledger's head.

void memory_manager_state::key_memory(const std::string& path, uint64_t bytes) {
  bool idle = false;
  if (auto it = keys.find(path); it != keys.end()) {
    idle = it->second.idle;
    ledger->release_all(it->second.id);
    key_bytes -= it->second.bytes;
    keys.erase(it);
  }
  if (bytes > 0) {
    uint64_t id = next_id++;
    ledger->charge(id, bytes);
    keys.emplace(path, key_charge{id, bytes, idle});
    key_bytes += bytes;
    peak_key_bytes = std::max(peak_key_bytes, key_bytes);
    if (ledger->reserved() > ledger->budget())
      spdlog::warn("memory: proving key {} ({}) takes the reservations to {} of {}: grants wait",
                   path, format_bytes(bytes), format_bytes(ledger->reserved()),
                   format_bytes(ledger->budget()));
    else
      spdlog::debug("memory: proving key {} holds {}", path, format_bytes(bytes));
  }
  try_grant();
}

void memory_manager_state::key_idle(const std::string& path, bool idle) {
  auto it = keys.find(path);
  if (it == keys.end()) return;
  it->second.idle = idle;
  if (idle) try_grant();
}

bool memory_manager_state::ask_key_room() {
  if (room_asked) return true;
  if (!key_cache) return false;
  uint64_t idle_bytes = 0;
  for (const auto& [path, k] : keys)
    if (k.idle) idle_bytes += k.bytes;
  auto head = ledger->head();
  if (idle_bytes == 0 || !head) return false;
  uint64_t room = ledger->budget() > ledger->reserved()
                      ? ledger->budget() - ledger->reserved()
                      : 0;
  uint64_t need = head->bytes > room ? head->bytes - room : 1;
  room_asked = true;
  spdlog::debug("memory: {} more needed for the next partition; asking to evict idle keys",
                format_bytes(need));
  // The cache's key_memory messages for what it evicts arrive before its reply.
  self->request(key_cache, caf::infinite, evict_bytes_atom::value, need)
      .then(
          [=](uint64_t) {
            room_asked = false;
            try_grant();
          },
          [=](caf::error&) {
            room_asked = false;
            key_cache = nullptr;  // gone: shutting down
          });
  return true;
}

}  // namespace

memory_manager_actor spawn_memory_manager(caf::actor_system& sys, memory_manager_config cfg) {
  const bool on_own_thread = cfg.own_thread;
  return spawn_stateful<memory_manager_state>(sys, std::move(cfg), on_own_thread);
}

}  // namespace proofline
