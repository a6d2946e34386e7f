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

#include <caf/fwd.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "actors/detail/run_clock.hpp"
#include "messages/interfaces.hpp"

namespace proofline {

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

/// Spawns the cluster dispatcher (and, linked to it, its proof checker).
cluster_dispatcher_actor spawn_cluster_dispatcher(caf::actor_system& sys, cluster_config cfg);

}  // namespace proofline
