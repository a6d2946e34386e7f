#include "actors/node_agent.hpp"

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>

#include <filesystem>

#include <spdlog/spdlog.h>

#include "actors/control.hpp"

namespace proofline {

namespace {

namespace fs = std::filesystem;

void remove_scratch(const std::string& dir) {
  std::error_code ec;
  fs::remove_all(dir, ec);
}

void connection_failed(node_agent_pointer self, const std::string& why) {
  auto& st = self->state;
  st.connecting = false;
  // The first failure and then one in ten, so a long outage does not flood the log.
  if (st.failures++ % 10 == 0)
    spdlog::warn("node: cannot join {}:{}: {}; retrying every {} ms", st.cfg.host, st.cfg.port,
                 why, st.cfg.retry.count());
  self->delayed_send(self, st.cfg.retry, rejoin_atom::value);
}

void joined(node_agent_pointer self, const control_actor& coordinator, uint64_t id) {
  auto& st = self->state;
  st.connecting = false;
  st.failures = 0;
  st.coordinator = coordinator;
  st.node_id = id;
  st.credit_given = 0;
  self->monitor(coordinator);
  spdlog::info("node: joined {}:{} as node {} ({} slot(s))", st.cfg.host, st.cfg.port, id,
               st.cfg.info.slots);
  give_credit(self);
}

void coordinator_lost(node_agent_pointer self, const caf::error& reason) {
  auto& st = self->state;
  spdlog::warn("node: lost the coordinator {}:{} ({}); dropping {} lease(s), reconnecting",
               st.cfg.host, st.cfg.port, self->system().render(reason), st.leases.size());
  st.coordinator = nullptr;
  st.node_id = 0;
  st.credit_given = 0;
  ++st.generation;  // results of earlier leases are never sent
  for (auto& [local_seq, lease] : st.leases) {
    if (lease.revoked) continue;
    lease.revoked = true;
    caf::anon_send(st.cfg.registry, cancel_atom::value, local_seq);
  }
  connect_to_coordinator(self);
}

/// Answers a lease that cannot run here with its error.
void refuse_lease(node_agent_pointer self, const remote_partition& rp, file_error error) {
  auto& st = self->state;
  spdlog::warn("node: lease {} (job {} partition {}): {}", rp.lease, rp.job_id, rp.index,
               error.message);
  if (st.coordinator) {
    partition_result r;
    r.node = st.node_id;
    r.lease = rp.lease;
    r.error = std::move(error);
    self->send(st.coordinator, result_atom::value, std::move(r));
  }
  --st.busy;
  give_credit(self);
}

}  // namespace

node_agent_actor::behavior_type node_agent(node_agent_pointer self, node_agent_config cfg) {
  if (cfg.info.slots == 0) cfg.info.slots = 1;
  self->state.cfg = std::move(cfg);
  self->set_down_handler([=](caf::down_msg& dm) {
    if (self->state.coordinator && dm.source == self->state.coordinator.address())
      coordinator_lost(self, dm.reason);
  });
  self->send(self, rejoin_atom::value);
  return {
      [=](assign_atom, const remote_partition& rp) { on_assign(self, rp); },
      [=](cancel_atom, uint64_t job_seq) { on_coordinator_cancel(self, job_seq); },
      [=](rejoin_atom) { connect_to_coordinator(self); },
  };
}

void connect_to_coordinator(node_agent_pointer self) {
  auto& st = self->state;
  if (st.connecting || st.coordinator) return;
  st.connecting = true;
  self->request(st.cfg.connector, st.cfg.request_timeout, caf::connect_atom::value, st.cfg.host,
                st.cfg.port)
      .then(
          [=](const caf::node_id&, caf::strong_actor_ptr& ptr, const std::set<std::string>& ifs) {
            if (!ptr) {
              connection_failed(self, "no actor is published at that port");
              return;
            }
            if (!self->system().assignable<control_actor>(ifs)) {
              connection_failed(self, "the peer is not a proofline server (interface mismatch)");
              return;
            }
            auto coordinator = caf::actor_cast<control_actor>(ptr);
            auto me = caf::actor_cast<node_actor>(self);
            self->request(coordinator, self->state.cfg.request_timeout, join_atom::value,
                          self->state.cfg.info, me)
                .then([=](uint64_t id) { joined(self, coordinator, id); },
                      [=](caf::error& e) {
                        connection_failed(self, error_text(self->system(), e));
                      });
          },
          [=](caf::error& e) { connection_failed(self, self->system().render(e)); });
}

void on_assign(node_agent_pointer self, const remote_partition& rp) {
  auto& st = self->state;
  if (st.credit_given > 0) --st.credit_given;
  ++st.busy;
  std::string scratch =
      (fs::path(st.cfg.spool_dir) / ("lease-" + std::to_string(st.generation) + "-" +
                                     std::to_string(rp.lease)))
          .string();
  job_spec spec;
  spec.id = rp.job_id + "/" + std::to_string(rp.index) + "@lease-" +
            std::to_string(st.generation) + "-" + std::to_string(rp.lease);
  // Paths are checked here and opened by their resolved names beneath the
  // roots without following links (base/confined.hpp), as control does.
  auto resolved = [](const std::string& p) {
    std::error_code ec;
    auto r = fs::weakly_canonical(fs::absolute(p), ec);
    return ec ? p : r.string();
  };
  spec.zkey = resolved(rp.zkey);
  spec.single = true;
  spec.out = (fs::path(scratch) / "out").string();
  spec.prio = rp.prio;
  if (!under_roots(rp.zkey, st.cfg.allowed_roots)) {
    refuse_lease(self, rp, {rp.zkey, outside_roots_message(rp.zkey, st.cfg.allowed_roots)});
    return;
  }
  if (rp.witness.empty()) {
    std::string path = (fs::path(scratch) / "witness.wtns").string();
    try {
      std::error_code ec;
      fs::create_directories(scratch, ec);
      st.cfg.write_file(path, std::string_view(reinterpret_cast<const char*>(rp.witness_bytes.data()),
                                               rp.witness_bytes.size()));
    } catch (const std::exception& e) {
      remove_scratch(scratch);
      refuse_lease(self, rp, {path, e.what()});
      return;
    }
    spec.witnesses.push_back(path);
  } else if (!under_roots(rp.witness, st.cfg.allowed_roots)) {
    refuse_lease(self, rp, {rp.witness, outside_roots_message(rp.witness, st.cfg.allowed_roots)});
    return;
  } else {
    spec.witnesses.push_back(resolved(rp.witness));
  }
  node_lease lease{st.generation, rp.lease, rp.job_seq, scratch, false};
  self->request(st.cfg.registry, caf::infinite, submit_atom::value, spec)
      .then(
          [=](uint64_t local_seq) {
            auto& leases = self->state.leases;
            auto& l = leases.emplace(local_seq, lease).first->second;
            // Lost or cancelled while the submission travelled: stop at once.
            if (l.generation != self->state.generation) {
              l.revoked = true;
              caf::anon_send(self->state.cfg.registry, cancel_atom::value, local_seq);
            }
            self->request(self->state.cfg.registry, caf::infinite, await_atom::value, local_seq)
                .then([=](const job_report& r) { on_local_done(self, local_seq, r); },
                      [=](caf::error& e) {
                        job_report r;
                        r.state = job_state::failed;
                        r.has_error = true;
                        r.error = {"", self->system().render(e)};
                        on_local_done(self, local_seq, r);
                      });
          },
          [=](caf::error& e) {
            remove_scratch(scratch);
            refuse_lease(self, rp, {"", error_text(self->system(), e)});
          });
}

void on_coordinator_cancel(node_agent_pointer self, uint64_t job_seq) {
  auto& st = self->state;
  for (auto& [local_seq, lease] : st.leases)
    if (!lease.revoked && lease.generation == st.generation && lease.job_seq == job_seq) {
      lease.revoked = true;
      caf::anon_send(st.cfg.registry, cancel_atom::value, local_seq);
    }
}

void on_local_done(node_agent_pointer self, uint64_t local_seq, const job_report& report) {
  auto& st = self->state;
  auto it = st.leases.find(local_seq);
  if (it == st.leases.end()) return;
  node_lease lease = std::move(it->second);
  st.leases.erase(it);
  --st.busy;
  bool live = !lease.revoked && lease.generation == st.generation && st.coordinator;
  if (live && report.state != job_state::cancelled) {
    partition_result r;
    r.node = st.node_id;
    r.lease = lease.lease;
    if (!report.partitions.empty()) r.spans = report.partitions.front().spans;
    r.ok = report.state == job_state::done;
    if (r.ok) {
      try {
        r.proof_json = st.cfg.read_text((fs::path(lease.scratch) / "out" / "proof.json").string());
        r.public_json =
            st.cfg.read_text((fs::path(lease.scratch) / "out" / "public.json").string());
        ++st.proved;
      } catch (const std::exception& e) {
        r.ok = false;
        r.error = {"", e.what()};
      }
    } else {
      r.error = report.error;
      if (r.error.message.empty()) r.error.message = "the node's job ended " + std::string(to_string(report.state));
    }
    self->send(st.coordinator, result_atom::value, std::move(r));
  }
  remove_scratch(lease.scratch);
  give_credit(self);
}

void give_credit(node_agent_pointer self) {
  auto& st = self->state;
  if (!st.coordinator) return;
  uint32_t taken = st.busy + st.credit_given;
  if (taken >= st.cfg.info.slots) return;
  uint32_t n = st.cfg.info.slots - taken;
  st.credit_given += n;
  self->send(st.coordinator, credit_atom::value, st.node_id, n);
}

}  // namespace proofline
