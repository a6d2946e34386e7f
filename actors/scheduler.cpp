#include "actors/scheduler.hpp"

#include "actors/detail/spawn.hpp"

#include "actors/detail/scheduler_state.hpp"

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

scheduler_actor spawn_scheduler(caf::actor_system& sys, scheduler_config cfg) {
  return spawn_stateful<scheduler_state>(sys, std::move(cfg));
}

scheduler_actor::behavior_type scheduler_state::make_behavior(scheduler_config config) {
  cfg = config;
  self->set_down_handler([this](caf::down_msg& dm) { on_worker_down(dm); });
  return {
      [this](ready_atom, const synthesized_partition& p) { on_ready(p); },
      [this](skip_atom, uint64_t ticket) { on_skip(ticket); },
      [this](granted_atom, uint64_t ticket, uint64_t seq) { on_granted(ticket, seq); },
      [this](partition_pull_atom, int32_t device) { return on_pull(device); },
      [this](worker_done_atom, uint64_t seq, uint32_t index) { on_worker_done(seq, index); },
      [this](worker_failed_atom, const partition_failure& f) { on_worker_failed(f); },
      [this](lost_atom, int32_t device) { on_lost(device); },
      [this](residency_atom, const zk::groth16::key_ptr& key, int32_t device, bool ok,
             const std::string& why) { on_prepared(key, device, ok, why); },
      [this](attach_atom, const job_registry_actor& r) { registry = r; },
      [this](stats_atom) { return queue_stats(); },
  };
}

void scheduler_state::on_granted(uint64_t ticket, uint64_t seq) {
  if (ticket >= next_ticket && !seen_ahead.count(ticket)) in_synthesis[ticket] = seq;
}

void scheduler_state::on_lost(int32_t device) {
  if (devices[device].lost) return;
  lose_device(device, "reported lost");
  fail_stranded();
  dispatch();
}

void scheduler_state::see_ticket(uint64_t ticket) {
  if (ticket < next_ticket) return;  // untracked (0) or already seen
  in_synthesis.erase(ticket);
  seen_ahead.insert(ticket);
  while (!seen_ahead.empty() && *seen_ahead.begin() == next_ticket) {
    seen_ahead.erase(seen_ahead.begin());
    ++next_ticket;
  }
}

bool scheduler_state::in_service(int32_t device) const {
  auto d = devices.find(device);
  return d != devices.end() && !d->second.lost && d->second.workers > 0;
}

bool scheduler_state::may_prove(const synthesized_partition& p, int32_t device) const {
  if (!in_service(device)) return false;
  if (device == cfg.fallback_index()) return true;  // it prepares on first use
  const auto& key = p.part.job ? p.part.job->key : nullptr;
  if (!key) return true;  // no key to prepare (scheduler tests)
  auto k = keys.find(key.get());
  return k == keys.end() || k->second.owner.lock() != key || !k->second.refused.count(device);
}

bool scheduler_state::eligible(const synthesized_partition& p, int32_t device) const {
  const int32_t fallback = cfg.fallback_index();
  const placement& where = p.part.where;
  // The backends a rule picks: those known (a worker pulled) that may prove p.
  auto any_of = [&](auto&& rule) {
    for (const auto& [d, info] : devices)
      if (rule(d) && may_prove(p, d)) return true;
    return false;
  };
  auto pick = [&](auto&& rule) { return rule(device) && may_prove(p, device); };
  // Where the placement allows.
  auto placed = [&](int32_t d) { return where.admits(d, fallback); };
  if (any_of(placed)) return pick(placed);
  // Its backends cannot prove it any more: the other primaries, then the fallback.
  auto others = [&](int32_t d) { return d != fallback && d != where.device; };
  if (any_of(others)) return pick(others);
  return device == fallback && may_prove(p, device);
}

bool scheduler_state::can_prove(const synthesized_partition& p, int32_t device) const {
  if (!eligible(p, device)) return false;
  if (device == cfg.fallback_index()) return true;
  const auto& key = p.part.job ? p.part.job->key : nullptr;
  if (!key) return true;
  auto k = keys.find(key.get());
  return k != keys.end() && k->second.owner.lock() == key && k->second.ready.count(device);
}

