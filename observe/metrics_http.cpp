#include "observe/metrics_http.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <exception>

namespace proofline::observe {

std::string to_string(const metrics_endpoint& at) {
  bool v6 = at.host.find(':') != std::string::npos;
  return (v6 ? "[" + at.host + "]" : at.host) + ":" + std::to_string(at.port);
}

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

metrics_answer answer_metrics_request(std::string_view method, std::string_view path,
                                      const metrics_provider& body, bool ready) {
  auto text_reply = [](int status, std::string text) {
    return metrics_answer{status, "text/plain", std::move(text), false};
  };
  if (method != "GET" && method != "HEAD") return text_reply(405, "only GET\n");
  if (path == "/")
    return metrics_answer{200, "text/plain; charset=utf-8",
                          "proofline metrics: GET /metrics (Prometheus text format), "
                          "/healthz (alive), /readyz (the runtime answers)\n",
                          false};
  // Liveness: the server's thread answers, so the process is alive; it asks
  // nothing of the runtime, so a busy runtime never looks dead.
  if (path == "/healthz") return text_reply(200, "ok\n");
  if (path != "/metrics" && path != "/readyz")
    return text_reply(404, "not found; try /metrics, /healthz or /readyz\n");
  // A draining process takes no new work, but its figures still matter
  // (how much is left in flight): only readiness says no.
  if (path == "/readyz" && !ready) return text_reply(503, "stopping\n");
  std::optional<std::string> text;
  try {
    if (body) text = body();
  } catch (const std::exception&) {
    text.reset();
  }
  if (!text) return text_reply(503, "the runtime did not answer in time\n");
  // Readiness: the runtime's actors answered a snapshot in time.
  if (path == "/readyz") return text_reply(200, "ready\n");
  return metrics_answer{200, "text/plain; version=0.0.4; charset=utf-8", std::move(*text), true};
}

}  // namespace proofline::observe
