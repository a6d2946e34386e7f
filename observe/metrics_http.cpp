#include "observe/metrics_http.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace proofline::observe {

namespace {

/// A request line and headers larger than this are refused: a scrape's are
/// a few hundred bytes.
constexpr size_t max_request_bytes = 8192;
/// A client has this long to send its request head, or is dropped, so one
/// slow connection cannot hold the (single-threaded) server.
constexpr std::chrono::milliseconds client_timeout{2000};

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

/// One metric family: HELP and TYPE lines, then samples.
class family {
 public:
  family(std::string& out, const std::string& name, const char* type, const char* help)
      : out_(out), name_(name) {
    out_ += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
  }
  void sample(const std::string& labels, const std::string& value, const std::string& suffix = "") {
    out_ += name_ + suffix + (labels.empty() ? "" : "{" + labels + "}") + " " + value + "\n";
  }

 private:
  std::string& out_;
  std::string name_;
};

std::string gpu_labels(const gpu_metrics& g) {
  return "device=\"" + std::to_string(g.device) + "\",name=\"" + label_value(g.name) + "\"";
}

std::string errno_text() { return std::strerror(errno); }

std::string host_port(const metrics_endpoint& at) {
  bool v6 = at.host.find(':') != std::string::npos;
  return (v6 ? "[" + at.host + "]" : at.host) + ":" + std::to_string(at.port);
}

void send_all(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the client went away: nothing to do
    sent += static_cast<size_t>(n);
  }
}

std::string response(const char* status, const char* type, const std::string& body) {
  return std::string("HTTP/1.1 ") + status + "\r\nContent-Type: " + type +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" +
         body;
}

}  // namespace

std::optional<metrics_endpoint> parse_metrics_endpoint(const std::string& text,
                                                       std::string* error) {
  auto fail = [&](const std::string& why) -> std::optional<metrics_endpoint> {
    if (error) *error = why;
    return std::nullopt;
  };
  metrics_endpoint at;
  std::string host, port;
  if (!text.empty() && text.front() == '[') {  // [v6]:port
    auto close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return fail("expected [ADDRESS]:PORT, got " + text);
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else if (auto colon = text.rfind(':'); colon != std::string::npos) {
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.find(':') != std::string::npos)
      return fail("an IPv6 address goes in brackets: [" + host + "]:" + port);
  } else {
    port = text;
  }
  if (host.empty() || host == "localhost") host = host.empty() ? at.host : "127.0.0.1";
  if (port.empty() || port.find_first_not_of("0123456789") != std::string::npos ||
      port.size() > 5 || std::stoul(port) > 65535)
    return fail("expected a port number 0..65535, got \"" + port + "\" in " + text);
  in_addr v4{};
  in6_addr v6{};
  if (inet_pton(AF_INET, host.c_str(), &v4) != 1 && inet_pton(AF_INET6, host.c_str(), &v6) != 1)
    return fail("expected a numeric IP address or localhost, got \"" + host + "\" in " + text);
  at.host = host;
  at.port = static_cast<uint16_t>(std::stoul(port));
  return at;
}

bool is_loopback_address(const std::string& host) {
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return host == "localhost";
}

void duration_histogram::add(double seconds) {
  for (size_t i = 0; i < bounds_s.size(); ++i)
    if (seconds <= bounds_s[i]) {
      ++buckets[i];
      break;
    }
  ++count;  // above the last bound: counted in +Inf only
  sum_s += seconds;
}

