// `proofline serve`: a daemon. It publishes the control actor with CAF's
// io::middleman (default 127.0.0.1:7470) before anything slow happens, then
// starts the proving runtime and, when listening, a cluster dispatcher that
// hands partitions to nodes; with --join HOST:PORT it is itself a node of
// that coordinator. It runs until SIGINT or SIGTERM, then drains: intake
// stops, partitions in flight finish (--drain-timeout), the queued rest stays
// in the --state journal. docs/CLUSTER.md has the
// whole story; `proofline serve --help` the options.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "app/cli.hpp"
#include "http/door.hpp"
#include "net/admission.hpp"
#include "net/net_common.hpp"

namespace proofline::app {

/// What `proofline serve` was asked to do, as parsed (the runtime options as for `run`).
struct serve_options : runtime_options {
  std::string listen;  ///< HOST:PORT; empty: default_endpoint, unless --join alone
  bool listen_given = false;
  std::string join;  ///< HOST:PORT of a coordinator; empty: not a node
  net::tls_options tls;
  std::vector<std::string> allow_roots;  ///< empty: the working directory
  std::string spool;                     ///< empty: <tmp>/proofline-spool-<pid>
  unsigned slots = 0;                    ///< node: 0 = synthesizers + GPU workers
  bool no_local_proving = false;         ///< coordinate only
  std::vector<std::string> preload;      ///< keys loaded and prepared at start
  unsigned peer_timeout_s = 10;
  net::admission_limits admission;  ///< --handshake-timeout, --max-unauthenticated[-per-address]
  std::string state;  ///< --state DIR: the job journal; empty: none (a restart loses queued jobs)
  unsigned drain_timeout_s = 30;  ///< --drain-timeout: longest wait for partitions in flight at a stop
  std::size_t keep_finished = 1000;  ///< --keep-finished: completed jobs still answered for
  std::string keep_finished_bytes = "64M";  ///< --keep-finished-bytes: ... and the bytes they hold
  std::string max_inline = "1G";  ///< most inline witness bytes one submission may carry
  http::door_options http;        ///< --http and its limits (docs/API.md)
};

/// Registers `serve` on the cli; its options live as long as the cli.
void add_serve_command(cli& c);

/// Runs the daemon until SIGINT/SIGTERM, then drains: 130 or 143 (128 + the
/// signal, as `run`) after the stop, 2 on a usage error (bad option, unsafe
/// listener, port taken, backend unavailable).
int serve_command(const serve_options& opts, std::ostream& out, std::ostream& err);

}  // namespace proofline::app