bool scheduler_state::behind_own_job_only(const synthesized_partition& p) const {
  for (uint64_t t = next_ticket; t < p.part.ticket; ++t) {
    if (seen_ahead.count(t)) continue;
    auto g = in_synthesis.find(t);
    if (g == in_synthesis.end() || !p.part.job || g->second != p.part.job->seq) return false;
  }
  return true;
}

void scheduler_state::dispatch() {
  // Partitions in order; each goes to the parked pull that suits it best: the
  // device with the fewest partitions in flight, then the worker, then the
  // oldest pull. A partition no parked pull can take does not hold back the
  // ones behind it. One granted after partitions still in synthesis goes
  // only to a worker holding nothing (it would idle otherwise), and only when
  // those are all of its own job.
  for (auto it = ready.begin(); it != ready.end() && !pulls.empty();) {
    const bool in_order = it->second.part.ticket < next_ticket;
    if (!in_order && !behind_own_job_only(it->second)) {
      ++it;
      continue;
    }
    auto best = pulls.end();
    std::tuple<unsigned, size_t, uint64_t> best_rank{};
    for (auto q = pulls.begin(); q != pulls.end(); ++q) {
      if (!in_order && !workers[q->worker].in_flight.empty()) continue;
      if (!can_prove(it->second, q->device)) continue;
      std::tuple<unsigned, size_t, uint64_t> rank{devices[q->device].in_flight,
                                                  workers[q->worker].in_flight.size(), q->seq};
      if (best == pulls.end() || rank < best_rank) {
        best = q;
        best_rank = rank;
      }
    }
    if (best == pulls.end()) {
      ++it;
      continue;
    }
    auto rp = std::move(best->rp);
    auto& w = workers[best->worker];
    pulls.erase(best);
    synthesized_partition p = it->second;
    it = ready.erase(it);
    w.in_flight.emplace(p.part.order(), p);
    ++devices[w.device].in_flight;
    ++handed;
    rp.deliver(std::move(p));
  }
}

void scheduler_state::on_ready(const synthesized_partition& p) {
  ready.emplace(p.part.order(), p);
  see_ticket(p.part.ticket);
  fail_stranded();
  dispatch();
}

void scheduler_state::on_skip(uint64_t ticket) {
  see_ticket(ticket);
  dispatch();
}

caf::result<synthesized_partition> scheduler_state::on_pull(int32_t device) {
  auto sender = self->current_sender();
  auto addr = caf::actor_cast<caf::actor_addr>(sender);
  auto w = workers.find(addr);
  if (w == workers.end()) {
    // A worker's first pull: it is watched from now on, so that what it
    // holds is queued again if it goes away.
    w = workers.emplace(addr, scheduler_state::worker{device, {}}).first;
    ++devices[device].workers;
    self->monitor(sender);
  }
  if (devices[device].lost)
    return caf::make_error(caf::sec::invalid_argument,
                           backend_name(cfg, device) + " is out of service");
  auto rp = self->make_response_promise<synthesized_partition>();
  pulls.push_back({rp, addr, device, next_pull++});
  dispatch();
  return rp;
}

void scheduler_state::on_worker_done(uint64_t seq, uint32_t index) {
  auto w = workers.find(caf::actor_cast<caf::actor_addr>(self->current_sender()));
  if (w == workers.end()) return;
  auto it = find_in_flight(w->second, seq, index);
  if (it == w->second.in_flight.end()) return;
  w->second.in_flight.erase(it);
  auto& d = devices[w->second.device];
  --d.in_flight;
  d.failures = 0;
  dispatch();  // a device with fewer in flight may now rank first
}

void scheduler_state::on_worker_failed(const partition_failure& f) {
  auto w = workers.find(caf::actor_cast<caf::actor_addr>(self->current_sender()));
  if (w == workers.end()) return;
  auto it = find_in_flight(w->second, f.job_seq, f.index);
  if (it == w->second.in_flight.end()) return;
  const int32_t device = w->second.device;
  // The worker released the partition's reservation; the registry proves it
  // again (a counted retry, placed by actors/detail/retry_policy) or fails it.
  w->second.in_flight.erase(it);
  auto& d = devices[device];
  --d.in_flight;
  ++d.failures;
  if (f.device_lost && !d.lost) {
    lose_device(device, f.error.message);
  } else if (d.failures >= device_failure_limit && !d.lost && device != cfg.fallback_index()) {
    // Out of service only while another primary still proves: with every
    // GPU failing, partitions fail through the registry as on one GPU.
    for (const auto& [other, o] : devices)
      if (other != device && other != cfg.fallback_index() && !o.lost && o.workers > 0 &&
          o.failures < device_failure_limit) {
        lose_device(device,
                    std::to_string(d.failures) + " partitions in a row failed (last: " +
                        f.error.message + ")");
        break;
      }
  }
  if (registry) self->send(registry, partition_failed_atom::value, f);
  fail_stranded();
  dispatch();
}

