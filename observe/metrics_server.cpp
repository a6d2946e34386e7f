// metrics_server on observe/http_server: the server reads each request
// under the endpoint's limits and writes the response; every request,
// whatever its path or method, goes to answer_metrics_request, so the routes,
// the 404s and the 405s stay in observe/metrics_http.cpp. /healthz (and the
// other answers that ask nothing) come from the server's loop at once,
// /readyz from the priority worker and /metrics from the normal one, so a
// slow scrape or slow clients never hold up a probe.
#include <unistd.h>

#include <stdexcept>

#include "observe/http_server.hpp"
#include "observe/metrics_http.hpp"

namespace proofline::observe {

struct metrics_server::impl {
  std::unique_ptr<http_server> http;
};

std::string bind_problem(const metrics_endpoint& at) {
  std::string why;
  int fd = bind_tcp_socket(at.host, at.port, why);
  if (fd >= 0) ::close(fd);
  return why;
}

metrics_server::metrics_server(const metrics_endpoint& at, provider body, readiness ready)
    : at_(at), body_(std::move(body)), ready_(std::move(ready)), impl_(std::make_unique<impl>()) {
  std::string why;
  int fd = bind_tcp_socket(at_.host, at_.port, why);
  if (fd < 0) throw std::runtime_error("metrics " + to_string(at_) + ": " + why);
  http_server::routes routes;
  routes.lane = [](const http_request& req) {
    if (req.path == "/metrics") return http_lane::normal;
    if (req.path == "/readyz") return http_lane::priority;
    return http_lane::immediate;  // answered without asking the runtime
  };
  routes.answer = [this](const http_request& req) {
    metrics_provider figures = [this]() -> std::optional<std::string> {
      if (!body_) return std::nullopt;
      return body_();
    };
    metrics_answer a = answer_metrics_request(req.method, req.path, figures, !ready_ || ready_());
    if (a.scraped) ++scrapes_;  // counted before the client can read the reply
    return http_response{a.status, a.content_type, std::move(a.body)};
  };
  try {
    // http_limits' defaults: no request body, an 8 KiB head of at most 64
    // fields, sent within 2 s; 64 connections.
    impl_->http = std::make_unique<http_server>(fd, http_limits{}, std::move(routes), "pl.metrics");
  } catch (const std::exception& e) {
    throw std::runtime_error("metrics " + to_string(at_) + ": " + e.what());
  }
  at_.port = impl_->http->port();
}

metrics_server::~metrics_server() = default;

std::string metrics_server::url() const { return "http://" + to_string(at_) + "/metrics"; }

}  // namespace proofline::observe
