#include "http/door.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>

#include <spdlog/spdlog.h>

#include "memory/size.hpp"
#include "net/net_common.hpp"
#include "net/tls_context.hpp"
#include "observe/metrics_http.hpp"

namespace proofline::http {

using submit_done = std::shared_ptr<std::function<void(const job_report&, const std::string&)>>;
using status_done = std::shared_ptr<std::function<void(const runtime_snapshot&, const std::string&)>>;

}  // namespace proofline::http

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::http::submit_done)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::http::status_done)

namespace proofline::http {

namespace {

/// The gateway: takes the API's submissions and status questions as
/// messages and answers their continuations from the runtime's replies,
/// never waiting (requests with continuations).
/// `keep` (the API whose continuations it calls) lives until the gateway stops.
caf::behavior gateway(caf::event_based_actor* self, job_registry_actor registry,
                      memory_manager_actor memory, key_cache_actor keys,
                      std::shared_ptr<const void> keep) {
  (void)keep;
  return {
      [=](submit_atom, local_job& job, const submit_done& done) {
        self->request(registry, caf::infinite, submit_atom::value, std::move(job))
            .then(
                [=](uint64_t seq) {
                  self->request(registry, caf::infinite, await_atom::value, seq)
                      .then([=](const job_report& r) { (*done)(r, {}); },
                            [=](caf::error& e) {
                              job_report r;
                              r.state = job_state::failed;
                              r.has_error = true;
                              r.error = {"", "the runtime did not answer for the job: " +
                                                 self->system().render(e)};
                              (*done)(r, {});
                            });
                },
                [=](caf::error& e) {
                  std::string why = self->system().render(e);
                  (*done)(job_report{}, "the runtime refused the job: " + why);
                });
      },
      [=](status_atom, const status_done& done) {
        auto snap = std::make_shared<runtime_snapshot>();
        auto fail = [=](caf::error& e) {
          (*done)(*snap, "the runtime did not answer: " + self->system().render(e));
        };
        self->request(registry, std::chrono::seconds(5), status_atom::value)
            .then(
                [=](std::vector<job_status>& jobs) {
                  snap->jobs = std::move(jobs);
                  self->request(memory, std::chrono::seconds(5), stats_atom::value)
                      .then(
                          [=](const memory_stats& m) {
                            snap->memory = m;
                            self->request(keys, std::chrono::seconds(5), warm_keys_atom::value)
                                .then(
                                    [=](std::vector<warm_key>& k) {
                                      snap->keys = std::move(k);
                                      (*done)(*snap, {});
                                    },
                                    fail);
                          },
                          fail);
                },
                fail);
      },
  };
}

}  // namespace

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
  api_backend backend;
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
  impl_->handler = std::make_shared<api>(std::move(cfg), std::move(backend));
  *gate = sys.spawn(gateway, w.registry, w.memory, w.keys,
                    std::shared_ptr<const void>(impl_->handler));
  impl_->gate = *gate;
  observe::http_limits limits;
  limits.max_connections = o.max_connections;
  limits.max_head_bytes = 16 * 1024;
  limits.max_body_bytes = *memory::parse_size(o.max_body);
  limits.request_timeout = std::chrono::seconds(o.request_timeout_s);
  limits.write_timeout = std::chrono::seconds(30);
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