std::string label_value(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string prometheus_text(const metrics_snapshot& m) {
  std::string out;
  {
    family f(out, "proofline_partitions_total", "counter",
             "Partitions finished, by status (a partition is one proof).");
    f.sample("status=\"done\"", std::to_string(m.partitions_done));
    f.sample("status=\"failed\"", std::to_string(m.partitions_failed));
  }
  {
    family f(out, "proofline_jobs", "gauge", "Jobs by state.");
    for (const auto& [state, n] : m.jobs)
      f.sample("state=\"" + label_value(state) + "\"", std::to_string(n));
  }
  {
    family f(out, "proofline_proof_duration_seconds", "histogram",
             "Time from a partition's synthesis start to its proof written.");
    const auto& h = m.proof_duration;
    uint64_t cumulative = 0;
    for (size_t i = 0; i < h.bounds_s.size(); ++i) {
      cumulative += h.buckets[i];
      f.sample("le=\"" + number(h.bounds_s[i]) + "\"", std::to_string(cumulative), "_bucket");
    }
    f.sample("le=\"+Inf\"", std::to_string(h.count), "_bucket");
    f.sample("", number(h.sum_s), "_sum");
    f.sample("", std::to_string(h.count), "_count");
  }
  {
    family f(out, "proofline_queue_partitions", "gauge",
             "Partitions queued: ready for a GPU worker, or waiting for memory.");
    f.sample("queue=\"ready\"", std::to_string(m.ready));
    f.sample("queue=\"memory\"", std::to_string(m.waiting_memory));
  }
  if (!m.gpus.empty()) {
    {
      family f(out, "proofline_gpu_busy_seconds_total", "counter",
               "Time the device was busy: the union of its device spans (CUDA events).");
      for (const auto& g : m.gpus) f.sample(gpu_labels(g), number(g.busy_s));
    }
    {
      family f(out, "proofline_gpu_busy_ratio", "gauge",
               "Busy time over the time from the device's first span to its last.");
      for (const auto& g : m.gpus)
        f.sample(gpu_labels(g), number(g.window_s > 0 ? g.busy_s / g.window_s : 0));
    }
    {
      family f(out, "proofline_gpu_partitions_total", "counter", "Partitions proved per device.");
      for (const auto& g : m.gpus) f.sample(gpu_labels(g), std::to_string(g.partitions));
    }
    bool nvml = false;
    for (const auto& g : m.gpus) nvml |= g.nvml_ratio.has_value();
    if (nvml) {
      family f(out, "proofline_gpu_nvml_utilization_ratio", "gauge",
               "NVML utilization.gpu of the device at its latest sample (0..1).");
      for (const auto& g : m.gpus)
        if (g.nvml_ratio) f.sample(gpu_labels(g), number(*g.nvml_ratio));
    }
  }
  if (m.memory) {
    const auto& s = *m.memory;
    auto gauge = [&](const char* name, const char* help, uint64_t v) {
      family(out, name, "gauge", help).sample("", std::to_string(v));
    };
    gauge("proofline_memory_budget_bytes", "The memory budget.", s.budget);
    gauge("proofline_memory_reserved_bytes", "Bytes reserved in the memory ledger.", s.reserved);
    gauge("proofline_memory_peak_reserved_bytes", "The most bytes ever reserved.", s.peak_reserved);
    gauge("proofline_memory_resident_bytes", "Resident set size of the process.", s.rss);
    gauge("proofline_memory_peak_resident_bytes", "Peak resident set size of the process.",
          s.peak_rss);
    family(out, "proofline_purges_total", "counter", "Arena purges run (requests coalesce).")
        .sample("", std::to_string(s.purges_run));
    family(out, "proofline_purge_seconds_total", "counter",
           "Time spent in arena purges, on the memory manager's thread.")
        .sample("", number(s.purge_ms_total / 1000.0));
  }
  return out;
}

namespace {

/// A TCP socket bound to `at` (SO_REUSEADDR), or -1 with the reason in `why`.
int bound_socket(const metrics_endpoint& at, std::string& why) {
  bool v6 = at.host.find(':') != std::string::npos;
  int fd = ::socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    why = std::strerror(errno);
    return -1;
  }
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_storage addr{};
  socklen_t len = 0;
  int parsed = 0;
  if (v6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(at.port);
    parsed = inet_pton(AF_INET6, at.host.c_str(), &a->sin6_addr);
    len = sizeof(sockaddr_in6);
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&addr);
    a->sin_family = AF_INET;
    a->sin_port = htons(at.port);
    parsed = inet_pton(AF_INET, at.host.c_str(), &a->sin_addr);
    len = sizeof(sockaddr_in);
  }
  if (parsed != 1)
    why = v6 ? "not an IPv6 address" : "not an IPv4 address";
  else if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0)
    why = std::strerror(errno);
  else
    return fd;
  ::close(fd);
  return -1;
}

}  // namespace

std::string bind_problem(const metrics_endpoint& at) {
  std::string why;
  int fd = bound_socket(at, why);
  if (fd >= 0) ::close(fd);
  return why;
}

