#include "actors/memory_manager.hpp"

#include <caf/actor_cast.hpp>
#include <caf/send.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/spawn_options.hpp>

#include <algorithm>

#include <spdlog/spdlog.h>

#include "memory/arena.hpp"
#include "memory/process.hpp"
#include "memory/size.hpp"

namespace proofline {

namespace {

using memory::format_bytes;

/// A weak handle to this actor, so reservations and pool blocks never keep it alive.
caf::weak_actor_ptr weak_self(memory_manager_pointer self) {
  return caf::actor_cast<caf::weak_actor_ptr>(self->ctrl());
}

template <class... Ts>
void send_weak(const caf::weak_actor_ptr& weak, Ts&&... xs) {
  if (auto strong = caf::actor_cast<caf::strong_actor_ptr>(weak))
    caf::anon_send(caf::actor_cast<memory_manager_actor>(strong), std::forward<Ts>(xs)...);
}

/// The function a reservation calls to give bytes back: a message to this actor.
memory::reservation::release_fn releaser(memory_manager_pointer self) {
  auto weak = weak_self(self);
  return [weak](uint64_t id, uint64_t bytes, bool final) {
    send_weak(weak, release_atom::value, id, bytes, final);
  };
}

/// Makes the pinned pool of `capacity` bytes and charges it, once.
void make_pool(memory_manager_pointer self, uint64_t capacity) {
  auto& st = self->state;
  auto& cfg = st.cfg;
  st.pool_made = true;
  if (capacity == 0) return;
  if (capacity >= st.ledger->request_limit()) {
    spdlog::error("memory: a pinned pool of {} does not fit a budget of {}; running without one",
                  format_bytes(capacity), format_bytes(st.ledger->budget()));
    return;
  }
  // On its own thread the manager pins the pool on another one: pinning
  // fresh pages is slow (docs/BENCHMARKS.md), and blocks are usable at once
  // (their buffers say unpinned until it is done, so the backend stages them).
  const bool later = cfg.pinner && cfg.own_thread;
  try {
    st.pool = std::make_unique<memory::pinned_pool>(capacity, cfg.pinner, later);
  } catch (const std::exception& e) {
    spdlog::error("memory: {}; running without a pinned pool", e.what());
    return;
  }
  st.ledger->charge(st.next_id++, st.pool->capacity(), true);
  if (later) {
    auto task = st.pool->pin_task();
    auto weak = weak_self(self);
    self->spawn<caf::detached>([task, weak] {
      memory::set_thread_name("pl.pin");
      auto r = task();
      send_weak(weak, pool_pinned_atom::value, r.pinned, r.ms, r.error);
    });
    spdlog::info("memory: pool {}; pinning it on its own thread ({})",
                 format_bytes(st.pool->capacity()), cfg.pinner.name);
    return;
  }
  spdlog::info("memory: {}", st.pool->describe(cfg.pinner.name));
}

/// Charges the fixed buffers, and makes the pool now if its size is fixed.
void set_up_charges(memory_manager_pointer self) {
  auto& st = self->state;
  auto& cfg = st.cfg;
  uint64_t budget = st.ledger->budget();
  if (cfg.fixed_bytes) {
    if (cfg.fixed_bytes >= budget) {
      spdlog::error("memory: the backends' fixed host buffers ({}) exceed the budget ({}); not counted",
                    format_bytes(cfg.fixed_bytes), format_bytes(budget));
    } else {
      st.ledger->charge(st.next_id++, cfg.fixed_bytes, true);
      st.fixed = cfg.fixed_bytes;
    }
  }
  if (cfg.pool_partitions == 0) make_pool(self, cfg.pool_bytes);
}

/// A pool sized by its first partitions: made at the first reservation that
/// could use it, for pool_partitions of them, at most pool_bytes.
void make_pool_for(memory_manager_pointer self, const std::vector<work_order>& orders) {
  auto& st = self->state;
  if (st.pool_made || st.cfg.pool_bytes == 0) return;
  uint64_t largest = 0;
  for (const auto& o : orders) largest = std::max(largest, o.pinnable);
  if (largest == 0) return;
  make_pool(self, std::min<uint64_t>(st.cfg.pool_bytes, largest * st.cfg.pool_partitions));
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

memory_manager_actor::behavior_type memory_manager(memory_manager_pointer self,
                                                   memory_manager_config cfg) {
  self->state.ledger.emplace(cfg.budget);
  if (cfg.pacing == 0) cfg.pacing = 1;
  if (cfg.max_pacing < cfg.pacing) cfg.max_pacing = cfg.pacing;
  self->state.pacing = cfg.pacing;
  self->state.cfg = std::move(cfg);
  if (self->state.cfg.own_thread) memory::set_thread_name("pl.memory");
  set_up_charges(self);
  return {
      [=](reserve_atom, const std::vector<work_order>& orders) { return reserve(self, orders); },
      [=](grant_request_atom) { return pull_work(self); },
      [=](release_atom, uint64_t id, uint64_t bytes, bool final) {
        release(self, id, bytes, final);
      },
      [=](taken_atom, uint64_t id) { mark_taken(self, id); },
      [=](starved_atom) { on_starved(self); },
      [=](purge_atom, int arena) { purge(self, arena); },
      [=](stats_atom) { return stats(self); },
      [=](drop_queued_atom, uint64_t seq) { return cancel_queued(self, seq); },
      [=](key_memory_atom, const std::string& path, uint64_t bytes) {
        key_memory(self, path, bytes);
      },
      [=](key_idle_atom, const std::string& path, bool idle) { key_idle(self, path, idle); },
      [=](attach_atom, const key_cache_actor& keys) { self->state.key_cache = keys; },
      [=](pool_free_atom, uint64_t offset) { pool_free(self, offset); },
      [=](pool_pinned_atom, bool pinned, double ms, const std::string& error) {
        auto& st = self->state;
        if (!st.pool) return;
        st.pool->pin_finished({pinned, ms, error});
        spdlog::info("memory: {}", st.pool->describe(st.cfg.pinner.name));
      },
      [=](purge_due_atom, int arena) { run_purge(self, arena); },
  };
}

std::vector<partition_failure> reserve(memory_manager_pointer self,
                                       const std::vector<work_order>& orders) {
  auto& st = self->state;
  make_pool_for(self, orders);
  std::vector<partition_failure> refused;
  const double queued_ms = st.cfg.clock.now_ms();
  for (const auto& o : orders) {
    uint64_t id = st.next_id++;
    bool pooled = st.pool && o.pinnable > 0 && o.pinnable <= st.pool->capacity();
    uint64_t bytes = pooled ? o.working : o.bytes;
    uint64_t key_bytes = 0;
    if (auto k = st.keys.find(o.part.job->spec.zkey); k != st.keys.end()) key_bytes = k->second.bytes;
    bool fits = bytes + key_bytes <= st.ledger->request_limit();
    if (fits && st.ledger->submit(id, o.part.order(), bytes)) {
      st.waiting.emplace(id, o).first->second.part.spans.memory.start = queued_ms;
      if (pooled) st.pooled.emplace(id, o.pinnable);
      continue;
    }
    partition_failure f;
    f.job_seq = o.part.job->seq;
    f.index = o.part.index;
    f.spans = o.part.spans;
    const auto& zkey = o.part.job->spec.zkey;
    f.error = {zkey, zkey + ": " + memory::refusal_message(bytes, key_bytes, st.ledger->budget(),
                                                           st.ledger->permanent())};
    refused.push_back(std::move(f));
  }
  try_grant(self);
  return refused;
}

caf::result<grant> pull_work(memory_manager_pointer self) {
  auto rp = self->make_response_promise<grant>();
  self->state.idle.push_back(rp);
  try_grant(self);
  return rp;
}

void try_grant(memory_manager_pointer self) {
  auto& st = self->state;
  st.pacing_blocked = false;
  std::vector<std::pair<caf::typed_response_promise<grant>, grant>> granted;
  while (!st.idle.empty()) {
    auto head = st.ledger->head();
    if (!head) break;
    if (st.untaken.size() >= st.pacing) {
      st.pacing_blocked = st.ledger->head_fits();
      break;
    }
    // Over the budget only as a last resort: nothing is in flight, so nothing
    // but other jobs' keys (released only after this job) holds the budget.
    bool over = false;
    if (!st.ledger->head_fits()) {
      if (ask_key_room(self)) break;  // idle warm keys go first
      bool idle_pipeline = st.live.empty() && (!st.pool || st.pool->blocks() == 0);
      if (!idle_pipeline || st.keys.empty()) break;
      over = true;
    }
    memory::block_ptr block;
    if (auto p = st.pooled.find(head->id); p != st.pooled.end()) {
      auto weak = weak_self(self);
      block = st.pool->take(p->second, [weak](std::size_t offset) {
        send_weak(weak, pool_free_atom::value, static_cast<uint64_t>(offset));
      });
      if (!block) break;  // the head waits for the pool; nothing overtakes it
    }
    auto g = st.ledger->grant_next(over);
    if (!g) break;  // (cannot happen: checked above) the block goes back by message
    st.pooled.erase(g->id);
    if (over)
      spdlog::warn("memory: granting {} over the budget: proving keys of waiting jobs hold {} of {}",
                   format_bytes(g->bytes), format_bytes(st.ledger->reserved() - g->bytes),
                   format_bytes(st.ledger->budget()));
    auto node = st.waiting.extract(g->id);
    grant out;
    out.part = std::move(node.mapped().part);
    out.bulk = block ? 0 : node.mapped().bulk;  // a pooled partition's inputs stay until finalize
    out.block = std::move(block);
    out.reservation = std::make_shared<memory::reservation>(g->id, g->bytes, releaser(self));
    out.part.ticket = ++st.grants;
    out.part.spans.memory.end = st.cfg.clock.now_ms();
    st.untaken.insert(g->id);
    st.live.insert(g->id);
    if (spdlog::should_log(spdlog::level::debug))
      spdlog::debug("memory: grant {} partition {}: {}{} ({} of {} reserved)",
                    out.part.job->spec.id, out.part.index, format_bytes(g->bytes),
                    out.block ? " + pool block " + format_bytes(out.block->bytes()) : "",
                    format_bytes(st.ledger->reserved()), format_bytes(st.ledger->budget()));
    if (st.cfg.on_grant)
      st.cfg.on_grant(
          {out.part.job->seq, out.part.index, out.part.witness(), g->bytes, st.ledger->reserved()});
    granted.emplace_back(std::move(st.idle.front()), std::move(out));
    st.idle.pop_front();
  }
  // Synthesizers still idle lend their cores to the partitions just granted.
  const size_t spare = st.idle.size();
  for (size_t i = 0; i < granted.size(); ++i) {
    auto& [rp, out] = granted[i];
    out.threads = static_cast<uint32_t>(1 + spare / granted.size() + (i < spare % granted.size()));
    rp.deliver(std::move(out));
  }
}

void release(memory_manager_pointer self, uint64_t id, uint64_t bytes, bool final) {
  auto& st = self->state;
  if (final) {
    st.ledger->release_all(id);
    st.untaken.erase(id);
    st.live.erase(id);
  } else {
    st.ledger->release(id, bytes);
  }
  try_grant(self);
}

void mark_taken(memory_manager_pointer self, uint64_t id) {
  self->state.untaken.erase(id);
  try_grant(self);
}

void on_starved(memory_manager_pointer self) {
  auto& st = self->state;
  // The worker ran dry: its arena's dirty pages (the last partition's working
  // copies) are no longer about to be reused; return them.
  for (int arena : st.cfg.worker_arenas) schedule_purge(self, arena);
  if (!st.pacing_blocked || st.pacing >= st.cfg.max_pacing) return;
  ++st.pacing;
  spdlog::debug("memory: a GPU worker ran dry while pacing held synthesis back; pacing {} -> {}",
                st.pacing - 1, st.pacing);
  try_grant(self);
}

void purge(memory_manager_pointer self, int arena) {
  ++self->state.purges;
  schedule_purge(self, arena);
}

void schedule_purge(memory_manager_pointer self, int arena) {
  auto& st = self->state;
  // -1 is the process heap (and the pool, which is never purged).
  if (arena < 0 || !st.cfg.purge) return;
  auto [it, first] = st.purge_pending.emplace(arena, 0);
  ++it->second;
  if (!first) return;  // coalesced into the purge already scheduled
  if (st.cfg.purge_delay.count() > 0)
    self->delayed_send(self, st.cfg.purge_delay, purge_due_atom::value, arena);
  else
    self->send(self, purge_due_atom::value, arena);
}

void run_purge(memory_manager_pointer self, int arena) {
  auto& st = self->state;
  auto pending = st.purge_pending.find(arena);
  if (pending == st.purge_pending.end()) return;
  purge_event e;
  e.arena = arena;
  e.requests = pending->second;
  st.purge_pending.erase(pending);
  if (auto before = memory::read_arena_stats(static_cast<unsigned>(arena)))
    e.bytes = before->dirty + before->muzzy;
  auto t0 = std::chrono::steady_clock::now();
  e.start_ms = std::chrono::duration<double, std::milli>(t0 - st.started).count();
  bool ok = memory::purge_arena(static_cast<unsigned>(arena));
  e.ms = ms_since(t0);
  e.thread_id = memory::thread_id();
  e.thread = memory::thread_name();
  if (!ok) {
    spdlog::debug("memory: arena {} could not be purged (no jemalloc, or destroyed)", arena);
    return;
  }
  ++st.purges_run;
  st.purge_ms_total += e.ms;
  st.purge_ms_max = std::max(st.purge_ms_max, e.ms);
  st.purged_bytes += e.bytes;
  st.purge_threads.insert(e.thread);
  st.purge_thread_ids.insert(e.thread_id);
  spdlog::debug("memory: purged arena {} ({} request(s)): {} in {:.2f} ms on thread {} ({})", arena,
                e.requests, format_bytes(e.bytes), e.ms, e.thread, e.thread_id);
  if (st.cfg.on_purge) st.cfg.on_purge(e);
}

uint64_t cancel_queued(memory_manager_pointer self, uint64_t seq) {
  auto& st = self->state;
  uint64_t dropped = 0;
  for (auto it = st.waiting.begin(); it != st.waiting.end();) {
    if (it->second.part.job->seq != seq) {
      ++it;
      continue;
    }
    st.ledger->cancel(it->first);
    st.pooled.erase(it->first);
    it = st.waiting.erase(it);
    ++dropped;
  }
  st.cancelled += dropped;
  if (dropped) spdlog::debug("memory: job #{} cancelled: {} queued partition(s) dropped", seq, dropped);
  try_grant(self);  // the head may have changed
  return dropped;
}

void pool_free(memory_manager_pointer self, uint64_t offset) {
  if (self->state.pool) self->state.pool->give_back(offset);
  try_grant(self);
}

memory_stats stats(memory_manager_pointer self) {
  const auto& st = self->state;
  memory_stats s;
  s.budget = st.ledger->budget();
  s.reserved = st.ledger->reserved();
  s.peak_reserved = st.ledger->peak_reserved();
  s.queued = st.ledger->queued();
  s.reservations = st.ledger->reservations();
  s.untaken = st.untaken.size();
  s.pacing = st.pacing;
  s.grants = st.grants;
  s.purges = st.purges;
  s.keys = st.key_bytes;
  s.peak_keys = st.peak_key_bytes;
  if (st.pool) {
    s.pool = st.pool->capacity();
    s.pool_pinned = st.pool->pinned();
    s.pool_used = st.pool->used();
    s.pool_pin_ms = st.pool->pin_ms();
  }
  s.fixed = st.fixed;
  s.rss = memory::current_rss();
  s.peak_rss = memory::peak_rss();
  s.purges_run = st.purges_run;
  s.purge_ms_total = st.purge_ms_total;
  s.purge_ms_max = st.purge_ms_max;
  s.purged_bytes = st.purged_bytes;
  s.purge_threads.assign(st.purge_threads.begin(), st.purge_threads.end());
  s.purge_thread_ids.assign(st.purge_thread_ids.begin(), st.purge_thread_ids.end());
  s.cancelled = st.cancelled;
  return s;
}

}  // namespace proofline
