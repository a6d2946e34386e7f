#include "actors/scheduler.hpp"

#include <caf/event_based_actor.hpp>

namespace proofline {

scheduler_actor::behavior_type scheduler(scheduler_pointer self) {
  return {
      [=](ready_atom, const synthesized_partition& p) { on_ready(self, p); },
      [=](skip_atom, uint64_t ticket) { on_skip(self, ticket); },
      [=](pull_atom) { return on_pull(self); },
      [=](stats_atom) { return queue_stats(self); },
  };
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

std::optional<synthesized_partition> take_next(scheduler_pointer self) {
  auto& st = self->state;
  // Among ready partitions whose earlier tickets are all seen, the best by order.
  for (auto it = st.ready.begin(); it != st.ready.end(); ++it) {
    if (it->second.part.ticket >= st.next_ticket) continue;
    auto node = st.ready.extract(it);
    ++st.handed;
    return std::move(node.mapped());
  }
  return std::nullopt;
}

void dispatch(scheduler_pointer self) {
  auto& st = self->state;
  while (!st.workers.empty()) {
    auto p = take_next(self);
    if (!p) return;
    auto rp = std::move(st.workers.front());
    st.workers.pop_front();
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

caf::result<synthesized_partition> on_pull(scheduler_pointer self) {
  if (auto p = take_next(self)) return std::move(*p);
  auto rp = self->make_response_promise<synthesized_partition>();
  self->state.workers.push_back(rp);
  return rp;
}

scheduler_stats queue_stats(scheduler_pointer self) {
  const auto& st = self->state;
  return {st.ready.size(), st.workers.size(), st.handed};
}

}  // namespace proofline
