#include "actors/scheduler.hpp"

#include <caf/event_based_actor.hpp>

namespace proofline {

scheduler_actor::behavior_type scheduler(scheduler_pointer self) {
  return placing_scheduler(self, scheduler_config{});
}

scheduler_actor::behavior_type placing_scheduler(scheduler_pointer self, scheduler_config cfg) {
  self->state.cfg = cfg;
  return {
      [=](ready_atom, const synthesized_partition& p) { on_ready(self, p); },
      [=](skip_atom, uint64_t ticket) { on_skip(self, ticket); },
      [=](pull_atom) { return on_pull(self, 0); },
      [=](pull_atom, int32_t device) { return on_pull(self, device); },
      [=](lost_atom, int32_t device) { on_lost(self, device); },
      [=](stats_atom) { return queue_stats(self); },
  };
}

bool may_take(scheduler_pointer self, const placement& where, int32_t device) {
  const auto& st = self->state;
  const int32_t fallback = st.cfg.fallback_index();
  const int32_t total = st.cfg.devices + (st.cfg.fallback ? 1 : 0);
  auto live = [&](int32_t d) { return st.lost.count(d) == 0; };
  auto admitted = [&](auto&& rule) {
    for (int32_t d = 0; d < total; ++d)
      if (d == device && rule(d)) return true;
    return false;
  };
  auto any_of = [&](auto&& rule) {
    for (int32_t d = 0; d < total; ++d)
      if (rule(d)) return true;
    return false;
  };
  // Where the placement allows, among the backends still usable.
  auto placed = [&](int32_t d) { return where.admits(d, fallback) && live(d); };
  if (any_of(placed)) return admitted(placed);
  // Its backends are lost: the other primary backends, then the fallback.
  const int32_t gone = where.device;
  auto others = [&](int32_t d) { return d != fallback && d != gone && live(d); };
  if (any_of(others)) return admitted(others);
  if (fallback >= 0 && live(fallback)) return device == fallback;
  // Nothing usable is left: the placement as it was, so the job ends.
  return admitted([&](int32_t d) { return where.admits(d, fallback); });
}

void see_ticket(scheduler_pointer self, uint64_t ticket) {
  auto& st = self->state;
  if (ticket < st.next_ticket) return;  // untracked (0) or already seen
  st.seen_ahead.insert(ticket);
  while (!st.seen_ahead.empty() && *st.seen_ahead.begin() == st.next_ticket) {
    st.seen_ahead.erase(st.seen_ahead.begin());
    ++st.next_ticket;
  }
}

std::optional<synthesized_partition> take_next(scheduler_pointer self, int32_t device) {
  auto& st = self->state;
  // Among ready partitions whose earlier tickets are all seen, the best by
  // order that this worker's backend may take.
  for (auto it = st.ready.begin(); it != st.ready.end(); ++it) {
    if (it->second.part.ticket >= st.next_ticket) continue;
    if (!may_take(self, it->second.part.where, device)) continue;
    auto node = st.ready.extract(it);
    ++st.handed;
    return std::move(node.mapped());
  }
  return std::nullopt;
}

void dispatch(scheduler_pointer self) {
  auto& st = self->state;
  // Parked pulls oldest first; one whose backend may take nothing waits on.
  for (auto it = st.workers.begin(); it != st.workers.end() && !st.ready.empty();) {
    auto p = take_next(self, it->device);
    if (!p) {
      ++it;
      continue;
    }
    auto rp = std::move(it->promise);
    it = st.workers.erase(it);
    rp.deliver(std::move(*p));
  }
}

void on_ready(scheduler_pointer self, const synthesized_partition& p) {
  self->state.ready.emplace(p.part.order(), p);
  see_ticket(self, p.part.ticket);
  dispatch(self);
}

void on_skip(scheduler_pointer self, uint64_t ticket) {
  see_ticket(self, ticket);
  dispatch(self);
}

caf::result<synthesized_partition> on_pull(scheduler_pointer self, int32_t device) {
  if (auto p = take_next(self, device)) return std::move(*p);
  auto rp = self->make_response_promise<synthesized_partition>();
  self->state.workers.push_back({rp, device});
  return rp;
}

void on_lost(scheduler_pointer self, int32_t device) {
  if (!self->state.lost.insert(device).second) return;
  dispatch(self);  // partitions placed on it may go elsewhere now
}

scheduler_stats queue_stats(scheduler_pointer self) {
  const auto& st = self->state;
  return {st.ready.size(), st.workers.size(), st.handed};
}

}  // namespace proofline
