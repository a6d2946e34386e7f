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

/// Spawns the node agent; it joins the coordinator at once and again after
/// each loss.
node_agent_actor spawn_node_agent(caf::actor_system& sys, node_agent_config cfg);

}  // namespace proofline
