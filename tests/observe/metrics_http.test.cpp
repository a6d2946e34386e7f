// observe/metrics_http and observe/prometheus: endpoint parsing, the
// Prometheus text, the answer to each path, and the server (cpp-httplib)
// answering a real socket on loopback.
#include "observe/metrics_http.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include <arpa/inet.h>
#include <dirent.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <chrono>
#include <fstream>
#include <thread>

#include "observe/observer.hpp"

using namespace proofline;
using namespace proofline::observe;

namespace {

/// A socket connected to 127.0.0.1:port.
int connect_loopback(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
  return fd;
}

/// Sends `request` to 127.0.0.1:port and returns everything the server says.
std::string http(uint16_t port, const std::string& request) {
  int fd = connect_loopback(port);
  REQUIRE(::send(fd, request.data(), request.size(), 0) == static_cast<ssize_t>(request.size()));
  std::string reply;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof(buf), 0)) > 0;) reply.append(buf, n);
  ::close(fd);
  return reply;
}

/// The runtime behind a server: counts the calls and gives figures while
/// `available`.
struct runtime_figures {
  std::atomic<int> calls{0};
  std::atomic<bool> available{true};

  metrics_provider provider() {
    return [this]() -> std::optional<std::string> {
      ++calls;
      if (!available) return std::nullopt;
      return std::string("proofline_up 1\n");
    };
  }
};

std::string get(uint16_t port, const std::string& path) {
  return http(port, "GET " + path + " HTTP/1.1\r\nHost: localhost\r\n\r\n");
}

}  // namespace

TEST_CASE("metrics endpoints parse with loopback as the default host") {
  std::string why;
  auto a = parse_metrics_endpoint("9100", &why);
  REQUIRE(a);
  CHECK(a->host == "127.0.0.1");
  CHECK(a->port == 9100);
  CHECK(parse_metrics_endpoint(":9100", &why)->host == "127.0.0.1");
  CHECK(parse_metrics_endpoint("localhost:80", &why)->host == "127.0.0.1");
  CHECK(parse_metrics_endpoint("0.0.0.0:9100", &why)->host == "0.0.0.0");
  auto v6 = parse_metrics_endpoint("[::1]:9200", &why);
  REQUIRE(v6);
  CHECK(v6->host == "::1");
  CHECK(v6->port == 9200);

  CHECK_FALSE(parse_metrics_endpoint("127.0.0.1:70000", &why));
  CHECK(why.find("70000") != std::string::npos);
  CHECK_FALSE(parse_metrics_endpoint("metrics.example.com:9100", &why));
  CHECK(why.find("metrics.example.com") != std::string::npos);
  CHECK_FALSE(parse_metrics_endpoint("::1:9100", &why));
  CHECK(why.find("brackets") != std::string::npos);
}

TEST_CASE("loopback is 127.0.0.0/8 and ::1, nothing else") {
  CHECK(is_loopback_address("127.0.0.1"));
  CHECK(is_loopback_address("127.3.2.1"));
  CHECK(is_loopback_address("::1"));
  CHECK_FALSE(is_loopback_address("0.0.0.0"));
  CHECK_FALSE(is_loopback_address("10.0.0.1"));
  CHECK_FALSE(is_loopback_address("::"));
}

