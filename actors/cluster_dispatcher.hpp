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
// result: proof.json and public.json text -> checked by pairing against the
// job's verification key and, if it verifies, written into the job's out
// directory (only the coordinator writes outputs) and reported to the
// registry -> lease ends.
//
// Nodes are checked, not trusted: a node may run with corrupted output
// (--no-verify, a faulty GPU) or be any peer that joined an --insecure
// coordinator. Every proof a node sends is checked before it is written, by
// the dispatcher's proof checker (a helper actor, detached in production:
// a pairing costs milliseconds, and the writes an fsync each), which also
// writes the files. A proof that fails is never written: the partition is
// reported to the registry as a retryable failure, so it is proved again
// under the retry policy (actors/detail/retry_policy.hpp) and never again on that
// node (a grant of it finding only that node with credit is held until
// another node has room, and queued again after `hold` so local proving can
// take it); the node's bad_proofs counter rises and the log says so. After
// `max_bad_proofs` bad proofs a node is taken out of service: its leases are
// queued again, it is told to cancel them, and its credit is ignored until
// it joins again (a restarted node joins with a new id).
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

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "actors/detail/run_clock.hpp"
#include "messages/interfaces.hpp"

namespace proofline {

/// A node's proof on its way to the coordinator's proof checker.
struct node_proof {
  job_ptr job;
  uint32_t index = 0;
  std::string proof_json;
  std::string public_json;
};

/// The checker's answer: the check's verdict and, when it verified, whether
/// the files were written.
struct node_proof_verdict {
  std::string problem;  ///< why the proof does not verify; empty when it does
  double verify_ms = 0;
  file_error write_error;  ///< set when writing the files failed
  bool written = false;    ///< false also when the job was cancelled meanwhile
  /// The proof's text, for a job whose outputs come back in its report
  /// (nothing is written then; `written` says it verified).
  std::string proof_json;
  std::string public_json;
};

}  // namespace proofline

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::node_proof)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::node_proof_verdict)

namespace proofline {

/// The dispatcher's helper that checks nodes' proofs and writes those that verify.
using proof_checker_actor =
    caf::typed_actor<caf::replies_to<check_atom, node_proof>::with<node_proof_verdict>>;

/// The dispatcher with its local-only timer message; everyone else sees cluster_actor.
using cluster_dispatcher_actor = cluster_actor::extend<caf::reacts_to<hold_atom, uint64_t>>;

struct cluster_config {
  memory_manager_actor memory;
  scheduler_actor scheduler;
  job_registry_actor registry;
  /// Writes a file atomically; throws std::runtime_error naming the path.
  std::function<void(const std::string& path, std::string_view contents)> write_file;
  /// Reads a whole file (inline witnesses from the spool); throws naming the path.
  std::function<std::vector<uint8_t>(const std::string& path)> read_file;
  /// Why a node's proof.json and public.json text (named as the last two
  /// arguments in messages) do not verify against the key; empty when they
  /// do (actors/detail/proof_check.hpp: check_proof_text). Runs on the checker's
  /// thread. Without one, every node's proof counts as failing.
  std::function<std::string(const zk::groth16::key_ptr& key, const std::string& proof_json,
                            const std::string& public_json, const std::string& proof_name,
                            const std::string& public_name)>
      check_proof;
  std::string spool_dir;  ///< witnesses under it travel inline to nodes
  run_clock clock;
  /// The proof checker on a thread of its own (production); false keeps it
  /// on the scheduler, which deterministic tests need.
  bool detach = true;
  /// Bad proofs after which a node is taken out of service.
  uint32_t max_bad_proofs = 3;
  /// How long a partition waits for a node other than those whose proof of
  /// it failed before it is queued again.
  std::chrono::milliseconds hold{1000};
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

struct cluster_state {
  static inline const char* name = "cluster_dispatcher";
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

using cluster_pointer = cluster_dispatcher_actor::stateful_pointer<cluster_state>;

cluster_dispatcher_actor::behavior_type cluster_dispatcher(cluster_pointer self,
                                                           cluster_config cfg);

/// The proof checker: checks a node's proof with `check` and, when it
/// verifies and its job is not cancelled, writes both files with `write`.
proof_checker_actor::behavior_type proof_checker(proof_checker_actor::pointer self,
                                                 decltype(cluster_config::check_proof) check,
                                                 decltype(cluster_config::write_file) write);

uint64_t join_node(cluster_pointer self, const node_info& info, const node_actor& node);
void on_credit(cluster_pointer self, uint64_t node, uint32_t n);
/// Accepts the result of a live lease from its holder; ignores anything else.
/// A proof goes to the checker; on_checked takes it from there.
void on_result(cluster_pointer self, const partition_result& r);
/// The checker's verdict on the proof node `node` sent for `lease`.
void on_checked(cluster_pointer self, uint64_t node, const cluster_lease& lease,
                const partition_spans& spans, const node_proof_verdict& v);
void on_job_cancelled(cluster_pointer self, uint64_t seq);
std::vector<node_metrics> node_list(cluster_pointer self);
/// A node's connection is gone: queue its leases again.
void on_node_down(cluster_pointer self, const caf::actor_addr& who);
/// Pulls from the memory manager until outstanding pulls match the nodes' credit.
void top_up_pulls(cluster_pointer self);
/// A partition from the memory manager: lease it to a node, hold it for
/// another node, or queue it again.
void on_cluster_grant(cluster_pointer self, const grant& g);
/// Queues a partition with the memory manager again (unless its job was cancelled).
void requeue(cluster_pointer self, partition_ref part, uint64_t bytes, uint64_t bulk);
/// Node `node` stops getting work: its leases are queued again and it is told to drop them.
void take_out_of_service(cluster_pointer self, cluster_node& node, const std::string& why);

}  // namespace proofline
