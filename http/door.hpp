// `serve --http ADDR:PORT`: the HTTP door of the daemon. It binds the
// address, checks that a non-loopback one is authenticated, loads the
// tokens, and runs observe/http_server with the API's routes (http/api.hpp)
// over a gateway actor that submits to the runtime's job registry in memory
// (local_job: the witness bytes travel from the request body to synthesis
// without a file) and answers the API's continuations from the reports.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <memory>
#include <string>
#include <vector>

#include <caf/actor_system.hpp>

#include "http/api.hpp"
#include "messages/interfaces.hpp"

namespace proofline::http {

/// The --http options as given.
struct door_options {
  std::string listen;        ///< --http HOST:PORT; empty: no HTTP door
  std::string tokens_file;   ///< --http-tokens FILE
  bool tls = true;           ///< the daemon's mutual TLS (off with --insecure)
  std::string max_body = "256M";   ///< --http-max-body
  unsigned request_timeout_s = 60; ///< --http-request-timeout
  unsigned max_connections = 256;  ///< --http-max-connections
  std::size_t max_pending = 64;    ///< --max-pending
  std::size_t keep_jobs = 1000;    ///< --http-keep-jobs
};

/// The daemon's actors the door talks to, and where HTTP jobs keep files.
struct door_links {
  job_registry_actor registry;
  memory_manager_actor memory;
  key_cache_actor keys;
  /// Where POST /v1/jobs puts a job's outputs (<jobs_dir>/<id>/, kept) and
  /// its uploaded witnesses (<spool_dir>/http-<id>/, removed when it ends);
  /// under --state both lie in the state directory, so a restart resumes
  /// the job.
  std::string jobs_dir;
  std::string spool_dir;
  /// Finished jobs whose outputs stay under jobs_dir (--http-keep-jobs);
  /// the oldest beyond it are removed, and their ids are free again.
  std::size_t keep_jobs = 1000;
  /// Writes a file whole (atomically), throwing with the reason.
  std::function<void(const std::string& path, std::string_view contents)> write_file;
};

/// What the door needs of the running daemon.
struct door_wiring : door_links {
  api_config api;  ///< path policy, backends, budget; tokens and limits come from the options
};

/// The problem with `o` (naming the flag), or empty; checked before
/// anything starts. `host` and `port` get the parsed address.
std::string check_door_options(const door_options& o, std::string& host, uint16_t& port);

class door {
 public:
  /// Binds and starts serving; throws std::invalid_argument naming the flag
  /// when an option or the address does not work.
  door(caf::actor_system& sys, const door_options& o, door_wiring w);
  ~door();
  door(const door&) = delete;
  door& operator=(const door&) = delete;

  /// New work is answered 503 from now on (the daemon drains).
  void drain();
  uint16_t port() const;
  /// "http://127.0.0.1:8080" or https://...
  std::string url() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace proofline::http