TEST_CASE("the exposition has HELP, TYPE and cumulative histogram buckets") {
  metrics_snapshot m;
  m.partitions_done = 30;
  m.partitions_failed = 2;
  m.jobs = {{"done", 7}, {"proving", 1}};
  m.proof_duration.add(0.03);  // bucket 0.05
  m.proof_duration.add(0.7);   // bucket 1
  m.proof_duration.add(0.9);   // bucket 1
  m.proof_duration.add(900);   // +Inf only
  m.ready = 3;
  m.waiting_memory = 5;
  m.gpus.push_back({0, "NVIDIA \"H200\"", 9.9, 10.0, 32, 0.99});
  memory_stats s;
  s.budget = 1000;
  s.reserved = 600;
  s.rss = 700;
  s.purges_run = 4;
  s.purge_ms_total = 250;
  m.memory = s;
  std::string t = prometheus_text(m);
  auto has = [&](const std::string& line) {
    INFO(line);
    CHECK(t.find(line + "\n") != std::string::npos);
  };
  has("# TYPE proofline_partitions_total counter");
  has("proofline_partitions_total{status=\"done\"} 30");
  has("proofline_partitions_total{status=\"failed\"} 2");
  has("proofline_jobs{state=\"proving\"} 1");
  has("# TYPE proofline_proof_duration_seconds histogram");
  has("proofline_proof_duration_seconds_bucket{le=\"0.05\"} 1");
  has("proofline_proof_duration_seconds_bucket{le=\"0.5\"} 1");
  has("proofline_proof_duration_seconds_bucket{le=\"1\"} 3");
  has("proofline_proof_duration_seconds_bucket{le=\"300\"} 3");
  has("proofline_proof_duration_seconds_bucket{le=\"+Inf\"} 4");
  has("proofline_proof_duration_seconds_count 4");
  has("proofline_proof_duration_seconds_sum 901.63");
  has("proofline_queue_partitions{queue=\"ready\"} 3");
  has("proofline_queue_partitions{queue=\"memory\"} 5");
  has("proofline_gpu_busy_seconds_total{device=\"0\",name=\"NVIDIA \\\"H200\\\"\"} 9.9");
  has("proofline_gpu_busy_ratio{device=\"0\",name=\"NVIDIA \\\"H200\\\"\"} 0.99");
  has("proofline_gpu_nvml_utilization_ratio{device=\"0\",name=\"NVIDIA \\\"H200\\\"\"} 0.99");
  has("proofline_memory_reserved_bytes 600");
  has("proofline_memory_resident_bytes 700");
  has("proofline_purges_total 4");
  has("proofline_purge_seconds_total 0.25");
}

TEST_CASE("each path gets its answer; only /metrics and /readyz ask the runtime") {
  int calls = 0;
  metrics_provider figures = [&]() -> std::optional<std::string> {
    ++calls;
    return std::string("up 1\n");
  };
  metrics_answer m = answer_metrics_request("GET", "/metrics", figures);
  CHECK(m.status == 200);
  CHECK(m.body == "up 1\n");
  CHECK(m.content_type == "text/plain; version=0.0.4; charset=utf-8");
  CHECK(m.scraped);
  CHECK(answer_metrics_request("HEAD", "/metrics", figures).scraped);
  CHECK(calls == 2);
  metrics_answer ready = answer_metrics_request("GET", "/readyz", figures);
  CHECK(ready.status == 200);
  CHECK(ready.body == "ready\n");
  CHECK_FALSE(ready.scraped);
  CHECK(calls == 3);
  CHECK(answer_metrics_request("GET", "/healthz", figures).body == "ok\n");
  CHECK(answer_metrics_request("GET", "/", figures).status == 200);
  CHECK(answer_metrics_request("GET", "/metrics/", figures).status == 404);
  CHECK(answer_metrics_request("POST", "/metrics", figures).status == 405);
  CHECK(answer_metrics_request("DELETE", "/healthz", figures).status == 405);
  CHECK(calls == 3);

  metrics_provider failing = []() -> std::optional<std::string> {
    throw std::runtime_error("observer gone");
  };
  CHECK(answer_metrics_request("GET", "/metrics", failing).status == 503);
  CHECK_FALSE(answer_metrics_request("GET", "/metrics", failing).scraped);
  CHECK(answer_metrics_request("GET", "/readyz", {}).status == 503);
}

TEST_CASE("a process that stops taking work fails /readyz without asking; /metrics still answers") {
  int calls = 0;
  metrics_provider figures = [&]() -> std::optional<std::string> {
    ++calls;
    return std::string("up 1\n");
  };
  metrics_answer m = answer_metrics_request("GET", "/metrics", figures, false);
  CHECK(m.status == 200);
  CHECK(m.body == "up 1\n");
  CHECK(m.scraped);
  CHECK(calls == 1);
  metrics_answer r = answer_metrics_request("GET", "/readyz", figures, false);
  CHECK(r.status == 503);
  CHECK(r.body == "stopping\n");
  CHECK_FALSE(r.scraped);
  CHECK(calls == 1);  // readiness is refused without asking the runtime
  CHECK(answer_metrics_request("GET", "/healthz", figures, false).status == 200);
  CHECK(answer_metrics_request("HEAD", "/readyz", figures, false).status == 503);
  CHECK(calls == 1);
}

