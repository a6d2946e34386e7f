// The small client commands of a running `proofline serve`:
//
//   proofline status  [JOB] --connect HOST:PORT [--json]   jobs and their partitions
//   proofline cancel  JOB   --connect HOST:PORT            stop a live job
//   proofline await   JOB   --connect HOST:PORT [--json]   wait for a job, like run
//   proofline metrics       --connect HOST:PORT [--json]   memory, jobs, nodes
#pragma once

#include <functional>
#include <iosfwd>
#include <mutex>
#include <string>
#include <vector>

#include "app/cli.hpp"
#include "base/interrupt.hpp"
#include "net/net_client.hpp"

namespace proofline::app {

struct client_command_options {
  net::client_options client;
  std::string job;  ///< status (optional), cancel, await
};

/// SIGINT or SIGTERM while `submit` or `await` has work at a server: the
/// client ends at once with exit_signal (130 or 143), writing on `err` the
/// line that the function given last to say() makes of the signal, which
/// tells what goes on at the server and how to follow or stop it (the
/// server never hears of the signal: it sees a client leave). From
/// construction to destruction; before the first say(), a signal only ends
/// the client, with the same code.
class client_interrupt {
 public:
  using message_fn = std::function<std::string(int signo)>;

  /// `out` is erased of a progress line first when it is a terminal.
  client_interrupt(std::ostream& out, std::ostream& err);
  client_interrupt(const client_interrupt&) = delete;
  client_interrupt& operator=(const client_interrupt&) = delete;

  /// What to print (a line without its newline) if a signal comes from now on.
  void say(message_fn message);

 private:
  std::mutex mutex_;  // guards message_: the watcher thread reads it
  message_fn message_;
  base::interrupt_watch watch_;
};

/// "proofline CMD: interrupted (SIGINT); job a goes on at the server:
/// `proofline await a` waits for it again, `proofline cancel a` stops it",
/// or for several jobs the same with ID and the ids listed; the commands
/// carry --connect (and --insecure) when `o` has them.
std::string jobs_go_on_message(const char* cmd, int signo, const std::vector<std::string>& ids,
                               const net::client_options& o);

/// The --json document of submit and await:
///   {"server": HOST:PORT, "jobs": [{"id", "seq", "status", "result"}]}
/// with status and result (the job's result.json, as the server wrote it)
/// from `reports` in the order of `jobs`, or null for both without them
/// (submit --no-wait).
std::string jobs_json(const std::string& server, const std::vector<submitted_job>& jobs,
                      const std::vector<job_report>* reports);

/// Registers status, cancel, await and metrics on the cli.
void add_client_commands(cli& c);

/// 0 shown; 1 unknown job or server unreachable; 2 bad option.
int status_command(const client_command_options& o, std::ostream& out, std::ostream& err);
/// 0 cancelled; 1 unknown or finished job, or server unreachable; 2 bad option.
int cancel_command(const client_command_options& o, std::ostream& out, std::ostream& err);
/// 0 the job is done; 1 it failed or was cancelled, is unknown, or the server
/// was lost; 2 bad option; 130 or 143 interrupted (the job goes on).
int await_command(const client_command_options& o, std::ostream& out, std::ostream& err);
/// 0 shown; 1 server unreachable; 2 bad option.
int metrics_command(const client_command_options& o, std::ostream& out, std::ostream& err);

}  // namespace proofline::app
