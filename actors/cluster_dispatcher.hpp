// cluster_dispatcher: on a coordinator, the only owner of nodes and leases.
// Nodes (`serve --join`, actors/node_agent.hpp) join through the control
// actor and announce credit (room for n more partitions); the dispatcher
// pulls that many partitions from the memory manager, in the same global
// order (priority, job sequence, partition index) local synthesizers get
// them, and leases each to the node with the most credit.
//
// Lifecycle of a lease: grant from the memory manager -> the reservation is
// released at once (a node's partition uses the node's memory, not ours) and
// the scheduler is told to skip its ticket -> assign to a node -> the node's
// result: proof.json and public.json text, written here into the job's out
// directory (only the coordinator writes outputs) and reported to the
// registry -> lease ends.
//
// Nothing lost, nothing twice: a node is monitored from its join on; when it
// goes (its connection drops or its heartbeats stop) each of its leases ends
// and its partition is queued again with the memory manager, where anyone
// (another node, a local synthesizer) can take it. A result is accepted only
// for a live lease, from the node that holds it, so a late or repeated result
// for a partition already taken back or done is ignored. A cancelled job's
// leases end and its nodes are told to drop it.
#pragma once

#include <caf/actor_addr.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "actors/run_clock.hpp"
#include "messages/interfaces.hpp"

namespace proofline {

struct cluster_config {
  memory_manager_actor memory;
  scheduler_actor scheduler;
  job_registry_actor registry;
  /// Writes a file atomically; throws std::runtime_error naming the path.
  std::function<void(const std::string& path, std::string_view contents)> write_file;
  /// Reads a whole file (inline witnesses from the spool); throws naming the path.
  std::function<std::vector<uint8_t>(const std::string& path)> read_file;
  std::string spool_dir;  ///< witnesses under it travel inline to nodes
  run_clock clock;
};

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

struct cluster_state {
  static inline const char* name = "cluster_dispatcher";
  cluster_config cfg;
  uint64_t next_node = 1;
  uint64_t next_lease = 1;
  std::map<uint64_t, cluster_node> nodes;
  std::map<uint64_t, cluster_lease> leases;
  uint32_t pulls = 0;  ///< pull requests outstanding at the memory manager
};

using cluster_pointer = cluster_actor::stateful_pointer<cluster_state>;

cluster_actor::behavior_type cluster_dispatcher(cluster_pointer self, cluster_config cfg);

uint64_t join_node(cluster_pointer self, const node_info& info, const node_actor& node);
void on_credit(cluster_pointer self, uint64_t node, uint32_t n);
/// Accepts the result of a live lease from its holder; ignores anything else.
void on_result(cluster_pointer self, const partition_result& r);
void on_job_cancelled(cluster_pointer self, uint64_t seq);
std::vector<node_metrics> node_list(cluster_pointer self);
/// A node's connection is gone: queue its leases again.
void on_node_down(cluster_pointer self, const caf::actor_addr& who);
/// Pulls from the memory manager until outstanding pulls match the nodes' credit.
void top_up_pulls(cluster_pointer self);
/// A partition from the memory manager: lease it to a node, or queue it again.
void on_cluster_grant(cluster_pointer self, const grant& g);
/// Queues a partition with the memory manager again (unless its job was cancelled).
void requeue(cluster_pointer self, partition_ref part, uint64_t bytes, uint64_t bulk);

}  // namespace proofline
