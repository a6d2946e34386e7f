#include "http/door.hpp"

#include <memory>
#include <stdexcept>

#include <caf/send.hpp>

#include <spdlog/spdlog.h>

#include "actors/detail/spawn.hpp"
#include "memory/size.hpp"
#include "net/net_common.hpp"
#include "net/tls_context.hpp"
#include "observe/metrics_http.hpp"
#include "http/gateway.hpp"

namespace proofline::http {

std::string check_door_options(const door_options& o, std::string& host, uint16_t& port) {
  std::string why;
  auto ep = net::parse_endpoint(o.listen, why);
  if (!ep) return "--http " + o.listen + ": " + why;
  host = ep->host;
  port = ep->port;
  if (!memory::parse_size(o.max_body)) return "--http-max-body " + o.max_body + ": not a size";
  if (!observe::is_loopback_address(host) && !o.tls && o.tokens_file.empty())
    return "--http " + o.listen +
           ": not a loopback address, and without TLS (--insecure) or --http-tokens anyone who "
           "can reach it could prove and read jobs; give --http-tokens FILE or drop --insecure";
  if (o.max_pending == 0) return "--max-pending: must be at least 1";
  if (o.keep_jobs == 0) return "--http-keep-jobs: must be at least 1";
  return {};
}

struct door::impl {
  std::shared_ptr<api> handler;
  std::unique_ptr<observe::http_server> server;
  caf::actor gate;
  bool tls = false;
  std::string host;
};

door::door(caf::actor_system& sys, const door_options& o, door_wiring w)
    : impl_(std::make_unique<impl>()) {
  std::string host;
  uint16_t port = 0;
  if (auto problem = check_door_options(o, host, port); !problem.empty())
    throw std::invalid_argument(problem);
  api_config cfg = std::move(w.api);
  if (!o.tokens_file.empty()) cfg.tokens = read_token_file(o.tokens_file);
  cfg.max_pending = o.max_pending;
  // The gateway is spawned once the API exists: it keeps the API alive as
  // long as it may call the API's continuations.
  auto gate = std::make_shared<caf::actor>();
  // Sends `f` to run on the gateway's thread with its state.
  auto call = [gate](std::function<void(gateway_state&)> f) {
    caf::anon_send(*gate, std::make_shared<std::function<void(gateway_state&)>>(std::move(f)));
  };
  api_backend backend;
  backend.create = [call](job_request job, std::function<void(const maybe_refusal&)> accepted,
                          std::function<void()> ended) {
    auto shared = std::make_shared<job_request>(std::move(job));
    call([=](gateway_state& g) { g.create_job(std::move(*shared), accepted, ended); });
  };
  backend.job = [call](const std::string& id,
                       std::function<void(const job_progress&, const maybe_refusal&)> k) {
    call([=](gateway_state& g) { g.job(id, k); });
  };
  backend.proof = [call](const std::string& id, uint32_t index,
                         std::function<void(const std::string&, const std::string&,
                                            const maybe_refusal&)> k) {
    call([=](gateway_state& g) { g.job_proof(id, index, k); });
  };
  backend.cancel = [call](const std::string& id,
                          std::function<void(const job_status&, const maybe_refusal&)> k) {
    call([=](gateway_state& g) { g.cancel(id, k); });
  };
  backend.events = [call](const std::string& id,
                          std::function<bool(const job_progress&, const maybe_refusal&)> progress) {
    call([=](gateway_state& g) { g.events(id, progress); });
  };
  backend.preload = [call](const std::string& path,
                           std::function<void(uint64_t, const maybe_refusal&)> k) {
    call([=](gateway_state& g) { g.preload(path, k); });
  };
  backend.evict = [call](const std::string& path,
                         std::function<void(uint64_t, const maybe_refusal&)> k) {
    call([=](gateway_state& g) { g.evict(path, k); });
  };
  backend.taken = [call](const std::string& id, std::function<void(bool)> k) {
    call([=](gateway_state& g) { k(g.taken(id)); });
  };
  backend.submit = [gate](local_job job,
                          std::function<void(const job_report&, const std::string&)> done) {
    caf::anon_send(*gate, submit_atom::value, std::move(job),
                   std::make_shared<std::function<void(const job_report&, const std::string&)>>(
                       std::move(done)));
  };
  backend.status = [gate](std::function<void(const runtime_snapshot&, const std::string&)> done) {
    caf::anon_send(*gate, status_atom::value,
                   std::make_shared<std::function<void(const runtime_snapshot&, const std::string&)>>(
                       std::move(done)));
  };
  const bool with_tokens = !cfg.tokens.empty();
  w.keep_jobs = o.keep_jobs;
  impl_->handler = std::make_shared<api>(std::move(cfg), std::move(backend));
  *gate = spawn_stateful<gateway_state>(
      sys, gateway_config{w, std::shared_ptr<const void>(impl_->handler)}, /*detached=*/true);
  impl_->gate = *gate;
  observe::http_limits limits;
  limits.max_connections = o.max_connections;
  limits.max_head_bytes = 16 * 1024;
  limits.max_body_bytes = *memory::parse_size(o.max_body);
  limits.request_timeout = std::chrono::seconds(o.request_timeout_s);
  limits.write_timeout = std::chrono::seconds(30);
  limits.own_arena = true;  // witnesses: each body read into pages already resident
  SSL_CTX* ctx = nullptr;
  if (o.tls) {
    ctx = net::acquire_tls_context();
    if (!ctx) throw std::invalid_argument("--http: no TLS credentials are loaded");
  }
  std::string why;
  int fd = observe::bind_tcp_socket(host, port, why);
  if (fd < 0) {
    if (ctx) SSL_CTX_free(ctx);
    throw std::invalid_argument("--http " + o.listen + ": " + why);
  }
  auto routes = impl_->handler->routes();
  routes.refusal = [](int status, const std::string& reason) {
    error_code c = status == 413   ? error_code::too_large
                   : status == 503 ? error_code::unavailable
                                   : error_code::bad_request;
    auto r = error_response(c, reason, status == 503 ? 1 : 0);
    r.status = status;
    return r;
  };
  try {
    impl_->server = std::make_unique<observe::http_server>(fd, limits, std::move(routes),
                                                           "pl.http", ctx);
  } catch (...) {
    if (ctx) SSL_CTX_free(ctx);
    throw;
  }
  if (ctx) SSL_CTX_free(ctx);  // the server holds its own reference
  impl_->tls = o.tls;
  impl_->host = host;
  spdlog::info("http: serving the API on {}{}{}", url(),
               o.tls ? " (TLS, client certificates required)" : " (plain text)",
               with_tokens ? ", bearer tokens required" : "");
}

door::~door() {
  impl_->server.reset();  // no reply is sent after this
  // The gateway lets go of the API when it stops (its behaviour is dropped).
  if (impl_->gate) caf::anon_send_exit(impl_->gate, caf::exit_reason::user_shutdown);
}

void door::drain() { impl_->handler->drain(); }

uint16_t door::port() const { return impl_->server->port(); }

std::string door::url() const {
  const bool v6 = impl_->host.find(':') != std::string::npos;
  return std::string(impl_->tls ? "https://" : "http://") + (v6 ? "[" : "") + impl_->host +
         (v6 ? "]" : "") + ":" + std::to_string(port());
}

}  // namespace proofline::http