TEST_CASE("serve's drain: once stop_ready is called, /readyz says 503 and /metrics 200 with figures") {
  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", 2);
  cfg.set("logger.console-verbosity", caf::atom("quiet"));
  caf::actor_system sys{cfg};
  observation_options opts;
  opts.metrics = metrics_endpoint{"127.0.0.1", 0};
  opts.keep_samples = false;
  std::optional<observation> obs;
  obs.emplace(sys, run_clock{}, std::vector<backend_record>{}, opts);
  const std::string url = obs->metrics_url();  // http://127.0.0.1:PORT/metrics
  const auto colon = url.rfind(':');
  const auto port = static_cast<uint16_t>(std::stoi(url.substr(colon + 1)));
  auto status_of = [](const std::string& reply) { return reply.substr(0, reply.find("\r\n")); };

  std::string before = get(port, "/metrics");
  CHECK(status_of(before) == "HTTP/1.1 200 OK");
  CHECK(status_of(get(port, "/readyz")) == "HTTP/1.1 200 OK");
  obs->stop_ready();
  std::string during = get(port, "/metrics");
  CHECK(status_of(during) == "HTTP/1.1 200 OK");
  CHECK(during.find("# TYPE proofline_") != std::string::npos);
  std::string ready = get(port, "/readyz");
  CHECK(status_of(ready) == "HTTP/1.1 503 Service Unavailable");
  CHECK(ready.substr(ready.size() - 9) == "stopping\n");
  CHECK(status_of(get(port, "/healthz")) == "HTTP/1.1 200 OK");
  run_record rec;
  obs->finish(rec);
  obs.reset();
}

