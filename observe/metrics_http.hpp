// The Prometheus endpoint (`--metrics ADDR:PORT`): an HTTP server that
// answers GET /metrics with the text exposition format (observe/prometheus),
// plus liveness and readiness probes.
//
//   metrics_endpoint, parse_metrics_endpoint   "127.0.0.1:9100", ":9100", "9100", "[::1]:9100"
//   is_loopback_address                         127.0.0.0/8 and ::1
//   answer_metrics_request              the endpoint's answer to a method and a path
//   metrics_server                      RAII: bind, serve, stop on destruction
//
// HTTP itself (sockets, request parsing under limits, timeouts, the
// response) is observe/http_server's; what each path answers is decided here
// by answer_metrics_request, a pure function the fuzz target (tests/fuzz)
// drives with the requests the server parses. /healthz is answered by the
// server's loop at once, /readyz and /metrics each by a worker of its own,
// so neither slow clients nor a slow scrape delay a probe. The server knows
// nothing of actors: a scrape calls a
// provider function (the app's asks the run observer for a snapshot by
// message, observe/observer.hpp) and sends what it returns. It binds to
// loopback unless told otherwise: the figures name jobs' hosts and sizes,
// and there is no authentication.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "observe/prometheus.hpp"

namespace proofline::observe {

/// Where the endpoint listens.
struct metrics_endpoint {
  std::string host = "127.0.0.1";  ///< numeric IPv4 or IPv6 address
  uint16_t port = 0;               ///< 0: any free port (tests)
};

/// "127.0.0.1:9100", "[::1]:9100".
std::string to_string(const metrics_endpoint& at);

/// "ADDR:PORT", ":PORT" or "PORT" (loopback), "[V6]:PORT"; "localhost"
/// means 127.0.0.1. nullopt with the reason in *error otherwise.
std::optional<metrics_endpoint> parse_metrics_endpoint(const std::string& text, std::string* error);

/// Why `at` cannot be bound now ("Address already in use"), empty if it
/// can: checked before a daemon says it listens.
std::string bind_problem(const metrics_endpoint& at);

/// True for 127.0.0.0/8 and ::1.
bool is_loopback_address(const std::string& host);

/// Returns the body of one scrape, or nullopt when the figures cannot be had
/// (answered 503).
using metrics_provider = std::function<std::optional<std::string>()>;

/// What the endpoint answers to one request.
struct metrics_answer {
  int status = 200;          ///< 200, 404, 405 or 503
  std::string content_type;  ///< never empty
  std::string body;          ///< what GET gets; HEAD gets its length only
  bool scraped = false;      ///< a scrape of /metrics that got figures
};

/// Whether the process takes new work: false once serve drains. Empty: always.
using readiness = std::function<bool()>;

/// The answer to `method` on `path` (without its query): GET or HEAD of
/// /metrics calls `body` (nullopt or an exception: 503) and sets `scraped`,
/// whatever `ready` says, so a draining process is still scraped; /healthz
/// answers 200 "ok" without asking the runtime (liveness); /readyz answers
/// 503 "stopping" without asking the runtime when `ready` is false, else
/// calls `body` and answers 200 "ready" when it gives figures, 503 otherwise
/// (readiness); `/` describes the endpoint; other paths get 404, other
/// methods 405. Calls `body` at most once.
metrics_answer answer_metrics_request(std::string_view method, std::string_view path,
                                      const metrics_provider& body, bool ready = true);

class metrics_server {
 public:
  using provider = metrics_provider;

  /// Binds and starts serving (observe/http_server, with the defaults of
  /// http_limits: 64 connections, no request body, a head of 8 KiB and 64
  /// fields that must arrive within 2 s) on three threads named
  /// "pl.metrics": the server's loop and two workers. Calls `body` for at
  /// most one scrape and one readiness probe at a time, and `ready` (empty:
  /// always ready) on each request. Throws std::runtime_error naming the
  /// address ("metrics 127.0.0.1:9100: Address already in use").
  metrics_server(const metrics_endpoint& at, provider body, readiness ready = {});
  /// Stops accepting, closes the connections, waits for a call of `body` in
  /// progress and closes the socket.
  ~metrics_server();
  metrics_server(const metrics_server&) = delete;
  metrics_server& operator=(const metrics_server&) = delete;

  /// The port actually bound (the chosen one for port 0).
  uint16_t port() const { return at_.port; }
  /// "http://127.0.0.1:9100/metrics".
  std::string url() const;
  /// Scrapes answered so far.
  uint64_t scrapes() const { return scrapes_.load(); }

 private:
  struct impl;  // keeps the server out of this header

  metrics_endpoint at_;
  provider body_;
  readiness ready_;
  std::atomic<uint64_t> scrapes_{0};
  std::unique_ptr<impl> impl_;
};

}  // namespace proofline::observe
