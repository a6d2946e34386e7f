#include "actors/cluster_dispatcher.hpp"

#include "actors/detail/spawn.hpp"

#include "actors/proof_checker.hpp"

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/sec.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include <spdlog/spdlog.h>

namespace proofline {

namespace {

bool cancelled(const partition_ref& part) {
  return part.job->cancelled.load(std::memory_order_acquire);
}

/// Node spans moved onto this coordinator's clock: the node's finalize end
/// becomes `now`, durations are kept.
partition_spans shift_spans(const partition_spans& s, double now) {
  partition_spans out = s;
  if (!s.finalize.recorded()) return out;
  double offset = now - s.finalize.end;
  for (span_ms* x : {&out.synthesize, &out.prove, &out.finalize})
    if (x->recorded()) {
      x->start += offset;
      x->end += offset;
    }
  return out;
}

bool under_dir(const std::string& path, const std::string& dir) {
  return !dir.empty() && path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
         path[dir.size()] == '/';
}

struct cluster_node {
  node_metrics m;
  node_actor handle;
  caf::actor_addr addr;
  std::set<uint64_t> leases;
};

struct cluster_lease {
  uint64_t node = 0;
  partition_ref part;
  uint64_t bytes = 0;  ///< the partition's memory estimate, for queueing it again
  uint64_t bulk = 0;
  double assigned_ms = 0;
};

/// A granted partition waiting for a node other than those that failed it.
struct held_partition {
  partition_ref part;
  uint64_t bytes = 0;
  uint64_t bulk = 0;
};

/// The nodes whose proof of one partition failed the check.
struct failed_nodes {
  std::weak_ptr<const job_context> job;  ///< expired: the job is over, the entry goes
  std::set<uint64_t> nodes;
};

std::string node_name(const cluster_node& n) {
  return "node " + std::to_string(n.m.id) + " (" + n.m.info.name + ")";
}

class cluster_state {
 public:
  static inline const char* name = "cluster_dispatcher";
  using pointer = cluster_dispatcher_actor::stateful_pointer<cluster_state>;

  explicit cluster_state(pointer self) : self(self) {}

  cluster_dispatcher_actor::behavior_type make_behavior(cluster_config config);

 private:
  // ---- handlers
  uint64_t join_node(const node_info& info, const node_actor& node);
  void on_credit(uint64_t node, uint32_t n);
  /// Accepts the result of a live lease from its holder; ignores anything else.
  /// A proof goes to the checker; on_checked takes it from there.
  void on_result(const partition_result& r);
  /// The checker's verdict on the proof node `node` sent for `lease`.
  void on_checked(uint64_t node, const cluster_lease& lease, const partition_spans& spans,
                  const node_proof_verdict& v);
  void on_job_cancelled(uint64_t seq);
  std::vector<node_metrics> node_list() const;
  /// A node's connection is gone: queue its leases again.
  void on_node_down(const caf::actor_addr& who);
  /// A held partition's wait ran out: queued again unless leased meanwhile.
  void on_hold_due(uint64_t id);
  /// A partition from the memory manager: lease it to a node, hold it for
  /// another node, or queue it again.
  void on_cluster_grant(const grant& g);

  // ---- helpers
  /// Pulls from the memory manager until outstanding pulls match the nodes' credit.
  void top_up_pulls();
  /// Queues a partition with the memory manager again (unless its job was cancelled).
  void requeue(partition_ref part, uint64_t bytes, uint64_t bulk);
  /// Node `node` stops getting work: its leases are queued again and it is told to drop them.
  void take_out_of_service(cluster_node& node, const std::string& why);
  /// The nodes whose proof of `part` failed its check; null when none did.
  const std::set<uint64_t>* failed_nodes_of(const partition_ref& part) const;
  /// The node with the most credit (fewest leases on a tie), other than those
  /// in `avoid`; null if none has any.
  cluster_node* pick_node(const std::set<uint64_t>* avoid = nullptr);
  /// Leases `part` to `node`, which has credit.
  void lease_to(cluster_node& node, partition_ref part, uint64_t bytes, uint64_t bulk);
  /// Leases held partitions to `node` while it has credit and did not fail them.
  void place_held(cluster_node& node);
  /// Node `node` sent a proof of `part` that failed its check: it is not
  /// leased that partition again while the job lives.
  void remember_failure(uint64_t node, const partition_ref& part);

