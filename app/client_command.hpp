// The small client commands of a running `proofline serve`:
//
//   proofline status  [JOB] --connect HOST:PORT [--json]   jobs and their partitions
//   proofline cancel  JOB   --connect HOST:PORT            stop a live job
//   proofline await   JOB   --connect HOST:PORT            wait for a job, like run
//   proofline metrics       --connect HOST:PORT [--json]   memory, jobs, nodes
#pragma once

#include <iosfwd>
#include <string>

#include "app/cli.hpp"
#include "net/net_client.hpp"

namespace proofline::app {

struct client_command_options {
  net::client_options client;
  std::string job;  ///< status (optional), cancel, await
};

/// Registers status, cancel, await and metrics on the cli.
void add_client_commands(cli& c);

/// 0 shown; 1 unknown job or server unreachable; 2 bad option.
int status_command(const client_command_options& o, std::ostream& out, std::ostream& err);
/// 0 cancelled; 1 unknown or finished job, or server unreachable; 2 bad option.
int cancel_command(const client_command_options& o, std::ostream& out, std::ostream& err);
/// 0 the job is done; 1 it failed or was cancelled, is unknown, or the server
/// was lost; 2 bad option.
int await_command(const client_command_options& o, std::ostream& out, std::ostream& err);
/// 0 shown; 1 server unreachable; 2 bad option.
int metrics_command(const client_command_options& o, std::ostream& out, std::ostream& err);

}  // namespace proofline::app
