#include "actors/node_agent.hpp"

#include "actors/detail/spawn.hpp"

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>

#include <filesystem>
#include <map>

#include <spdlog/spdlog.h>

#include "actors/control.hpp"

namespace proofline {

namespace {

namespace fs = std::filesystem;

void remove_scratch(const std::string& dir) {
  std::error_code ec;
  fs::remove_all(dir, ec);
}

class node_agent_state {
 public:
  static inline const char* name = "node_agent";
  using pointer = node_agent_actor::stateful_pointer<node_agent_state>;

  explicit node_agent_state(pointer self) : self(self) {}

  node_agent_actor::behavior_type make_behavior(node_agent_config config);

 private:
  // ---- handlers
  /// Connects and joins, unless already doing so; retries after cfg.retry.
  void connect_to_coordinator();
  /// A lease arrived: start its local job, or answer with the error at once.
  void on_assign(const remote_partition& rp);
  /// The coordinator cancelled a job: cancel the local jobs of its leases.
  void on_coordinator_cancel(uint64_t job_seq);
  /// A local job completed: send its result (if the lease is still live) and credit.
  void on_local_done(uint64_t local_seq, const job_report& report);

  // ---- helpers
  void connection_failed(const std::string& why);
  void joined(const control_actor& c, uint64_t id);
  void coordinator_lost(const caf::error& reason);
  /// Answers a lease that cannot run here with its error.
  void refuse_lease(const remote_partition& rp, file_error error);
  /// Offers the coordinator the room left (slots - busy - credit already given).
  void give_credit();

  /// A lease being proved here, by the local job's sequence number.
  struct node_lease {
    uint64_t generation = 0;  ///< the connection it came over
    uint64_t lease = 0;       ///< the coordinator's lease id
    uint64_t job_seq = 0;     ///< the coordinator's job
    std::string scratch;      ///< this lease's directory under the spool
    bool revoked = false;     ///< cancelled, or its coordinator is gone
  };

