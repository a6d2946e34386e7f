// node_agent: the cluster side of a `serve --join HOST:PORT` node. It
// connects to the coordinator's control actor, joins with the node's
// backends, memory and slots, and asks for work by credit: it offers the
// coordinator room for `slots` partitions and, each time one finishes, for
// one more. Every leased partition becomes a one-witness job of the node's
// own runtime (same pipeline, memory budget and key cache as `run`), written
// into a scratch directory under the spool; the agent sends proof.json and
// public.json back as text and removes the scratch. Only the coordinator
// writes outputs.
//
// Lifecycle: connecting -> joined (monitoring the coordinator) -> on the
// coordinator's loss (its connection drops or heartbeats stop): every local
// job of a lease is cancelled, the leases are forgotten (the coordinator
// queues them again) and the agent reconnects, retrying every second. The
// connect and join requests have timeouts; nothing here waits forever on a
// remote peer.
//
// Paths: a lease names the coordinator's zkey and witness paths, read from
// storage every node sees; both must lie under this node's allowed roots. An
// inline witness arrives as bytes and is written to the scratch directory.
#pragma once

#include <caf/io/middleman_actor.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "messages/interfaces.hpp"

namespace proofline {

struct node_agent_config {
  caf::io::middleman_actor connector;  ///< the middleman's (or the OpenSSL manager's) actor
  std::string host;
  uint16_t port = 0;
  job_registry_actor registry;  ///< this node's runtime
  node_info info;               ///< what it offers (info.slots > 0)
  std::string spool_dir;        ///< scratch directories go here
  std::vector<std::string> allowed_roots;
  /// Writes a file atomically; throws std::runtime_error naming the path.
  std::function<void(const std::string& path, std::string_view contents)> write_file;
  /// Reads a whole text file; throws std::runtime_error naming the path.
  std::function<std::string(const std::string& path)> read_text;
  std::chrono::milliseconds retry{1000};            ///< between connection attempts
  std::chrono::milliseconds request_timeout{10000};  ///< connect and join requests
};

/// A lease being proved here, by the local job's sequence number.
struct node_lease {
  uint64_t generation = 0;  ///< the connection it came over
  uint64_t lease = 0;       ///< the coordinator's lease id
  uint64_t job_seq = 0;     ///< the coordinator's job
  std::string scratch;      ///< this lease's directory under the spool
  bool revoked = false;     ///< cancelled, or its coordinator is gone
};

struct node_agent_state {
  static inline const char* name = "node_agent";
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

using node_agent_pointer = node_agent_actor::stateful_pointer<node_agent_state>;

node_agent_actor::behavior_type node_agent(node_agent_pointer self, node_agent_config cfg);

/// Connects and joins, unless already doing so; retries after cfg.retry.
void connect_to_coordinator(node_agent_pointer self);
/// A lease arrived: start its local job, or answer with the error at once.
void on_assign(node_agent_pointer self, const remote_partition& rp);
/// The coordinator cancelled a job: cancel the local jobs of its leases.
void on_coordinator_cancel(node_agent_pointer self, uint64_t job_seq);
/// A local job completed: send its result (if the lease is still live) and credit.
void on_local_done(node_agent_pointer self, uint64_t local_seq, const job_report& report);
/// Offers the coordinator the room left (slots - busy - credit already given).
void give_credit(node_agent_pointer self);

}  // namespace proofline
