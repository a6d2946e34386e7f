// The Prometheus endpoint (`--metrics ADDR:PORT`): a tiny HTTP server on a
// thread of its own that answers GET /metrics with the text exposition
// format (version 0.0.4).
//
//   metrics_endpoint, parse_metrics_endpoint   "127.0.0.1:9100", ":9100", "9100", "[::1]:9100"
//   is_loopback_address                         127.0.0.0/8 and ::1
//   duration_histogram                  cumulative buckets of proof durations
//   metrics_snapshot, prometheus_text   the figures and their exposition
//   metrics_server                      RAII: bind, serve, stop on destruction
//
// The server knows nothing of actors: each scrape calls a provider function
// (the app's asks the run observer for a snapshot by message, observe/observer.hpp)
// and sends what it returns. It binds to loopback unless told otherwise: the
// figures name jobs' hosts and sizes, and there is no authentication.
//
// Metrics (all prefixed proofline_):
//   partitions_total{status}                 counter: done, failed
//   jobs{state}                              gauge: queued ... cancelled
//   proof_duration_seconds                   histogram: synthesis start to files written
//   queue_partitions{queue}                  gauge: ready (for a GPU), memory (waiting for budget)
//   gpu_busy_seconds_total{device,name}      counter: union of device spans
//   gpu_busy_ratio{device,name}              gauge: busy over first span .. last span
//   gpu_partitions_total{device,name}        counter
//   gpu_nvml_utilization_ratio{device,name}  gauge: NVML's latest sample
//   memory_{budget,reserved,peak_reserved,resident,peak_resident}_bytes   gauges
//   purges_total, purge_seconds_total        counters
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "messages/catalogue.hpp"

namespace proofline::observe {

/// Where the endpoint listens.
struct metrics_endpoint {
  std::string host = "127.0.0.1";  ///< numeric IPv4 or IPv6 address
  uint16_t port = 0;               ///< 0: any free port (tests)
};

/// "ADDR:PORT", ":PORT" or "PORT" (loopback), "[V6]:PORT"; "localhost"
/// means 127.0.0.1. nullopt with the reason in *error otherwise.
std::optional<metrics_endpoint> parse_metrics_endpoint(const std::string& text, std::string* error);

/// Why `at` cannot be bound now ("Address already in use"), empty if it
/// can: checked before a daemon says it listens.
std::string bind_problem(const metrics_endpoint& at);

/// True for 127.0.0.0/8 and ::1.
bool is_loopback_address(const std::string& host);

/// Proof durations in cumulative buckets (Prometheus histogram).
struct duration_histogram {
  /// Upper bounds in seconds: a small partition proves in tens of ms on a
  /// GPU, a 2^20 domain in about a second, a large one on the CPU in minutes.
  static constexpr std::array<double, 12> bounds_s{0.05, 0.1, 0.25, 0.5, 1,   2.5,
                                                   5,    10,  30,   60,  120, 300};
  std::array<uint64_t, bounds_s.size()> buckets{};  ///< per bucket, not cumulative
  uint64_t count = 0;
  double sum_s = 0;

  void add(double seconds);
};

/// One backend's figures so far.
struct gpu_metrics {
  int device = 0;
  std::string name;
  double busy_s = 0;    ///< union of its device spans
  double window_s = 0;  ///< first span start to last span end
  uint64_t partitions = 0;
  std::optional<double> nvml_ratio;  ///< NVML's latest utilization.gpu, 0..1
};

/// Everything one scrape reports.
struct metrics_snapshot {
  uint64_t partitions_done = 0;
  uint64_t partitions_failed = 0;
  std::map<std::string, uint64_t> jobs;  ///< by job_state name
  duration_histogram proof_duration;
  uint64_t ready = 0;           ///< partitions ready, waiting for a GPU worker
  uint64_t waiting_memory = 0;  ///< partitions waiting for memory
  std::vector<gpu_metrics> gpus;
  std::optional<memory_stats> memory;
};

/// The snapshot in Prometheus' text format, with HELP and TYPE lines.
std::string prometheus_text(const metrics_snapshot& m);

/// Escapes a label value: backslash, double quote and newline.
std::string label_value(const std::string& v);

class metrics_server {
 public:
  /// Returns the body of one scrape, or nullopt when the figures cannot be
  /// had (answered 503). Called on the server's thread, one scrape at a time.
  using provider = std::function<std::optional<std::string>()>;

  /// Binds and starts serving. Throws std::runtime_error naming the address
  /// ("metrics 127.0.0.1:9100: Address already in use").
  metrics_server(const metrics_endpoint& at, provider body);
  /// Stops serving and closes the socket (waits for a scrape in progress).
  ~metrics_server();
  metrics_server(const metrics_server&) = delete;
  metrics_server& operator=(const metrics_server&) = delete;

  /// The port actually bound (the chosen one for port 0).
  uint16_t port() const { return port_; }
  /// "http://127.0.0.1:9100/metrics".
  std::string url() const;
  /// Scrapes answered so far.
  uint64_t scrapes() const { return scrapes_.load(); }

 private:
  void serve();
  void answer(int client);

  metrics_endpoint at_;
  provider body_;
  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};  // a pipe: a byte on it stops serve()
  uint16_t port_ = 0;
  std::atomic<uint64_t> scrapes_{0};
  std::thread thread_;
};

/// The whole HTTP response to one request head (the bytes up to the blank
/// line, as read from the client): GET or HEAD of /metrics calls `body`
/// (nullopt or an exception: 503) and sets *scraped; /healthz answers 200
/// "ok" without asking the runtime (liveness); /readyz calls `body` and
/// answers 200 "ready" when it gives figures, 503 otherwise (readiness);
/// `/` describes the endpoint; other paths get 404, other methods 405. Pure, so the server's
/// thread does only the socket I/O and the fuzz target (tests/fuzz) can feed
/// it any bytes.
std::string metrics_reply(std::string_view head, const metrics_server::provider& body,
                          bool* scraped);

}  // namespace proofline::observe