metrics_server::metrics_server(const metrics_endpoint& at, provider body)
    : at_(at), body_(std::move(body)) {
  auto fail = [&](const std::string& what) {
    std::string message = "metrics " + host_port(at_) + ": " + what;
    if (listen_fd_ >= 0) ::close(listen_fd_);
    for (int& fd : wake_)
      if (fd >= 0) ::close(fd);
    throw std::runtime_error(message);
  };
  std::string why;
  listen_fd_ = bound_socket(at_, why);
  if (listen_fd_ < 0) fail(why);
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  bool v6 = at_.host.find(':') != std::string::npos;
  if (::listen(listen_fd_, 16) != 0) fail(errno_text());
  if (::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) fail(errno_text());
  port_ = ntohs(v6 ? reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port
                   : reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  at_.port = port_;
  if (::pipe2(wake_, O_CLOEXEC) != 0) fail(errno_text());
  thread_ = std::thread([this] { serve(); });
}

metrics_server::~metrics_server() {
  if (wake_[1] >= 0) {
    char stop = 1;
    while (::write(wake_[1], &stop, 1) < 0 && errno == EINTR) {
    }
  }
  if (thread_.joinable()) thread_.join();
  for (int fd : {listen_fd_, wake_[0], wake_[1]})
    if (fd >= 0) ::close(fd);
}

std::string metrics_server::url() const { return "http://" + host_port(at_) + "/metrics"; }

void metrics_server::serve() {
  pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
  for (;;) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents) return;  // stop requested
    if (!(fds[0].revents & POLLIN)) continue;
    int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    answer(client);
    ::close(client);
  }
}

void metrics_server::answer(int client) {
  // Read the request head (up to the blank line) before the deadline.
  std::string request;
  char buf[1024];
  const auto deadline = std::chrono::steady_clock::now() + client_timeout;
  while (request.find("\r\n\r\n") == std::string::npos &&
         request.find("\n\n") == std::string::npos) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{client, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) return;
    ssize_t n = ::recv(client, buf, sizeof(buf), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    request.append(buf, static_cast<size_t>(n));
    if (request.size() > max_request_bytes) {
      send_all(client,
               response("431 Request Header Fields Too Large", "text/plain", "too large\n"));
      return;
    }
  }
  bool scraped = false;
  std::string reply = metrics_reply(request, body_, &scraped);
  if (scraped) ++scrapes_;  // counted before the client can read the reply
  send_all(client, reply);
}

std::string metrics_reply(std::string_view head, const metrics_server::provider& body,
                          bool* scraped) {
  if (scraped) *scraped = false;
  std::string_view line = head.substr(0, head.find_first_of("\r\n"));
  auto sp1 = line.find(' ');
  auto sp2 = line.find(' ', sp1 == std::string_view::npos ? 0 : sp1 + 1);
  std::string_view method = line.substr(0, sp1);
  std::string_view target =
      sp1 == std::string_view::npos
          ? std::string_view()
          : line.substr(sp1 + 1, sp2 == std::string_view::npos ? sp2 : sp2 - sp1 - 1);
  if (auto q = target.find('?'); q != std::string_view::npos) target = target.substr(0, q);

  if (method != "GET" && method != "HEAD")
    return response("405 Method Not Allowed", "text/plain", "only GET\n");
  auto head_only = [&](std::string r) {
    if (method == "HEAD") r.resize(r.find("\r\n\r\n") + 4);
    return r;
  };
  if (target == "/")
    return head_only(response("200 OK", "text/plain; charset=utf-8",
                              "proofline metrics: GET /metrics (Prometheus text format), "
                              "/healthz (alive), /readyz (the runtime answers)\n"));
  // Liveness: this thread answers, so the process is alive; it asks nothing
  // of the runtime, so a busy runtime never looks dead.
  if (target == "/healthz") return head_only(response("200 OK", "text/plain", "ok\n"));
  if (target != "/metrics" && target != "/readyz")
    return head_only(
        response("404 Not Found", "text/plain", "not found; try /metrics, /healthz or /readyz\n"));
  std::optional<std::string> text;
  try {
    if (body) text = body();
  } catch (const std::exception&) {
    text.reset();
  }
  if (!text)
    return head_only(response("503 Service Unavailable", "text/plain",
                              "the runtime did not answer in time\n"));
  // Readiness: the runtime's actors answered a snapshot in time.
  if (target == "/readyz") return head_only(response("200 OK", "text/plain", "ready\n"));
  if (scraped) *scraped = true;
  return head_only(response("200 OK", "text/plain; version=0.0.4; charset=utf-8", *text));
}

}  // namespace proofline::observe