TEST_CASE_FIXTURE(runtime_figures,
                  "the server answers /metrics with the provider's text and other paths with errors") {
  metrics_server server({"127.0.0.1", 0}, provider());
  REQUIRE(server.port() != 0);
  CHECK(server.url() == "http://127.0.0.1:" + std::to_string(server.port()) + "/metrics");

  std::string r = get(server.port(), "/metrics");
  CHECK(r.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(r.find("Content-Type: text/plain; version=0.0.4") != std::string::npos);
  CHECK(r.find("Content-Length: 15\r\n") != std::string::npos);
  CHECK(r.substr(r.size() - 15) == "proofline_up 1\n");
  CHECK(calls == 1);

  CHECK(get(server.port(), "/nope").rfind("HTTP/1.1 404", 0) == 0);
  CHECK(http(server.port(), "POST /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 405", 0) == 0);
  available = false;
  CHECK(get(server.port(), "/metrics?x=1").rfind("HTTP/1.1 503", 0) == 0);
  CHECK(calls == 2);  // only /metrics asks the provider
  CHECK(server.scrapes() == 1);
}

TEST_CASE_FIXTURE(runtime_figures,
                  "/healthz answers while the runtime does not; /readyz only when it gives figures") {
  available = false;
  metrics_server server({"127.0.0.1", 0}, provider());
  std::string health = get(server.port(), "/healthz");
  CHECK(health.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(health.substr(health.size() - 3) == "ok\n");
  CHECK(calls == 0);  // liveness never asks the runtime
  CHECK(get(server.port(), "/readyz").rfind("HTTP/1.1 503", 0) == 0);
  available = true;
  std::string ready = get(server.port(), "/readyz");
  CHECK(ready.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(ready.substr(ready.size() - 6) == "ready\n");
  CHECK(calls == 2);
  CHECK(server.scrapes() == 0);  // probes are not scrapes
  std::string head = http(server.port(), "HEAD /healthz HTTP/1.1\r\n\r\n");
  CHECK(head.find("\r\n\r\n") == head.size() - 4);
}

TEST_CASE("a port in use is an error naming the address") {
  metrics_server first({"127.0.0.1", 0}, [] { return std::optional<std::string>("x\n"); });
  std::string what;
  try {
    metrics_server second({"127.0.0.1", first.port()},
                          [] { return std::optional<std::string>("y\n"); });
  } catch (const std::runtime_error& e) {
    what = e.what();
  }
  CHECK(what == "metrics 127.0.0.1:" + std::to_string(first.port()) + ": Address already in use");
}

TEST_CASE("a client that never finishes its request does not hold up the next one") {
  metrics_server server({"127.0.0.1", 0}, [] { return std::optional<std::string>("ok 1\n"); });
  int silent = connect_loopback(server.port());
  std::string partial = "GET /metrics HTTP/1.1\r\n";  // no blank line: the head never ends
  REQUIRE(::send(silent, partial.data(), partial.size(), 0) > 0);
  // Served by the other worker while the silent client waits.
  auto start = std::chrono::steady_clock::now();
  std::string r = get(server.port(), "/metrics");
  CHECK(r.rfind("HTTP/1.1 200 OK", 0) == 0);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
  // The silent client's read times out (2 s): it is refused and closed.
  std::string rest;
  char buf[256];
  for (ssize_t n; (n = ::recv(silent, buf, sizeof(buf), 0)) > 0;) rest.append(buf, n);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  CHECK((rest.empty() || rest.rfind("HTTP/1.1 400", 0) == 0));
  CHECK(server.scrapes() == 1);
  ::close(silent);
}

TEST_CASE("HEAD gets the headers of GET with the body's length and no body") {
  metrics_server server({"127.0.0.1", 0}, [] { return std::optional<std::string>("up 1\n"); });
  std::string r = http(server.port(), "HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  CHECK(r.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(r.find("Content-Length: 5\r\n") != std::string::npos);
  CHECK(r.find("\r\n\r\n") == r.size() - 4);
  CHECK(server.scrapes() == 1);
}

TEST_CASE("requests httplib refuses get a status and a reason, and the server goes on") {
  metrics_server server({"127.0.0.1", 0}, [] { return std::optional<std::string>("up 1\n"); });
  std::string long_target = "GET /" + std::string(9000, 'a') + " HTTP/1.1\r\n\r\n";
  std::string r = http(server.port(), long_target);
  CHECK(r.rfind("HTTP/1.1 414", 0) == 0);
  CHECK(r.find("refused: HTTP 414") != std::string::npos);
  CHECK(http(server.port(), "GARBAGE\r\n\r\n").rfind("HTTP/1.1 400", 0) == 0);
  CHECK(get(server.port(), "/metrics").rfind("HTTP/1.1 200 OK", 0) == 0);
}

TEST_CASE("a client that goes away mid-reply does not end the process") {
  // A large body, and a client that resets the connection without reading:
  // the server's write fails; without SIGPIPE blocked on its threads that
  // write would kill this test binary.
  const std::string big(8 << 20, 'x');
  metrics_server server({"127.0.0.1", 0}, [&] { return std::optional<std::string>(big); });
  for (int i = 0; i < 3; ++i) {
    int fd = connect_loopback(server.port());
    std::string req = "GET /metrics HTTP/1.1\r\n\r\n";
    REQUIRE(::send(fd, req.data(), req.size(), 0) > 0);
    char first[16];
    REQUIRE(::recv(fd, first, sizeof(first), 0) > 0);  // the reply has begun
    linger reset{1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
    ::close(fd);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(get(server.port(), "/healthz").rfind("HTTP/1.1 200 OK", 0) == 0);
}

TEST_CASE("the server's threads are named pl.metrics, leave signals to the app, and end with it") {
  // Per thread named pl.metrics: whether SIGINT, SIGTERM and SIGPIPE are
  // all blocked in it (SigBlk in /proc, a hex mask with bit signo-1).
  auto threads = [] {
    std::vector<bool> blocked;
    DIR* d = ::opendir("/proc/self/task");
    REQUIRE(d);
    while (dirent* e = ::readdir(d)) {
      if (e->d_name[0] == '.') continue;
      std::string dir = std::string("/proc/self/task/") + e->d_name;
      std::ifstream comm(dir + "/comm");
      std::string name;
      std::getline(comm, name);
      if (name != "pl.metrics") continue;
      std::ifstream status(dir + "/status");
      unsigned long long mask = 0;
      for (std::string line; std::getline(status, line);)
        if (line.rfind("SigBlk:", 0) == 0) mask = std::stoull(line.substr(7), nullptr, 16);
      auto has = [&](int signo) { return (mask >> (signo - 1)) & 1; };
      blocked.push_back(has(SIGINT) && has(SIGTERM) && has(SIGPIPE));
    }
    ::closedir(d);
    return blocked;
  };
  struct sigaction before {};
  ::sigaction(SIGPIPE, nullptr, &before);
  {
    metrics_server server({"127.0.0.1", 0}, [] { return std::optional<std::string>("x\n"); });
    CHECK(threads() == std::vector<bool>{true, true, true});  // the listener and two workers
    struct sigaction now {};
    ::sigaction(SIGPIPE, nullptr, &now);
    CHECK((now.sa_handler == before.sa_handler));  // httplib's SIG_IGN is undone
  }
  CHECK(threads().empty());
}
