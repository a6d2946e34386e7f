// Control's long poll (see control.hpp): watches wait here, not in the
// registry, which only answers progress and tells control of news.
#include <caf/event_based_actor.hpp>
#include <caf/sec.hpp>

#include <algorithm>
#include <chrono>

#include "actors/control.hpp"

namespace proofline {

namespace {

bool has_news(const std::vector<job_progress>& progress) {
  for (const auto& p : progress)
    if (!p.finished.empty() || p.complete) return true;
  return false;
}

/// Answers a watch no longer parked with its progress now.
void answer(control_pointer self, parked_watch w) {
  self->request(self->state.wiring->registry, caf::infinite, watch_atom::value, w.cursors)
      .then([rp = w.promise](std::vector<job_progress>& p) mutable { rp.deliver(std::move(p)); },
            [rp = w.promise](caf::error& e) mutable { rp.deliver(std::move(e)); });
}

/// Parks a watch for up to `wait_ms`.
void park(control_pointer self, parked_watch w, uint32_t wait_ms) {
  auto& st = self->state;
  if (st.watches.size() >= max_watches) {
    auto oldest = st.watches.begin();
    answer(self, std::move(oldest->second));
    st.watches.erase(oldest);
  }
  uint64_t id = st.next_watch++;
  st.watches.emplace(id, std::move(w));
  self->delayed_send(self, std::chrono::milliseconds(wait_ms), watch_due_atom::value, id);
}

}  // namespace

caf::result<std::vector<job_progress>> watch(control_pointer self,
                                             const std::vector<watch_cursor>& cursors,
                                             uint32_t wait_ms) {
  if (!self->state.wiring)
    return caf::make_error(caf::sec::runtime_error, server_starting_message);
  wait_ms = std::min(wait_ms, max_watch_ms);
  auto rp = self->make_response_promise<std::vector<job_progress>>();
  // The registry tells control of news after this answer, never between.
  self->request(self->state.wiring->registry, caf::infinite, watch_atom::value, cursors)
      .then(
          [=](std::vector<job_progress>& p) mutable {
            if (cursors.empty() || wait_ms == 0 || has_news(p))
              rp.deliver(std::move(p));
            else
              park(self, parked_watch{cursors, rp}, wait_ms);
          },
          [=](caf::error& e) mutable { rp.deliver(std::move(e)); });
  return rp;
}

void on_news(control_pointer self, uint64_t seq) {
  for (const auto& [id, w] : self->state.watches) {
    if (std::none_of(w.cursors.begin(), w.cursors.end(),
                     [seq](const watch_cursor& c) { return c.seq == seq; }))
      continue;
    self->request(self->state.wiring->registry, caf::infinite, watch_atom::value, w.cursors)
        .then([self, id = id](std::vector<job_progress>& p) {
          auto it = self->state.watches.find(id);
          if (it == self->state.watches.end() || !has_news(p)) return;  // answered already
          it->second.promise.deliver(std::move(p));
          self->state.watches.erase(it);
        });
  }
}

void on_watch_timeout(control_pointer self, uint64_t id) {
  auto it = self->state.watches.find(id);
  if (it == self->state.watches.end()) return;
  answer(self, std::move(it->second));
  self->state.watches.erase(it);
}

}  // namespace proofline
