#include "actors/memory_manager.hpp"

#include <caf/actor_cast.hpp>
#include <caf/send.hpp>

#include <spdlog/spdlog.h>

#include "memory/size.hpp"

namespace proofline {

memory_manager_actor::behavior_type memory_manager(memory_manager_pointer self,
                                                   memory_manager_config cfg) {
  self->state.ledger.emplace(cfg.budget);
  if (cfg.pacing == 0) cfg.pacing = 1;
  if (cfg.max_pacing < cfg.pacing) cfg.max_pacing = cfg.pacing;
  self->state.pacing = cfg.pacing;
  self->state.cfg = std::move(cfg);
  return {
      [=](reserve_atom, const std::vector<work_order>& orders) { return reserve(self, orders); },
      [=](pull_atom) { return pull_work(self); },
      [=](release_atom, uint64_t id, uint64_t bytes, bool final) {
        release(self, id, bytes, final);
      },
      [=](taken_atom, uint64_t id) { mark_taken(self, id); },
      [=](starved_atom) { on_starved(self); },
      [=](purge_atom, int arena) { purge(self, arena); },
      [=](stats_atom) { return stats(self); },
  };
}

std::vector<partition_failure> reserve(memory_manager_pointer self,
                                       const std::vector<work_order>& orders) {
  auto& st = self->state;
  std::vector<partition_failure> refused;
  for (const auto& o : orders) {
    uint64_t id = st.next_id++;
    if (st.ledger->submit(id, o.part.order(), o.bytes)) {
      st.waiting.emplace(id, o);
    } else {
      partition_failure f;
      f.job_seq = o.part.job->seq;
      f.index = o.part.index;
      f.spans = o.part.spans;
      const std::string& zkey = o.part.job->spec.zkey;
      f.error = {zkey, zkey + ": " + memory::too_large_message(o.bytes, st.ledger->budget())};
      refused.push_back(std::move(f));
    }
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

namespace {

/// The function a reservation calls to give bytes back: a message to this
/// actor, through a weak handle so reservations never keep it alive.
memory::reservation::release_fn releaser(memory_manager_pointer self) {
  caf::weak_actor_ptr weak = caf::actor_cast<caf::weak_actor_ptr>(self->ctrl());
  return [weak](uint64_t id, uint64_t bytes, bool final) {
    if (auto strong = caf::actor_cast<caf::strong_actor_ptr>(weak))
      caf::anon_send(caf::actor_cast<memory_manager_actor>(strong), release_atom::value, id, bytes,
                     final);
  };
}

}  // namespace

void try_grant(memory_manager_pointer self) {
  auto& st = self->state;
  st.pacing_blocked = false;
  while (!st.idle.empty()) {
    if (st.untaken.size() >= st.pacing) {
      auto head = st.ledger->head_bytes();
      st.pacing_blocked = head && st.ledger->reserved() + *head <= st.ledger->budget();
      break;
    }
    auto g = st.ledger->grant_next();
    if (!g) break;
    auto node = st.waiting.extract(g->id);
    grant out;
    out.part = std::move(node.mapped().part);
    out.bulk = node.mapped().bulk;
    out.reservation = std::make_shared<memory::reservation>(g->id, g->bytes, releaser(self));
    out.part.ticket = ++st.grants;
    st.untaken.insert(g->id);
    if (spdlog::should_log(spdlog::level::debug))
      spdlog::debug("memory: grant {} partition {}: {} ({} of {} reserved)", out.part.job->spec.id,
                    out.part.index, memory::format_bytes(g->bytes),
                    memory::format_bytes(st.ledger->reserved()),
                    memory::format_bytes(st.ledger->budget()));
    if (st.cfg.on_grant)
      st.cfg.on_grant(
          {out.part.job->seq, out.part.index, out.part.witness(), g->bytes, st.ledger->reserved()});
    auto rp = std::move(st.idle.front());
    st.idle.pop_front();
    rp.deliver(std::move(out));
  }
}

void release(memory_manager_pointer self, uint64_t id, uint64_t bytes, bool final) {
  auto& st = self->state;
  if (final) {
    st.ledger->release_all(id);
    st.untaken.erase(id);
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
  if (!st.pacing_blocked || st.pacing >= st.cfg.max_pacing) return;
  ++st.pacing;
  spdlog::debug("memory: a GPU worker ran dry while pacing held synthesis back; pacing {} -> {}",
                st.pacing - 1, st.pacing);
  try_grant(self);
}

void purge(memory_manager_pointer self, int arena) {
  ++self->state.purges;
  spdlog::debug("memory: purge request for arena {} (#{})", arena, self->state.purges);
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
  return s;
}

}  // namespace proofline