void scheduler_state::on_prepared(const zk::groth16::key_ptr& key, int32_t device, bool ok,
                                  const std::string& why) {
  if (!key) return;
  for (auto it = keys.begin(); it != keys.end();)
    it = it->second.owner.expired() ? keys.erase(it) : std::next(it);
  auto& k = keys[key.get()];
  if (k.owner.lock() != key) k = {key, {}, {}};  // a new key at a reused address
  if (ok) {
    k.ready.insert(device);
    k.refused.erase(device);
  } else {
    spdlog::warn("{}: {}: its partitions go to the other backends",
                 backend_name(cfg, device), why);
    k.ready.erase(device);
    k.refused[device] = why;
  }
  fail_stranded();
  dispatch();
}

void scheduler_state::on_worker_down(const caf::down_msg& dm) {
  auto w = workers.find(dm.source);
  if (w == workers.end()) return;
  const int32_t device = w->second.device;
  auto held = std::move(w->second.in_flight);
  workers.erase(w);
  for (auto q = pulls.begin(); q != pulls.end();)
    q = q->worker == dm.source ? pulls.erase(q) : std::next(q);
  auto& d = devices[device];
  --d.workers;
  d.in_flight -= static_cast<unsigned>(held.size());
  if (dm.reason == caf::exit_reason::user_shutdown) return;  // the runtime is stopping
  if (dm.reason != caf::exit_reason::normal && !d.lost)
    lose_device(device, "its GPU worker failed: " + self->system().render(dm.reason));
  // Not failed, so not retries: queued again as they were, for the backends
  // that may prove them (eligible() steers a placement on this device
  // elsewhere once it is out of service).
  if (!held.empty())
    spdlog::warn("{}: {} partition(s) it held are queued for the other backends",
                 backend_name(cfg, device), held.size());
  for (auto& [order, p] : held) ready.emplace(order, std::move(p));
  fail_stranded();
  dispatch();
}

void scheduler_state::lose_device(int32_t device, const std::string& why) {
  auto& d = devices[device];
  d.lost = true;
  d.why = why;
  spdlog::error("{} is out of service: {}", backend_name(cfg, device), why);
  for (auto q = pulls.begin(); q != pulls.end();) {
    if (q->device != device) {
      ++q;
      continue;
    }
    q->rp.deliver(
        caf::make_error(caf::sec::invalid_argument, backend_name(cfg, device) + " is out of service"));
    q = pulls.erase(q);
  }
}

void scheduler_state::fail_stranded() {
  if (devices.empty()) return;  // no GPU worker has asked yet
  for (auto it = ready.begin(); it != ready.end();) {
    const auto& p = it->second;
    bool possible = false;
    for (const auto& [device, d] : devices) possible = possible || eligible(p, device);
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
    for (const auto& [device, d] : devices)
      if (d.lost) lost[device] = d.why;
    const auto& key = p.part.job->key;
    auto k = key ? keys.find(key.get()) : keys.end();
    if (k != keys.end() && !k->second.refused.empty()) {
      f.error.file = key->path;
      f.error.message = key->path + ": no GPU can hold this key (" +
                        list_reasons(cfg, k->second.refused) +
                        (lost.empty() ? "" : "; lost: " + list_reasons(cfg, lost)) + ")";
    } else {
      f.error.file = p.part.witness();
      f.error.message = p.part.witness() + ": no GPU is left to prove it (" +
                        (lost.empty() ? "no GPU worker" : list_reasons(cfg, lost)) + ")";
    }
    p.reservation->release_all();
    if (registry) self->send(registry, partition_failed_atom::value, f);
    it = ready.erase(it);
  }
}

scheduler_stats scheduler_state::queue_stats() const {
  return {ready.size(), pulls.size(), handed};
}

}  // namespace proofline