  // ---- data
  pointer self;
  node_agent_config cfg;
  control_actor coordinator;  ///< null while not joined
  uint64_t node_id = 0;       ///< the coordinator's id for this node
  uint64_t generation = 0;    ///< counts connections
  bool connecting = false;
  uint32_t failures = 0;  ///< connection attempts failed in a row
  std::map<uint64_t, node_lease> leases;
  uint32_t busy = 0;          ///< leases whose local job is not complete
  uint32_t credit_given = 0;  ///< credit the coordinator has not used yet
  uint64_t proved = 0;
};

node_agent_actor::behavior_type node_agent_state::make_behavior(node_agent_config config) {
  cfg = std::move(config);
  if (cfg.info.slots == 0) cfg.info.slots = 1;
  self->set_down_handler([this](caf::down_msg& dm) {
    if (coordinator && dm.source == coordinator.address()) coordinator_lost(dm.reason);
  });
  self->send(self, rejoin_atom::value);
  return {
      [this](assign_atom, const remote_partition& rp) { on_assign(rp); },
      [this](cancel_atom, uint64_t job_seq) { on_coordinator_cancel(job_seq); },
      [this](rejoin_atom) { connect_to_coordinator(); },
  };
}

void node_agent_state::connection_failed(const std::string& why) {
  connecting = false;
  // The first failure and then one in ten, so a long outage does not flood the log.
  if (failures++ % 10 == 0)
    spdlog::warn("node: cannot join {}:{}: {}; retrying every {} ms", cfg.host, cfg.port,
                 why, cfg.retry.count());
  self->delayed_send(self, cfg.retry, rejoin_atom::value);
}

void node_agent_state::joined(const control_actor& c, uint64_t id) {
  connecting = false;
  failures = 0;
  coordinator = c;
  node_id = id;
  credit_given = 0;
  self->monitor(c);
  spdlog::info("node: joined {}:{} as node {} ({} slot(s))", cfg.host, cfg.port, id,
               cfg.info.slots);
  give_credit();
}

void node_agent_state::coordinator_lost(const caf::error& reason) {
  spdlog::warn("node: lost the coordinator {}:{} ({}); dropping {} lease(s), reconnecting",
               cfg.host, cfg.port, self->system().render(reason), leases.size());
  coordinator = nullptr;
  node_id = 0;
  credit_given = 0;
  ++generation;  // results of earlier leases are never sent
  for (auto& [local_seq, lease] : leases) {
    if (lease.revoked) continue;
    lease.revoked = true;
    caf::anon_send(cfg.registry, cancel_atom::value, local_seq);
  }
  connect_to_coordinator();
}

void node_agent_state::refuse_lease(const remote_partition& rp, file_error error) {
  spdlog::warn("node: lease {} (job {} partition {}): {}", rp.lease, rp.job_id, rp.index,
               error.message);
  if (coordinator) {
    partition_result r;
    r.node = node_id;
    r.lease = rp.lease;
    r.error = std::move(error);
    self->send(coordinator, result_atom::value, std::move(r));
  }
  --busy;
  give_credit();
}

void node_agent_state::connect_to_coordinator() {
  if (connecting || coordinator) return;
  connecting = true;
  self->request(cfg.connector, cfg.request_timeout, caf::connect_atom::value, cfg.host,
                cfg.port)
      .then(
          [=](const caf::node_id&, caf::strong_actor_ptr& ptr, const std::set<std::string>& ifs) {
            if (!ptr) {
              connection_failed("no actor is published at that port");
              return;
            }
            if (!self->system().assignable<control_actor>(ifs)) {
              connection_failed("the peer is not a proofline server (interface mismatch)");
              return;
            }
            auto coordinator = caf::actor_cast<control_actor>(ptr);
            auto me = caf::actor_cast<node_actor>(self);
            self->request(coordinator, cfg.request_timeout, join_atom::value,
                          cfg.info, me)
                .then([=](uint64_t id) { joined(coordinator, id); },
                      [=](caf::error& e) {
                        connection_failed(error_text(self->system(), e));
                      });
          },
          [=](caf::error& e) { connection_failed(self->system().render(e)); });
}

void node_agent_state::on_assign(const remote_partition& rp) {
  if (credit_given > 0) --credit_given;
  ++busy;
  std::string scratch =
      (fs::path(cfg.spool_dir) / ("lease-" + std::to_string(generation) + "-" +
                                     std::to_string(rp.lease)))
          .string();
  job_spec spec;
  spec.id = rp.job_id + "/" + std::to_string(rp.index) + "@lease-" +
            std::to_string(generation) + "-" + std::to_string(rp.lease);
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
  if (!under_roots(rp.zkey, cfg.allowed_roots)) {
    refuse_lease(rp, {rp.zkey, outside_roots_message(rp.zkey, cfg.allowed_roots)});
    return;
  }
  if (rp.witness.empty()) {
    std::string path = (fs::path(scratch) / "witness.wtns").string();
    try {
      std::error_code ec;
      fs::create_directories(scratch, ec);
      cfg.write_file(path, std::string_view(reinterpret_cast<const char*>(rp.witness_bytes.data()),
                                               rp.witness_bytes.size()));
    } catch (const std::exception& e) {
      remove_scratch(scratch);
      refuse_lease(rp, {path, e.what()});
      return;
    }
    spec.witnesses.push_back(path);
  } else if (!under_roots(rp.witness, cfg.allowed_roots)) {
    refuse_lease(rp, {rp.witness, outside_roots_message(rp.witness, cfg.allowed_roots)});
    return;
  } else {
    spec.witnesses.push_back(resolved(rp.witness));
  }
  node_lease lease{generation, rp.lease, rp.job_seq, scratch, false};
  self->request(cfg.registry, caf::infinite, submit_atom::value, spec)
      .then(
          [=](uint64_t local_seq) {
            auto& l = leases.emplace(local_seq, lease).first->second;
            // Lost or cancelled while the submission travelled: stop at once.
            if (l.generation != generation) {
              l.revoked = true;
              caf::anon_send(cfg.registry, cancel_atom::value, local_seq);
            }
            self->request(cfg.registry, caf::infinite, await_atom::value, local_seq)
                .then([=](const job_report& r) { on_local_done(local_seq, r); },
                      [=](caf::error& e) {
                        job_report r;
                        r.state = job_state::failed;
                        r.has_error = true;
                        r.error = {"", self->system().render(e)};
                        on_local_done(local_seq, r);
                      });
          },
          [=](caf::error& e) {
            remove_scratch(scratch);
            refuse_lease(rp, {"", error_text(self->system(), e)});
          });
}

void node_agent_state::on_coordinator_cancel(uint64_t job_seq) {
  for (auto& [local_seq, lease] : leases)
    if (!lease.revoked && lease.generation == generation && lease.job_seq == job_seq) {
      lease.revoked = true;
      caf::anon_send(cfg.registry, cancel_atom::value, local_seq);
    }
}

void node_agent_state::on_local_done(uint64_t local_seq, const job_report& report) {
  auto it = leases.find(local_seq);
  if (it == leases.end()) return;
  node_lease lease = std::move(it->second);
  leases.erase(it);
  --busy;
  bool live = !lease.revoked && lease.generation == generation && coordinator;
  if (live && report.state != job_state::cancelled) {
    partition_result r;
    r.node = node_id;
    r.lease = lease.lease;
    if (!report.partitions.empty()) r.spans = report.partitions.front().spans;
    r.ok = report.state == job_state::done;
    if (r.ok) {
      try {
        r.proof_json = cfg.read_text((fs::path(lease.scratch) / "out" / "proof.json").string());
        r.public_json =
            cfg.read_text((fs::path(lease.scratch) / "out" / "public.json").string());
        ++proved;
      } catch (const std::exception& e) {
        r.ok = false;
        r.error = {"", e.what()};
      }
    } else {
      r.error = report.error;
      if (r.error.message.empty()) r.error.message = "the node's job ended " + std::string(to_string(report.state));
    }
    self->send(coordinator, result_atom::value, std::move(r));
  }
  remove_scratch(lease.scratch);
  give_credit();
}

void node_agent_state::give_credit() {
  if (!coordinator) return;
  uint32_t taken = busy + credit_given;
  if (taken >= cfg.info.slots) return;
  uint32_t n = cfg.info.slots - taken;
  credit_given += n;
  self->send(coordinator, credit_atom::value, node_id, n);
}

}  // namespace

node_agent_actor spawn_node_agent(caf::actor_system& sys, node_agent_config cfg) {
  return spawn_stateful<node_agent_state>(sys, std::move(cfg));
}

}  // namespace proofline