  // ---- data
  pointer self;
  cluster_config cfg;
  proof_checker_actor checker;
  uint64_t next_node = 1;
  uint64_t next_lease = 1;
  uint64_t next_hold = 1;
  std::map<uint64_t, cluster_node> nodes;
  std::map<uint64_t, cluster_lease> leases;
  std::map<uint64_t, held_partition> held;  ///< by hold id, oldest first
  std::map<std::pair<uint64_t, uint32_t>, failed_nodes> failed_on;  ///< (job seq, index)
  uint32_t pulls = 0;  ///< pull requests outstanding at the memory manager
};

cluster_dispatcher_actor::behavior_type cluster_state::make_behavior(cluster_config config) {
  cfg = std::move(config);
  checker = spawn_proof_checker(*self, cfg.check_proof, cfg.write_file, cfg.detach);
  self->set_down_handler([this](caf::down_msg& dm) { on_node_down(dm.source); });
  return {
      [this](join_atom, const node_info& info, const node_actor& node) {
        return join_node(info, node);
      },
      [this](credit_atom, uint64_t node, uint32_t n) { on_credit(node, n); },
      [this](result_atom, const partition_result& r) { on_result(r); },
      [this](cancel_atom, uint64_t seq) { on_job_cancelled(seq); },
      [this](metrics_atom) { return node_list(); },
      [this](hold_atom, uint64_t id) { on_hold_due(id); },
  };
}

void cluster_state::on_hold_due(uint64_t id) {
  auto it = held.find(id);
  if (it == held.end()) return;  // leased meanwhile
  auto h = std::move(it->second);
  held.erase(it);
  requeue(std::move(h.part), h.bytes, h.bulk);
}

const std::set<uint64_t>* cluster_state::failed_nodes_of(const partition_ref& part) const {
  auto it = failed_on.find({part.job->seq, part.index});
  return it == failed_on.end() ? nullptr : &it->second.nodes;
}

cluster_node* cluster_state::pick_node(const std::set<uint64_t>* avoid) {
  cluster_node* best = nullptr;
  for (auto& [id, n] : nodes) {
    if (n.m.credit == 0 || (avoid && avoid->count(id))) continue;
    if (!best || n.m.credit > best->m.credit ||
        (n.m.credit == best->m.credit && n.leases.size() < best->leases.size()))
      best = &n;
  }
  return best;
}

void cluster_state::lease_to(cluster_node& node, partition_ref part, uint64_t bytes,
                             uint64_t bulk) {
  remote_partition rp;
  rp.lease = next_lease++;
  rp.job_seq = part.job->seq;
  rp.index = part.index;
  rp.job_id = part.job->spec.id;
  rp.zkey = part.job->spec.zkey;
  rp.prio = part.job->spec.prio;
  const std::string& witness = part.witness();
  if (const auto given = part.job->witness_bytes(part.index); given.data) {
    const auto* first = static_cast<const char*>(given.data);
    rp.witness_bytes.assign(first, first + given.size);  // given in memory: sent as inline bytes
  } else if (under_dir(witness, cfg.spool_dir)) {
    try {
      rp.witness_bytes = cfg.read_file(witness);
    } catch (const std::exception& e) {
      self->send(cfg.registry, partition_failed_atom::value,
                 partition_failure{part.job->seq, part.index, part.spans, {witness, e.what()}});
      return;
    }
  } else {
    rp.witness = witness;
  }
  --node.m.credit;
  node.leases.insert(rp.lease);
  leases[rp.lease] = cluster_lease{node.m.id, part, bytes, bulk, cfg.clock.now_ms()};
  spdlog::debug("cluster: lease {}: job {} partition {} to node {} ({})", rp.lease, rp.job_id,
                rp.index, node.m.id, node.m.info.name);
  self->send(cfg.registry, stage_atom::value, part.job->seq, part.index,
             partition_state::proving);
  self->send(node.handle, assign_atom::value, std::move(rp));
}

void cluster_state::place_held(cluster_node& node) {
  for (auto it = held.begin(); it != held.end() && node.m.credit > 0;) {
    const auto* avoid = failed_nodes_of(it->second.part);
    if (cancelled(it->second.part)) {
      it = held.erase(it);
    } else if (avoid && avoid->count(node.m.id)) {
      ++it;
    } else {
      auto h = std::move(it->second);
      it = held.erase(it);
      lease_to(node, std::move(h.part), h.bytes, h.bulk);
    }
  }
}

void cluster_state::remember_failure(uint64_t node, const partition_ref& part) {
  auto& failed = failed_on;
  for (auto it = failed.begin(); it != failed.end();)  // the entries of jobs that ended
    it = it->second.job.expired() ? failed.erase(it) : std::next(it);
  auto& entry = failed[{part.job->seq, part.index}];
  entry.job = part.job;
  entry.nodes.insert(node);
}

uint64_t cluster_state::join_node(const node_info& info, const node_actor& node) {
  uint64_t id = next_node++;
  auto& n = nodes[id];
  n.m.id = id;
  n.m.info = info;
  n.handle = node;
  n.addr = node.address();
  self->monitor(node);
  spdlog::info("cluster: node {} ({}) joined: {} backend(s), {} slot(s)", id, info.name,
               info.backends.size(), info.slots);
  return id;
}

void cluster_state::on_credit(uint64_t node, uint32_t n) {
  auto it = nodes.find(node);
  if (it == nodes.end()) return;
  if (caf::actor_cast<caf::actor_addr>(self->current_sender()) != it->second.addr) {
    spdlog::warn("cluster: credit for node {} from another actor ignored", node);
    return;
  }
  if (it->second.m.out_of_service) return;
  it->second.m.credit += n;
  place_held(it->second);
  top_up_pulls();
}

void cluster_state::top_up_pulls() {
  uint64_t credit = 0;
  for (const auto& [id, n] : nodes) credit += n.m.credit;
  while (pulls < credit) {
    ++pulls;
    self->request(cfg.memory, caf::infinite, grant_request_atom::value)
        .then([=](const grant& g) { on_cluster_grant(g); },
              [=](caf::error&) { self->quit(); });  // the memory manager is gone: shutting down
  }
}

void cluster_state::on_cluster_grant(const grant& g) {
  --pulls;
  partition_ref part = g.part;
  uint64_t bytes = g.reservation->granted();
  // The node proves with its own memory; the scheduler must not wait for this ticket.
  g.reservation->release_all();
  self->send(cfg.scheduler, skip_atom::value, part.ticket);
  part.ticket = 0;
  part.spans = {};
  if (cancelled(part)) return;
  const auto* avoid = failed_nodes_of(part);
  cluster_node* node = pick_node(avoid);
  if (!node && avoid && pick_node()) {
    // Only nodes whose proof of it failed have room: it waits for another,
    // while their credit goes on pulling other partitions.
    uint64_t id = next_hold++;
    held[id] = held_partition{std::move(part), bytes, g.bulk};
    self->delayed_send(self, cfg.hold, hold_atom::value, id);
    top_up_pulls();
    return;
  }
  if (!node) {  // every node with credit left meanwhile
    requeue(std::move(part), bytes, g.bulk);
    return;
  }
  lease_to(*node, std::move(part), bytes, g.bulk);
}

void cluster_state::requeue(partition_ref part, uint64_t bytes, uint64_t bulk) {
  if (cancelled(part)) return;
  part.ticket = 0;
  part.spans = {};
  self->send(cfg.registry, stage_atom::value, part.job->seq, part.index,
             partition_state::queued);
  work_order o;
  o.part = std::move(part);
  o.bytes = bytes;
  o.bulk = bulk;
  self->request(cfg.memory, caf::infinite, reserve_atom::value, std::vector<work_order>{o})
      .then([=](const std::vector<partition_failure>& refused) {
        for (const auto& f : refused) self->send(cfg.registry, partition_failed_atom::value, f);
      });
}

void cluster_state::on_result(const partition_result& r) {
  auto it = leases.find(r.lease);
  if (it == leases.end() || it->second.node != r.node) {
    spdlog::debug("cluster: ignoring a result for lease {} from node {} (taken back or done)",
                  r.lease, r.node);
    return;
  }
  auto nit = nodes.find(r.node);
  if (nit == nodes.end() ||
      caf::actor_cast<caf::actor_addr>(self->current_sender()) != nit->second.addr) {
    spdlog::warn("cluster: a result for lease {} came from an actor that does not hold it",
                 r.lease);
    return;
  }
  cluster_lease lease = std::move(it->second);
  leases.erase(it);
  auto& node = nit->second;
  node.leases.erase(r.lease);
  const partition_ref& part = lease.part;
  const job_context& job = *part.job;
  if (cancelled(part)) return;
  double now = cfg.clock.now_ms();
  partition_spans spans = shift_spans(r.spans, now);
  spans.memory = part.spans.memory;  // its wait here, not at the node's own memory manager
  if (!r.ok) {
    ++node.m.failed;
    self->send(cfg.registry, partition_failed_atom::value,
               partition_failure{job.seq, part.index, spans, r.error});
    return;
  }
  // Checked, and written if it verifies, on the checker's thread, once the
  // registry lets it be written (claim_atom: not if the job was cancelled
  // meanwhile); the registry then waits for its report.
  const uint64_t from = r.node;
  auto proof = node_proof{lease.part.job, part.index, r.proof_json, r.public_json};
  self->request(cfg.registry, caf::infinite, claim_atom::value, job.seq, part.index)
      .then(
          [=](bool granted) {
            if (!granted) return;
            self->request(checker, caf::infinite, check_atom::value, proof)
                .then(
                    [=](const node_proof_verdict& v) { on_checked(from, lease, spans, v); },
                    [=](caf::error& e) {
                      spdlog::error("cluster: the proof checker failed: {}",
                                    self->system().render(e));
                      self->send(cfg.registry, partition_failed_atom::value,
                                 partition_failure{proof.job->seq, proof.index, spans,
                                                   {"", "the coordinator's proof checker failed: " +
                                                            self->system().render(e)}});
                    });
          },
          [](caf::error&) {});  // the registry is gone: shutting down
}

void cluster_state::on_checked(uint64_t from, const cluster_lease& lease,
                               const partition_spans& spans, const node_proof_verdict& v) {
  const partition_ref& part = lease.part;
  const job_context& job = *part.job;
  // Claimed: reported whatever a cancel says now (the job waits for it).
  auto nit = nodes.find(from);
  cluster_node* node = nit == nodes.end() ? nullptr : &nit->second;
  const std::string who = node ? node_name(*node) : "node " + std::to_string(from) + " (gone)";
  if (!v.problem.empty()) {
    spdlog::warn("cluster: {} sent a proof of job {} partition {} that fails the check: {}; "
                 "not written, proved again elsewhere",
                 who, job.spec.id, part.index, v.problem);
    remember_failure(from, part);
    partition_failure f{job.seq, part.index, spans,
                        {"", who + ": its proof fails the coordinator's check: " + v.problem}};
    f.retryable = f.check_failed = true;
    f.spans.gpu = -1;  // the node's backend index means nothing here
    f.spans.backend = who;
    self->send(cfg.registry, partition_failed_atom::value, std::move(f));
    if (node && ++node->m.bad_proofs >= cfg.max_bad_proofs && !node->m.out_of_service)
      take_out_of_service(*node,
                          std::to_string(node->m.bad_proofs) +
                              " of its proofs failed the coordinator's check");
    return;
  }
  if (!v.written) {
    self->send(cfg.registry, partition_failed_atom::value,
               partition_failure{job.seq, part.index, spans, v.write_error});
    return;
  }
  if (node) ++node->m.proved;
  failed_on.erase({job.seq, part.index});
  const std::string proof_name = job.proof_name(part.index);
  spdlog::debug("cluster: wrote {} of job {} (partition {}, lease {}, {})", proof_name,
                job.spec.id, part.index, lease.node, who);
  partition_done d{job.seq, part.index, spans, proof_name, job.public_name(part.index)};
  d.verified = true;
  d.verify_ms = v.verify_ms;
  if (job.returns_outputs()) {
    d.proof_file.clear();
    d.public_file.clear();
    d.proof_json = v.proof_json;
    d.public_json = v.public_json;
  }
  self->send(cfg.registry, partition_done_atom::value, std::move(d));
}

void cluster_state::take_out_of_service(cluster_node& node, const std::string& why) {
  node.m.out_of_service = true;
  node.m.credit = 0;
  std::set<uint64_t> jobs;
  for (auto lease : node.leases) {
    auto lit = leases.find(lease);
    if (lit == leases.end()) continue;
    jobs.insert(lit->second.part.job->seq);
    requeue(lit->second.part, lit->second.bytes, lit->second.bulk);
    leases.erase(lit);
    ++node.m.requeued;
  }
  const size_t n = node.leases.size();
  node.leases.clear();
  for (auto seq : jobs) self->send(node.handle, cancel_atom::value, seq);
  spdlog::error("cluster: {} taken out of service: {}; {} partition(s) it held queued again; it "
                "gets no more work until it joins again",
                node_name(node), why, n);
}

void cluster_state::on_job_cancelled(uint64_t seq) {
  for (auto it = held.begin(); it != held.end();)
    it = it->second.part.job->seq == seq ? held.erase(it) : std::next(it);
  for (auto it = failed_on.begin(); it != failed_on.end();)
    it = it->first.first == seq ? failed_on.erase(it) : std::next(it);
  std::set<uint64_t> told;
  for (auto it = leases.begin(); it != leases.end();) {
    if (it->second.part.job->seq != seq) {
      ++it;
      continue;
    }
    auto nit = nodes.find(it->second.node);
    if (nit != nodes.end()) {
      nit->second.leases.erase(it->first);
      ++nit->second.m.requeued;
      if (told.insert(nit->first).second)
        self->send(nit->second.handle, cancel_atom::value, seq);
    }
    it = leases.erase(it);
  }
}

std::vector<node_metrics> cluster_state::node_list() const {
  std::vector<node_metrics> out;
  for (const auto& [id, n] : nodes) {
    node_metrics m = n.m;
    m.leased = static_cast<uint32_t>(n.leases.size());
    out.push_back(std::move(m));
  }
  return out;
}

void cluster_state::on_node_down(const caf::actor_addr& who) {
  for (auto it = nodes.begin(); it != nodes.end(); ++it) {
    if (it->second.addr != who) continue;
    auto node = std::move(it->second);
    nodes.erase(it);
    size_t n = 0;
    for (auto lease : node.leases) {
      auto lit = leases.find(lease);
      if (lit == leases.end()) continue;
      requeue(lit->second.part, lit->second.bytes, lit->second.bulk);
      leases.erase(lit);
      ++n;
    }
    spdlog::warn("cluster: node {} ({}) left; {} partition(s) queued again", node.m.id,
                 node.m.info.name, n);
    return;
  }
}

}  // namespace

cluster_dispatcher_actor spawn_cluster_dispatcher(caf::actor_system& sys, cluster_config cfg) {
  return spawn_stateful<cluster_state>(sys, std::move(cfg));
}

}  // namespace proofline
