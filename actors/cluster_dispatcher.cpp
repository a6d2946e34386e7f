#include "actors/cluster_dispatcher.hpp"

#include <caf/actor_cast.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/sec.hpp>

#include <chrono>

#include <spdlog/spdlog.h>

namespace proofline {

namespace {

bool cancelled(const partition_ref& part) {
  return part.job->cancelled.load(std::memory_order_acquire);
}

/// The nodes whose proof of `part` failed its check; null when none did.
const std::set<uint64_t>* failed_nodes_of(cluster_pointer self, const partition_ref& part) {
  auto it = self->state.failed_on.find({part.job->seq, part.index});
  return it == self->state.failed_on.end() ? nullptr : &it->second.nodes;
}

/// The node with the most credit (fewest leases on a tie), other than those
/// in `avoid`; null if none has any.
cluster_node* pick_node(cluster_pointer self, const std::set<uint64_t>* avoid = nullptr) {
  cluster_node* best = nullptr;
  for (auto& [id, n] : self->state.nodes) {
    if (n.m.credit == 0 || (avoid && avoid->count(id))) continue;
    if (!best || n.m.credit > best->m.credit ||
        (n.m.credit == best->m.credit && n.leases.size() < best->leases.size()))
      best = &n;
  }
  return best;
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

std::string node_name(const cluster_node& n) {
  return "node " + std::to_string(n.m.id) + " (" + n.m.info.name + ")";
}

/// Leases `part` to `node`, which has credit.
void lease_to(cluster_pointer self, cluster_node& node, partition_ref part, uint64_t bytes,
              uint64_t bulk) {
  auto& st = self->state;
  remote_partition rp;
  rp.lease = st.next_lease++;
  rp.job_seq = part.job->seq;
  rp.index = part.index;
  rp.job_id = part.job->spec.id;
  rp.zkey = part.job->spec.zkey;
  rp.prio = part.job->spec.prio;
  const std::string& witness = part.witness();
  if (const auto given = part.job->witness_bytes(part.index); given.data) {
    const auto* first = static_cast<const char*>(given.data);
    rp.witness_bytes.assign(first, first + given.size);  // given in memory: sent as inline bytes
  } else if (under_dir(witness, st.cfg.spool_dir)) {
    try {
      rp.witness_bytes = st.cfg.read_file(witness);
    } catch (const std::exception& e) {
      self->send(st.cfg.registry, partition_failed_atom::value,
                 partition_failure{part.job->seq, part.index, part.spans, {witness, e.what()}});
      return;
    }
  } else {
    rp.witness = witness;
  }
  --node.m.credit;
  node.leases.insert(rp.lease);
  st.leases[rp.lease] = cluster_lease{node.m.id, part, bytes, bulk, st.cfg.clock.now_ms()};
  spdlog::debug("cluster: lease {}: job {} partition {} to node {} ({})", rp.lease, rp.job_id,
                rp.index, node.m.id, node.m.info.name);
  self->send(st.cfg.registry, stage_atom::value, part.job->seq, part.index,
             partition_state::proving);
  self->send(node.handle, assign_atom::value, std::move(rp));
}

/// Leases held partitions to `node` while it has credit and did not fail them.
void place_held(cluster_pointer self, cluster_node& node) {
  auto& st = self->state;
  for (auto it = st.held.begin(); it != st.held.end() && node.m.credit > 0;) {
    const auto* avoid = failed_nodes_of(self, it->second.part);
    if (cancelled(it->second.part)) {
      it = st.held.erase(it);
    } else if (avoid && avoid->count(node.m.id)) {
      ++it;
    } else {
      auto h = std::move(it->second);
      it = st.held.erase(it);
      lease_to(self, node, std::move(h.part), h.bytes, h.bulk);
    }
  }
}

/// Node `node` sent a proof of `part` that failed its check: it is not
/// leased that partition again while the job lives.
void remember_failure(cluster_pointer self, uint64_t node, const partition_ref& part) {
  auto& failed = self->state.failed_on;
  for (auto it = failed.begin(); it != failed.end();)  // the entries of jobs that ended
    it = it->second.job.expired() ? failed.erase(it) : std::next(it);
  auto& entry = failed[{part.job->seq, part.index}];
  entry.job = part.job;
  entry.nodes.insert(node);
}

}  // namespace

proof_checker_actor::behavior_type proof_checker(proof_checker_actor::pointer,
                                                 decltype(cluster_config::check_proof) check,
                                                 decltype(cluster_config::write_file) write) {
  return {
      [=](check_atom, const node_proof& p) {
        const job_context& job = *p.job;
        const std::string proof_name = job.proof_name(p.index);
        const std::string public_name = job.public_name(p.index);
        node_proof_verdict v;
        const auto t0 = std::chrono::steady_clock::now();
        v.problem = check ? check(job.key, p.proof_json, p.public_json, proof_name, public_name)
                          : std::string("the coordinator has no proof check");
        v.verify_ms = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - t0)
                          .count();
        // Claimed by the dispatcher before it asked: written whatever a
        // cancel says now (the job completes once this is reported).
        if (!v.problem.empty()) return v;
        if (job.returns_outputs()) {  // the proof goes back in the job's report, not to a file
          v.proof_json = p.proof_json;
          v.public_json = p.public_json;
          v.written = true;
          return v;
        }
        std::string path = job.out_path(proof_name);
        try {
          write(path, p.proof_json);
          path = job.out_path(public_name);
          write(path, p.public_json);
          v.written = true;
        } catch (const std::exception& e) {
          v.write_error = {path, e.what()};
        }
        return v;
      },
  };
}

cluster_dispatcher_actor::behavior_type cluster_dispatcher(cluster_pointer self,
                                                           cluster_config cfg) {
  self->state.cfg = std::move(cfg);
  auto& c = self->state.cfg;
  self->state.checker = c.detach ? self->spawn<caf::detached + caf::linked>(
                                       proof_checker, c.check_proof, c.write_file)
                                 : self->spawn<caf::linked>(proof_checker, c.check_proof,
                                                            c.write_file);
  self->set_down_handler([=](caf::down_msg& dm) { on_node_down(self, dm.source); });
  return {
      [=](join_atom, const node_info& info, const node_actor& node) {
        return join_node(self, info, node);
      },
      [=](credit_atom, uint64_t node, uint32_t n) { on_credit(self, node, n); },
      [=](result_atom, const partition_result& r) { on_result(self, r); },
      [=](cancel_atom, uint64_t seq) { on_job_cancelled(self, seq); },
      [=](metrics_atom) { return node_list(self); },
      [=](hold_atom, uint64_t id) {
        auto it = self->state.held.find(id);
        if (it == self->state.held.end()) return;  // leased meanwhile
        auto h = std::move(it->second);
        self->state.held.erase(it);
        requeue(self, std::move(h.part), h.bytes, h.bulk);
      },
  };
}

uint64_t join_node(cluster_pointer self, const node_info& info, const node_actor& node) {
  auto& st = self->state;
  uint64_t id = st.next_node++;
  auto& n = st.nodes[id];
  n.m.id = id;
  n.m.info = info;
  n.handle = node;
  n.addr = node.address();
  self->monitor(node);
  spdlog::info("cluster: node {} ({}) joined: {} backend(s), {} slot(s)", id, info.name,
               info.backends.size(), info.slots);
  return id;
}

void on_credit(cluster_pointer self, uint64_t node, uint32_t n) {
  auto it = self->state.nodes.find(node);
  if (it == self->state.nodes.end()) return;
  if (caf::actor_cast<caf::actor_addr>(self->current_sender()) != it->second.addr) {
    spdlog::warn("cluster: credit for node {} from another actor ignored", node);
    return;
  }
  if (it->second.m.out_of_service) return;
  it->second.m.credit += n;
  place_held(self, it->second);
  top_up_pulls(self);
}

void top_up_pulls(cluster_pointer self) {
  auto& st = self->state;
  uint64_t credit = 0;
  for (const auto& [id, n] : st.nodes) credit += n.m.credit;
  while (st.pulls < credit) {
    ++st.pulls;
    self->request(st.cfg.memory, caf::infinite, grant_request_atom::value)
        .then([=](const grant& g) { on_cluster_grant(self, g); },
              [=](caf::error&) { self->quit(); });  // the memory manager is gone: shutting down
  }
}

void on_cluster_grant(cluster_pointer self, const grant& g) {
  auto& st = self->state;
  --st.pulls;
  partition_ref part = g.part;
  uint64_t bytes = g.reservation->granted();
  // The node proves with its own memory; the scheduler must not wait for this ticket.
  g.reservation->release_all();
  self->send(st.cfg.scheduler, skip_atom::value, part.ticket);
  part.ticket = 0;
  part.spans = {};
  if (cancelled(part)) return;
  const auto* avoid = failed_nodes_of(self, part);
  cluster_node* node = pick_node(self, avoid);
  if (!node && avoid && pick_node(self)) {
    // Only nodes whose proof of it failed have room: it waits for another,
    // while their credit goes on pulling other partitions.
    uint64_t id = st.next_hold++;
    st.held[id] = held_partition{std::move(part), bytes, g.bulk};
    self->delayed_send(self, st.cfg.hold, hold_atom::value, id);
    top_up_pulls(self);
    return;
  }
  if (!node) {  // every node with credit left meanwhile
    requeue(self, std::move(part), bytes, g.bulk);
    return;
  }
  lease_to(self, *node, std::move(part), bytes, g.bulk);
}

void requeue(cluster_pointer self, partition_ref part, uint64_t bytes, uint64_t bulk) {
  if (cancelled(part)) return;
  auto& st = self->state;
  part.ticket = 0;
  part.spans = {};
  self->send(st.cfg.registry, stage_atom::value, part.job->seq, part.index,
             partition_state::queued);
  work_order o;
  o.part = std::move(part);
  o.bytes = bytes;
  o.bulk = bulk;
  self->request(st.cfg.memory, caf::infinite, reserve_atom::value, std::vector<work_order>{o})
      .then([=](const std::vector<partition_failure>& refused) {
        for (const auto& f : refused) self->send(self->state.cfg.registry, partition_failed_atom::value, f);
      });
}

void on_result(cluster_pointer self, const partition_result& r) {
  auto& st = self->state;
  auto it = st.leases.find(r.lease);
  if (it == st.leases.end() || it->second.node != r.node) {
    spdlog::debug("cluster: ignoring a result for lease {} from node {} (taken back or done)",
                  r.lease, r.node);
    return;
  }
  auto nit = st.nodes.find(r.node);
  if (nit == st.nodes.end() ||
      caf::actor_cast<caf::actor_addr>(self->current_sender()) != nit->second.addr) {
    spdlog::warn("cluster: a result for lease {} came from an actor that does not hold it",
                 r.lease);
    return;
  }
  cluster_lease lease = std::move(it->second);
  st.leases.erase(it);
  auto& node = nit->second;
  node.leases.erase(r.lease);
  const partition_ref& part = lease.part;
  const job_context& job = *part.job;
  if (cancelled(part)) return;
  double now = st.cfg.clock.now_ms();
  partition_spans spans = shift_spans(r.spans, now);
  spans.memory = part.spans.memory;  // its wait here, not at the node's own memory manager
  if (!r.ok) {
    ++node.m.failed;
    self->send(st.cfg.registry, partition_failed_atom::value,
               partition_failure{job.seq, part.index, spans, r.error});
    return;
  }
  // Checked, and written if it verifies, on the checker's thread, once the
  // registry lets it be written (claim_atom: not if the job was cancelled
  // meanwhile); the registry then waits for its report.
  const uint64_t from = r.node;
  auto proof = node_proof{lease.part.job, part.index, r.proof_json, r.public_json};
  self->request(st.cfg.registry, caf::infinite, claim_atom::value, job.seq, part.index)
      .then(
          [=](bool granted) {
            if (!granted) return;
            self->request(self->state.checker, caf::infinite, check_atom::value, proof)
                .then(
                    [=](const node_proof_verdict& v) { on_checked(self, from, lease, spans, v); },
                    [=](caf::error& e) {
                      spdlog::error("cluster: the proof checker failed: {}",
                                    self->system().render(e));
                      self->send(self->state.cfg.registry, partition_failed_atom::value,
                                 partition_failure{proof.job->seq, proof.index, spans,
                                                   {"", "the coordinator's proof checker failed: " +
                                                            self->system().render(e)}});
                    });
          },
          [](caf::error&) {});  // the registry is gone: shutting down
}

void on_checked(cluster_pointer self, uint64_t from, const cluster_lease& lease,
                const partition_spans& spans, const node_proof_verdict& v) {
  auto& st = self->state;
  const partition_ref& part = lease.part;
  const job_context& job = *part.job;
  // Claimed: reported whatever a cancel says now (the job waits for it).
  auto nit = st.nodes.find(from);
  cluster_node* node = nit == st.nodes.end() ? nullptr : &nit->second;
  const std::string who = node ? node_name(*node) : "node " + std::to_string(from) + " (gone)";
  if (!v.problem.empty()) {
    spdlog::warn("cluster: {} sent a proof of job {} partition {} that fails the check: {}; "
                 "not written, proved again elsewhere",
                 who, job.spec.id, part.index, v.problem);
    remember_failure(self, from, part);
    partition_failure f{job.seq, part.index, spans,
                        {"", who + ": its proof fails the coordinator's check: " + v.problem}};
    f.retryable = f.check_failed = true;
    f.spans.gpu = -1;  // the node's backend index means nothing here
    f.spans.backend = who;
    self->send(st.cfg.registry, partition_failed_atom::value, std::move(f));
    if (node && ++node->m.bad_proofs >= st.cfg.max_bad_proofs && !node->m.out_of_service)
      take_out_of_service(self, *node,
                          std::to_string(node->m.bad_proofs) +
                              " of its proofs failed the coordinator's check");
    return;
  }
  if (!v.written) {
    self->send(st.cfg.registry, partition_failed_atom::value,
               partition_failure{job.seq, part.index, spans, v.write_error});
    return;
  }
  if (node) ++node->m.proved;
  st.failed_on.erase({job.seq, part.index});
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
  self->send(st.cfg.registry, partition_done_atom::value, std::move(d));
}

void take_out_of_service(cluster_pointer self, cluster_node& node, const std::string& why) {
  auto& st = self->state;
  node.m.out_of_service = true;
  node.m.credit = 0;
  std::set<uint64_t> jobs;
  for (auto lease : node.leases) {
    auto lit = st.leases.find(lease);
    if (lit == st.leases.end()) continue;
    jobs.insert(lit->second.part.job->seq);
    requeue(self, lit->second.part, lit->second.bytes, lit->second.bulk);
    st.leases.erase(lit);
    ++node.m.requeued;
  }
  const size_t n = node.leases.size();
  node.leases.clear();
  for (auto seq : jobs) self->send(node.handle, cancel_atom::value, seq);
  spdlog::error("cluster: {} taken out of service: {}; {} partition(s) it held queued again; it "
                "gets no more work until it joins again",
                node_name(node), why, n);
}

void on_job_cancelled(cluster_pointer self, uint64_t seq) {
  auto& st = self->state;
  for (auto it = st.held.begin(); it != st.held.end();)
    it = it->second.part.job->seq == seq ? st.held.erase(it) : std::next(it);
  for (auto it = st.failed_on.begin(); it != st.failed_on.end();)
    it = it->first.first == seq ? st.failed_on.erase(it) : std::next(it);
  std::set<uint64_t> told;
  for (auto it = st.leases.begin(); it != st.leases.end();) {
    if (it->second.part.job->seq != seq) {
      ++it;
      continue;
    }
    auto nit = st.nodes.find(it->second.node);
    if (nit != st.nodes.end()) {
      nit->second.leases.erase(it->first);
      ++nit->second.m.requeued;
      if (told.insert(nit->first).second)
        self->send(nit->second.handle, cancel_atom::value, seq);
    }
    it = st.leases.erase(it);
  }
}

std::vector<node_metrics> node_list(cluster_pointer self) {
  std::vector<node_metrics> out;
  for (const auto& [id, n] : self->state.nodes) {
    node_metrics m = n.m;
    m.leased = static_cast<uint32_t>(n.leases.size());
    out.push_back(std::move(m));
  }
  return out;
}

void on_node_down(cluster_pointer self, const caf::actor_addr& who) {
  auto& st = self->state;
  for (auto it = st.nodes.begin(); it != st.nodes.end(); ++it) {
    if (it->second.addr != who) continue;
    auto node = std::move(it->second);
    st.nodes.erase(it);
    size_t n = 0;
    for (auto lease : node.leases) {
      auto lit = st.leases.find(lease);
      if (lit == st.leases.end()) continue;
      requeue(self, lit->second.part, lit->second.bytes, lit->second.bulk);
      st.leases.erase(lit);
      ++n;
    }
    spdlog::warn("cluster: node {} ({}) left; {} partition(s) queued again", node.m.id,
                 node.m.info.name, n);
    return;
  }
}

}  // namespace proofline
