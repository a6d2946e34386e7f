// The client side of the control link, shared by submit, status, cancel,
// await and metrics: options every client command takes, a session (actor
// system, connection with retries, requests with timeouts that retry while
// the server is starting) and the progress wait of submit and await.
//
// No request waits forever: every one has a timeout, progress is a long
// poll of at most a few seconds, and the session monitors the server, so a
// lost connection ends the wait with an error instead of hanging.
#pragma once

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>

#include <chrono>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "actors/control.hpp"
#include "base/exit_codes.hpp"
#include "net/net_common.hpp"

namespace CLI {
class App;
}

namespace proofline::net {

/// What every client command takes.
struct client_options {
  std::string connect = default_endpoint;  ///< HOST:PORT of the server
  tls_options tls;
  unsigned connect_timeout_s = 5;  ///< keep trying to connect this long
  bool json = false;               ///< machine-readable output (status, metrics)
};

/// Adds --connect, --connect-timeout and the TLS options to a subcommand.
void add_client_options(CLI::App& app, client_options& o);

/// Timeout of one ordinary request (submit may carry inline witnesses).
inline constexpr std::chrono::seconds request_timeout{60};
/// Longest a progress poll waits at the server before answering.
inline constexpr uint32_t watch_wait_ms = 2000;
/// A progress poll unanswered this long after watch_wait_ms counts as lost:
/// CAF fails no pending request when its peer's connection drops, so this
/// bounds how late a client notices a server that died.
inline constexpr std::chrono::seconds watch_margin{3};

class client_session {
 public:
  explicit client_session(const client_options& o);
  ~client_session();
  client_session(const client_session&) = delete;
  client_session& operator=(const client_session&) = delete;

  /// Checks the options and connects, retrying for --connect-timeout. On
  /// failure prints "proofline CMD: ..." on `err` and returns the exit code
  /// (2 for a bad option, 1 when the server cannot be reached).
  std::optional<int> open(const char* cmd, std::ostream& err);

  caf::actor_system& system() { return *sys_; }
  const control_actor& control() const { return control_; }
  std::string where() const { return ep_.text(); }

  /// Sends xs to the control actor and waits for a T (request_timeout),
  /// asking again while the server is still starting. nullopt with the
  /// reason in `error` otherwise.
  template <class T, class... Ts>
  std::optional<T> call(std::string& error, const Ts&... xs) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(opts_.connect_timeout_s);
    for (;;) {
      std::optional<T> got;
      caf::error failure;
      (*self_)
          ->request(control_, request_timeout, xs...)
          .receive([&](T& v) { got = std::move(v); }, [&](caf::error& e) { failure = e; });
      if (got) return got;
      error = lost() ? "lost the connection to " + where() : error_text(*sys_, failure);
      if (error != server_starting_message || std::chrono::steady_clock::now() >= deadline)
        return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }

  /// Waits until every job completes, printing a line per finished partition
  /// and the progress line (net/client_progress.hpp) as a line of its own
  /// whenever more are finished; when `tty`, the progress line is instead
  /// rewritten in place (cut to the terminal's width) and only failed
  /// partitions and finished jobs get lines. Returns the reports in the
  /// order of `jobs`, or nullopt with the reason in `error` when the
  /// connection is lost.
  std::optional<std::vector<job_report>> wait(const std::vector<submitted_job>& jobs,
                                              std::ostream& out, bool tty, std::string& error);

 private:
  /// Whether a DOWN message of the server is waiting (non-blocking).
  bool lost();

  client_options opts_;
  endpoint ep_;
  caf::actor_system_config cfg_;
  std::unique_ptr<caf::actor_system> sys_;
  std::unique_ptr<caf::scoped_actor> self_;
  control_actor control_;
  bool down_ = false;
};

/// Whether `out` is std::cout and stdout is a terminal.
bool is_tty(const std::ostream& out);

}  // namespace proofline::net
