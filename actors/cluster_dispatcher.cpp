#include "actors/cluster_dispatcher.hpp"

#include <caf/actor_cast.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/sec.hpp>

#include <spdlog/spdlog.h>

namespace proofline {

namespace {

bool cancelled(const partition_ref& part) {
  return part.job->cancelled.load(std::memory_order_acquire);
}

/// The node with the most credit (fewest leases on a tie); null if none has any.
cluster_node* pick_node(cluster_pointer self) {
  cluster_node* best = nullptr;
  for (auto& [id, n] : self->state.nodes) {
    if (n.m.credit == 0) continue;
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

}  // namespace

cluster_actor::behavior_type cluster_dispatcher(cluster_pointer self, cluster_config cfg) {
  self->state.cfg = std::move(cfg);
  self->set_down_handler([=](caf::down_msg& dm) { on_node_down(self, dm.source); });
  return {
      [=](join_atom, const node_info& info, const node_actor& node) {
        return join_node(self, info, node);
      },
      [=](credit_atom, uint64_t node, uint32_t n) { on_credit(self, node, n); },
      [=](result_atom, const partition_result& r) { on_result(self, r); },
      [=](cancel_atom, uint64_t seq) { on_job_cancelled(self, seq); },
      [=](metrics_atom) { return node_list(self); },
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
  it->second.m.credit += n;
  top_up_pulls(self);
}

void top_up_pulls(cluster_pointer self) {
  auto& st = self->state;
  uint64_t credit = 0;
  for (const auto& [id, n] : st.nodes) credit += n.m.credit;
  while (st.pulls < credit) {
    ++st.pulls;
    self->request(st.cfg.memory, caf::infinite, pull_atom::value)
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
  cluster_node* node = pick_node(self);
  if (!node) {  // every node with credit left meanwhile
    requeue(self, std::move(part), bytes, g.bulk);
    return;
  }
  remote_partition rp;
  rp.lease = st.next_lease++;
  rp.job_seq = part.job->seq;
  rp.index = part.index;
  rp.job_id = part.job->spec.id;
  rp.zkey = part.job->spec.zkey;
  rp.prio = part.job->spec.prio;
  const std::string& witness = part.witness();
  if (const auto bytes = part.job->witness_bytes(part.index); bytes.data) {
    const auto* first = static_cast<const char*>(bytes.data);
    rp.witness_bytes.assign(first, first + bytes.size);  // given in memory: sent as inline bytes
  } else if (under_dir(witness, st.cfg.spool_dir)) {
    try {
      rp.witness_bytes = st.cfg.read_file(witness);
    } catch (const std::exception& e) {
      self->send(st.cfg.registry, failed_atom::value,
                 partition_failure{part.job->seq, part.index, part.spans, {witness, e.what()}});
      return;
    }
  } else {
    rp.witness = witness;
  }
  --node->m.credit;
  node->leases.insert(rp.lease);
  st.leases[rp.lease] = cluster_lease{node->m.id, part, bytes, g.bulk, st.cfg.clock.now_ms()};
  spdlog::debug("cluster: lease {}: job {} partition {} to node {} ({})", rp.lease, rp.job_id,
                rp.index, node->m.id, node->m.info.name);
  self->send(st.cfg.registry, stage_atom::value, part.job->seq, part.index,
             partition_state::proving);
  self->send(node->handle, assign_atom::value, std::move(rp));
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
        for (const auto& f : refused) self->send(self->state.cfg.registry, failed_atom::value, f);
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
    self->send(st.cfg.registry, failed_atom::value,
               partition_failure{job.seq, part.index, spans, r.error});
    return;
  }
  std::string proof_name = job.proof_name(part.index);
  std::string public_name = job.public_name(part.index);
  if (job.returns_outputs()) {  // the proof goes back in the job's report, not to a file
    ++node.m.proved;
    partition_done done;
    done.job_seq = job.seq;
    done.index = part.index;
    done.spans = spans;
    done.proof_json = r.proof_json;
    done.public_json = r.public_json;
    self->send(st.cfg.registry, done_atom::value, std::move(done));
    return;
  }
  try {
    st.cfg.write_file(job.out_path(proof_name), r.proof_json);
    st.cfg.write_file(job.out_path(public_name), r.public_json);
  } catch (const std::exception& e) {
    self->send(st.cfg.registry, failed_atom::value,
               partition_failure{job.seq, part.index, spans, {job.out_path(proof_name), e.what()}});
    return;
  }
  ++node.m.proved;
  spdlog::debug("cluster: wrote {} of job {} (partition {}, lease {}, node {})", proof_name,
                job.spec.id, part.index, r.lease, node.m.info.name);
  self->send(st.cfg.registry, done_atom::value,
             partition_done{job.seq, part.index, spans, proof_name, public_name});
}

void on_job_cancelled(cluster_pointer self, uint64_t seq) {
  auto& st = self->state;
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
