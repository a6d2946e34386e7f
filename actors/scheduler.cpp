#include "actors/scheduler.hpp"

#include <caf/system_messages.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/sec.hpp>

#include <spdlog/spdlog.h>

#include <tuple>

namespace proofline {

namespace {

/// "gpu 0" for a primary backend, "the fallback" for the fallback.
std::string backend_name(const scheduler_config& cfg, int32_t device) {
  return device == cfg.fallback_index() ? "the fallback" : "gpu " + std::to_string(device);
}

/// "gpu 0: why; gpu 1: why" for the devices in `reasons`.
std::string list_reasons(const scheduler_config& cfg,
                         const std::map<int32_t, std::string>& reasons) {
  std::string out;
  for (const auto& [device, why] : reasons) {
    if (!out.empty()) out += "; ";
    out += backend_name(cfg, device) + ": " + why;
  }
  return out;
}

/// The in-flight entry of partition (seq, index) at worker `w`, or end().
auto find_in_flight(scheduler_state::worker& w, uint64_t seq, uint32_t index) {
  auto it = w.in_flight.begin();
  for (; it != w.in_flight.end(); ++it)
    if (it->first.job_seq == seq && it->first.index == index) break;
  return it;
}

}  // namespace

scheduler_actor::behavior_type placing_scheduler(scheduler_pointer self, scheduler_config cfg) {
  self->state.cfg = cfg;
  self->set_down_handler([=](caf::down_msg& dm) { on_worker_down(self, dm); });
  return {
      [=](ready_atom, const synthesized_partition& p) { on_ready(self, p); },
      [=](skip_atom, uint64_t ticket) { on_skip(self, ticket); },
      [=](granted_atom, uint64_t ticket, uint64_t seq) {
        auto& st = self->state;
        if (ticket >= st.next_ticket && !st.seen_ahead.count(ticket)) st.in_synthesis[ticket] = seq;
      },
      [=](partition_pull_atom, int32_t device) { return on_pull(self, device); },
      [=](worker_done_atom, uint64_t seq, uint32_t index) { on_worker_done(self, seq, index); },
      [=](worker_failed_atom, const partition_failure& f) { on_worker_failed(self, f); },
      [=](lost_atom, int32_t device) {
        if (!self->state.devices[device].lost) {
          lose_device(self, device, "reported lost");
          fail_stranded(self);
          dispatch(self);
        }
      },
      [=](residency_atom, const zk::groth16::key_ptr& key, int32_t device, bool ok,
          const std::string& why) { on_prepared(self, key, device, ok, why); },
      [=](attach_atom, const job_registry_actor& registry) { self->state.registry = registry; },
      [=](stats_atom) { return queue_stats(self); },
  };
}

void see_ticket(scheduler_pointer self, uint64_t ticket) {
  auto& st = self->state;
  if (ticket < st.next_ticket) return;  // untracked (0) or already seen
  st.in_synthesis.erase(ticket);
  st.seen_ahead.insert(ticket);
  while (!st.seen_ahead.empty() && *st.seen_ahead.begin() == st.next_ticket) {
    st.seen_ahead.erase(st.seen_ahead.begin());
    ++st.next_ticket;
  }
}

bool in_service(scheduler_pointer self, int32_t device) {
  const auto& st = self->state;
  auto d = st.devices.find(device);
  return d != st.devices.end() && !d->second.lost && d->second.workers > 0;
}

bool may_prove(scheduler_pointer self, const synthesized_partition& p, int32_t device) {
  if (!in_service(self, device)) return false;
  if (device == self->state.cfg.fallback_index()) return true;  // it prepares on first use
  const auto& key = p.part.job ? p.part.job->key : nullptr;
  if (!key) return true;  // no key to prepare (scheduler tests)
  const auto& st = self->state;
  auto k = st.keys.find(key.get());
  return k == st.keys.end() || k->second.owner.lock() != key || !k->second.refused.count(device);
}

bool eligible(scheduler_pointer self, const synthesized_partition& p, int32_t device) {
  const auto& st = self->state;
  const int32_t fallback = st.cfg.fallback_index();
  const placement& where = p.part.where;
  // The backends a rule picks: those known (a worker pulled) that may prove p.
  auto any_of = [&](auto&& rule) {
    for (const auto& [d, info] : st.devices)
      if (rule(d) && may_prove(self, p, d)) return true;
    return false;
  };
  auto pick = [&](auto&& rule) { return rule(device) && may_prove(self, p, device); };
  // Where the placement allows.
  auto placed = [&](int32_t d) { return where.admits(d, fallback); };
  if (any_of(placed)) return pick(placed);
  // Its backends cannot prove it any more: the other primaries, then the fallback.
  auto others = [&](int32_t d) { return d != fallback && d != where.device; };
  if (any_of(others)) return pick(others);
  return device == fallback && may_prove(self, p, device);
}

bool can_prove(scheduler_pointer self, const synthesized_partition& p, int32_t device) {
  if (!eligible(self, p, device)) return false;
  if (device == self->state.cfg.fallback_index()) return true;
  const auto& key = p.part.job ? p.part.job->key : nullptr;
  if (!key) return true;
  auto& st = self->state;
  auto k = st.keys.find(key.get());
  return k != st.keys.end() && k->second.owner.lock() == key && k->second.ready.count(device);
}

bool behind_own_job_only(const scheduler_state& st, const synthesized_partition& p) {
  for (uint64_t t = st.next_ticket; t < p.part.ticket; ++t) {
    if (st.seen_ahead.count(t)) continue;
    auto g = st.in_synthesis.find(t);
    if (g == st.in_synthesis.end() || !p.part.job || g->second != p.part.job->seq) return false;
  }
  return true;
}

void dispatch(scheduler_pointer self) {
  auto& st = self->state;
  // Partitions in order; each goes to the parked pull that suits it best: the
  // device with the fewest partitions in flight, then the worker, then the
  // oldest pull. A partition no parked pull can take does not hold back the
  // ones behind it. One granted after partitions still in synthesis goes
  // only to a worker holding nothing (it would idle otherwise), and only when
  // those are all of its own job.
  for (auto it = st.ready.begin(); it != st.ready.end() && !st.pulls.empty();) {
    const bool in_order = it->second.part.ticket < st.next_ticket;
    if (!in_order && !behind_own_job_only(st, it->second)) {
      ++it;
      continue;
    }
    auto best = st.pulls.end();
    std::tuple<unsigned, size_t, uint64_t> best_rank{};
    for (auto q = st.pulls.begin(); q != st.pulls.end(); ++q) {
      if (!in_order && !st.workers[q->worker].in_flight.empty()) continue;
      if (!can_prove(self, it->second, q->device)) continue;
      std::tuple<unsigned, size_t, uint64_t> rank{st.devices[q->device].in_flight,
                                                  st.workers[q->worker].in_flight.size(), q->seq};
      if (best == st.pulls.end() || rank < best_rank) {
        best = q;
        best_rank = rank;
      }
    }
    if (best == st.pulls.end()) {
      ++it;
      continue;
    }
    auto rp = std::move(best->rp);
    auto& w = st.workers[best->worker];
    st.pulls.erase(best);
    synthesized_partition p = it->second;
    it = st.ready.erase(it);
    w.in_flight.emplace(p.part.order(), p);
    ++st.devices[w.device].in_flight;
    ++st.handed;
    rp.deliver(std::move(p));
  }
}

void on_ready(scheduler_pointer self, const synthesized_partition& p) {
  self->state.ready.emplace(p.part.order(), p);
  see_ticket(self, p.part.ticket);
  fail_stranded(self);
  dispatch(self);
}

void on_skip(scheduler_pointer self, uint64_t ticket) {
  see_ticket(self, ticket);
  dispatch(self);
}

caf::result<synthesized_partition> on_pull(scheduler_pointer self, int32_t device) {
  auto& st = self->state;
  auto sender = self->current_sender();
  auto addr = caf::actor_cast<caf::actor_addr>(sender);
  auto w = st.workers.find(addr);
  if (w == st.workers.end()) {
    // A worker's first pull: it is watched from now on, so that what it
    // holds is queued again if it goes away.
    w = st.workers.emplace(addr, scheduler_state::worker{device, {}}).first;
    ++st.devices[device].workers;
    self->monitor(sender);
  }
  if (st.devices[device].lost)
    return caf::make_error(caf::sec::invalid_argument,
                           backend_name(st.cfg, device) + " is out of service");
  auto rp = self->make_response_promise<synthesized_partition>();
  st.pulls.push_back({rp, addr, device, st.next_pull++});
  dispatch(self);
  return rp;
}

void on_worker_done(scheduler_pointer self, uint64_t seq, uint32_t index) {
  auto& st = self->state;
  auto w = st.workers.find(caf::actor_cast<caf::actor_addr>(self->current_sender()));
  if (w == st.workers.end()) return;
  auto it = find_in_flight(w->second, seq, index);
  if (it == w->second.in_flight.end()) return;
  w->second.in_flight.erase(it);
  auto& d = st.devices[w->second.device];
  --d.in_flight;
  d.failures = 0;
  dispatch(self);  // a device with fewer in flight may now rank first
}

void on_worker_failed(scheduler_pointer self, const partition_failure& f) {
  auto& st = self->state;
  auto w = st.workers.find(caf::actor_cast<caf::actor_addr>(self->current_sender()));
  if (w == st.workers.end()) return;
  auto it = find_in_flight(w->second, f.job_seq, f.index);
  if (it == w->second.in_flight.end()) return;
  const int32_t device = w->second.device;
  // The worker released the partition's reservation; the registry proves it
  // again (a counted retry, placed by actors/retry_policy) or fails it.
  w->second.in_flight.erase(it);
  auto& d = st.devices[device];
  --d.in_flight;
  ++d.failures;
  if (f.device_lost && !d.lost) {
    lose_device(self, device, f.error.message);
  } else if (d.failures >= device_failure_limit && !d.lost && device != st.cfg.fallback_index()) {
    // Out of service only while another primary still proves: with every
    // GPU failing, partitions fail through the registry as on one GPU.
    for (const auto& [other, o] : st.devices)
      if (other != device && other != st.cfg.fallback_index() && !o.lost && o.workers > 0 &&
          o.failures < device_failure_limit) {
        lose_device(self, device,
                    std::to_string(d.failures) + " partitions in a row failed (last: " +
                        f.error.message + ")");
        break;
      }
  }
  if (st.registry) self->send(st.registry, partition_failed_atom::value, f);
  fail_stranded(self);
  dispatch(self);
}

void on_prepared(scheduler_pointer self, const zk::groth16::key_ptr& key, int32_t device, bool ok,
                 const std::string& why) {
  if (!key) return;
  auto& st = self->state;
  for (auto it = st.keys.begin(); it != st.keys.end();)
    it = it->second.owner.expired() ? st.keys.erase(it) : std::next(it);
  auto& k = st.keys[key.get()];
  if (k.owner.lock() != key) k = {key, {}, {}};  // a new key at a reused address
  if (ok) {
    k.ready.insert(device);
    k.refused.erase(device);
  } else {
    spdlog::warn("{}: {}: its partitions go to the other backends",
                 backend_name(st.cfg, device), why);
    k.ready.erase(device);
    k.refused[device] = why;
  }
  fail_stranded(self);
  dispatch(self);
}

void on_worker_down(scheduler_pointer self, const caf::down_msg& dm) {
  auto& st = self->state;
  auto w = st.workers.find(dm.source);
  if (w == st.workers.end()) return;
  const int32_t device = w->second.device;
  auto held = std::move(w->second.in_flight);
  st.workers.erase(w);
  for (auto q = st.pulls.begin(); q != st.pulls.end();)
    q = q->worker == dm.source ? st.pulls.erase(q) : std::next(q);
  auto& d = st.devices[device];
  --d.workers;
  d.in_flight -= static_cast<unsigned>(held.size());
  if (dm.reason == caf::exit_reason::user_shutdown) return;  // the runtime is stopping
  if (dm.reason != caf::exit_reason::normal && !d.lost)
    lose_device(self, device, "its GPU worker failed: " + self->system().render(dm.reason));
  // Not failed, so not retries: queued again as they were, for the backends
  // that may prove them (eligible() steers a placement on this device
  // elsewhere once it is out of service).
  if (!held.empty())
    spdlog::warn("{}: {} partition(s) it held are queued for the other backends",
                 backend_name(st.cfg, device), held.size());
  for (auto& [order, p] : held) st.ready.emplace(order, std::move(p));
  fail_stranded(self);
  dispatch(self);
}

void lose_device(scheduler_pointer self, int32_t device, const std::string& why) {
  auto& st = self->state;
  auto& d = st.devices[device];
  d.lost = true;
  d.why = why;
  spdlog::error("{} is out of service: {}", backend_name(st.cfg, device), why);
  for (auto q = st.pulls.begin(); q != st.pulls.end();) {
    if (q->device != device) {
      ++q;
      continue;
    }
    q->rp.deliver(
        caf::make_error(caf::sec::invalid_argument, backend_name(st.cfg, device) + " is out of service"));
    q = st.pulls.erase(q);
  }
}

void fail_stranded(scheduler_pointer self) {
  auto& st = self->state;
  if (st.devices.empty()) return;  // no GPU worker has asked yet
  for (auto it = st.ready.begin(); it != st.ready.end();) {
    const auto& p = it->second;
    bool possible = false;
    for (const auto& [device, d] : st.devices) possible = possible || eligible(self, p, device);
    if (possible) {
      ++it;
      continue;
    }
    // Not a backend fault of this partition: it fails without a retry.
    partition_failure f;
    f.job_seq = p.part.job->seq;
    f.index = p.part.index;
    f.spans = p.part.spans;
    std::map<int32_t, std::string> lost;
    for (const auto& [device, d] : st.devices)
      if (d.lost) lost[device] = d.why;
    const auto& key = p.part.job->key;
    auto k = key ? st.keys.find(key.get()) : st.keys.end();
    if (k != st.keys.end() && !k->second.refused.empty()) {
      f.error.file = key->path;
      f.error.message = key->path + ": no GPU can hold this key (" +
                        list_reasons(st.cfg, k->second.refused) +
                        (lost.empty() ? "" : "; lost: " + list_reasons(st.cfg, lost)) + ")";
    } else {
      f.error.file = p.part.witness();
      f.error.message = p.part.witness() + ": no GPU is left to prove it (" +
                        (lost.empty() ? "no GPU worker" : list_reasons(st.cfg, lost)) + ")";
    }
    p.reservation->release_all();
    if (st.registry) self->send(st.registry, partition_failed_atom::value, f);
    it = st.ready.erase(it);
  }
}

scheduler_stats queue_stats(scheduler_pointer self) {
  const auto& st = self->state;
  return {st.ready.size(), st.pulls.size(), st.handed};
}

}  // namespace proofline
