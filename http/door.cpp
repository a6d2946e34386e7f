#include "http/door.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <stdexcept>

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>

#include <spdlog/spdlog.h>

#include "memory/size.hpp"
#include "net/net_common.hpp"
#include "net/tls_context.hpp"
#include "observe/metrics_http.hpp"

namespace proofline::http {

using submit_done = std::shared_ptr<std::function<void(const job_report&, const std::string&)>>;
using status_done = std::shared_ptr<std::function<void(const runtime_snapshot&, const std::string&)>>;

/// What the gateway reaches, and where HTTP jobs keep their files.
using gateway_wiring = door_links;

/// A job the gateway follows for a GET .../events client.
struct follower {
  uint64_t seq = 0;
  uint32_t seen = 0;     ///< the registry's watch cursor
  bool asking = false;   ///< a watch request is out
  bool again = false;    ///< news came while it was out
  std::function<bool(const job_progress&, const maybe_refusal&)> progress;
};

struct gateway_state {
  std::map<std::string, uint64_t> by_id;  ///< jobs this door submitted: id -> seq
  std::map<std::string, bool> creating;   ///< ids being stored or submitted now
  std::map<uint64_t, follower> followers;
  uint64_t next_follower = 0;
  static inline const char* name = "http_gateway";
};
using gateway_pointer = caf::stateful_actor<gateway_state>*;
/// Work for the gateway, run on its thread with its state.
using gateway_call = std::shared_ptr<std::function<void(gateway_pointer)>>;

}  // namespace proofline::http

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::http::submit_done)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::http::status_done)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::http::gateway_call)

namespace proofline::http {

namespace {

namespace fs = std::filesystem;

/// How often followed jobs without news get a keep-alive (which shows
/// whether their client is still there).
constexpr std::chrono::seconds keep_alive{15};

using tick_atom = caf::atom_constant<caf::atom("tick")>;

/// The message of a runtime's error (the text it was made with), else CAF's rendering.
std::string why_of(caf::actor_system& sys, const caf::error& e) {
  const auto& ctx = e.context();
  if (ctx.match_elements<std::string>()) return ctx.get_as<std::string>(0);
  return sys.render(e);
}

refusal unknown_job(const std::string& id) {
  return {error_code::not_found, "job " + id + ": no such job on this server"};
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Finds job `id`: one this door submitted, or (after a restart) one the
/// registry holds by that id with its directory under the jobs directory
/// (a job the journal resumed). `k` gets its seq, or 0 and the refusal.
void find_job(gateway_pointer self, const gateway_wiring& w, const std::string& id,
              std::function<void(uint64_t, const maybe_refusal&)> k) {
  if (auto it = self->state.by_id.find(id); it != self->state.by_id.end()) {
    k(it->second, std::nullopt);
    return;
  }
  self->request(w.registry, std::chrono::seconds(10), status_atom::value)
      .then(
          [=](const std::vector<job_status>& jobs) {
            uint64_t seq = 0;
            for (const auto& j : jobs)
              if (j.id == id) seq = std::max(seq, j.seq);
            std::error_code ec;
            if (seq == 0 || !fs::is_directory(fs::path(w.jobs_dir) / id, ec))
              return k(0, unknown_job(id));
            k(seq, std::nullopt);
          },
          [=](caf::error& e) {
            k(0, refusal{error_code::unavailable,
                         "the runtime did not answer: " + why_of(self->system(), e)});
          });
}

/// Job `seq`'s progress from the start (every finished partition).
void job_progress_of(gateway_pointer self, const gateway_wiring& w, const std::string& id,
                     uint64_t seq, uint32_t seen,
                     std::function<void(const job_progress&, const maybe_refusal&)> k) {
  self->request(w.registry, std::chrono::seconds(10), watch_atom::value,
                std::vector<watch_cursor>{{seq, seen}})
      .then(
          [=](const std::vector<job_progress>& p) {
            if (p.empty()) return k(job_progress{}, unknown_job(id));
            k(p.front(), std::nullopt);
          },
          [=](caf::error& e) {
            if (e == caf::sec::invalid_argument) {
              self->state.by_id.erase(id);  // the registry no longer keeps it
              return k(job_progress{},
                       refusal{error_code::not_found,
                               "job " + id + ": no longer kept by this server (--keep-finished)"});
            }
            k(job_progress{}, refusal{error_code::unavailable,
                                      "the runtime did not answer: " + why_of(self->system(), e)});
          });
}

/// Asks the registry what follower `fid` has not seen, and tells its client.
void ask_follower(gateway_pointer self, const gateway_wiring& w, uint64_t fid) {
  auto it = self->state.followers.find(fid);
  if (it == self->state.followers.end() || it->second.asking) {
    if (it != self->state.followers.end()) it->second.again = true;
    return;
  }
  it->second.asking = true;
  it->second.again = false;
  self->request(w.registry, std::chrono::seconds(10), watch_atom::value,
                std::vector<watch_cursor>{{it->second.seq, it->second.seen}})
      .then(
          [=](const std::vector<job_progress>& p) {
            auto f = self->state.followers.find(fid);
            if (f == self->state.followers.end()) return;
            f->second.asking = false;
            if (p.empty()) return;
            f->second.seen = p.front().seen;
            const bool more = f->second.progress(p.front(), std::nullopt) && !p.front().complete;
            if (!more) {
              self->state.followers.erase(f);
              return;
            }
            if (f->second.again) ask_follower(self, w, fid);
          },
          [=](caf::error& e) {
            auto f = self->state.followers.find(fid);
            if (f == self->state.followers.end()) return;
            // The job is gone from the registry: its stream ends here.
            spdlog::debug("http: events of job #{} end: {}", f->second.seq,
                          why_of(self->system(), e));
            job_progress done;
            done.complete = true;
            done.status.seq = f->second.seq;
            f->second.progress(done, std::nullopt);
            self->state.followers.erase(f);
          });
}

/// The gateway: takes the API's submissions and questions as messages and
/// answers their continuations from the runtime's replies, never waiting
/// (requests with continuations). It runs detached: storing a job's
/// uploaded witnesses writes files.
/// `keep` (the API whose continuations it calls) lives until the gateway stops.
caf::behavior gateway(gateway_pointer self, gateway_wiring wiring,
                      std::shared_ptr<const void> keep) {
  (void)keep;
  const job_registry_actor registry = wiring.registry;
  const memory_manager_actor memory = wiring.memory;
  const key_cache_actor keys = wiring.keys;
  // Every job's news, for the followers.
  self->send(registry, listen_atom::value, caf::actor_cast<job_listener_actor>(self));
  self->delayed_send(self, keep_alive, tick_atom::value);
  return {
      [=](const gateway_call& call) { (*call)(self); },
      [=](news_atom, uint64_t seq) {
        std::vector<uint64_t> ids;
        for (const auto& [fid, f] : self->state.followers)
          if (f.seq == seq) ids.push_back(fid);
        for (auto fid : ids) ask_follower(self, wiring, fid);
      },
      [=](tick_atom) {
        std::vector<uint64_t> gone;
        for (auto& [fid, f] : self->state.followers) {
          if (f.asking) continue;
          job_progress alive;
          alive.status.seq = f.seq;
          if (!f.progress(alive, std::nullopt)) gone.push_back(fid);
        }
        for (auto fid : gone) self->state.followers.erase(fid);
        self->delayed_send(self, keep_alive, tick_atom::value);
      },
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
                                                 why_of(self->system(), e)};
                              (*done)(r, {});
                            });
                },
                [=](caf::error& e) {
                  std::string why = why_of(self->system(), e);
                  (*done)(job_report{}, "the runtime refused the job: " + why);
                });
      },
      [=](status_atom, const status_done& done) {
        auto snap = std::make_shared<runtime_snapshot>();
        auto fail = [=](caf::error& e) {
          (*done)(*snap, "the runtime did not answer: " + why_of(self->system(), e));
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

/// Stores and submits a job of POST /v1/jobs (api_backend::create).
void create_job(gateway_pointer self, const gateway_wiring& w, job_request job,
                std::function<void(const maybe_refusal&)> accepted, std::function<void()> ended) {
  const std::string id = job.id;
  const fs::path out = fs::path(w.jobs_dir) / id;
  std::error_code ec;
  // The job's directory exists for as long as its outputs are kept: an id
  // whose directory exists is taken (live, finished, or from an earlier run).
  if (self->state.creating.count(id) || self->state.by_id.count(id) ||
      !fs::create_directory(out, ec)) {
    accepted(refusal{error_code::conflict,
                     ec ? "id " + id + ": cannot make " + out.string() + ": " + ec.message()
                        : "field id: job " + id + " exists on this server; choose another id"});
    return;
  }
  job_spec spec;
  spec.id = id;
  spec.zkey = job.zkey;
  spec.single = false;
  spec.out = out.string();
  spec.prio = job.prio;
  const fs::path spool = fs::path(w.spool_dir) / ("http-" + id);
  auto forget = [out, spool] {
    std::error_code rm;
    fs::remove_all(spool, rm);
    fs::remove_all(out, rm);
  };
  if (!job.uploads.empty()) {
    // Written before the submission, so the journal's record of the job
    // (under --state) finds its witnesses after a restart.
    try {
      fs::create_directories(spool);
      for (std::size_t i = 0; i < job.uploads.size(); ++i) {
        const std::string file = (spool / (std::to_string(i) + ".wtns")).string();
        w.write_file(file, job.uploads[i]);
        spec.witnesses.push_back(file);
      }
    } catch (const std::exception& e) {
      forget();
      accepted(refusal{error_code::unavailable,
                       std::string("cannot store the uploaded witnesses: ") + e.what()});
      return;
    }
    job.uploads.clear();
  } else {
    spec.witnesses = std::move(job.paths);
  }
  self->state.creating[id] = true;
  self->request(w.registry, caf::infinite, submit_atom::value, std::vector<job_spec>{spec})
      .then(
          [=](const std::vector<uint64_t>& seqs) {
            self->state.creating.erase(id);
            const uint64_t seq = seqs.empty() ? 0 : seqs.front();
            self->state.by_id[id] = seq;
            spdlog::info("http: {}'s job {} accepted as #{}", job.who, id, seq);
            accepted(std::nullopt);
            self->request(w.registry, caf::infinite, await_atom::value, seq)
                .then(
                    [=](const job_report& r) {
                      std::error_code rm;
                      fs::remove_all(spool, rm);  // its witnesses are no longer needed
                      spdlog::info("http: job {} {}", id, to_string(r.state));
                      ended();
                    },
                    [=](caf::error&) { ended(); });
          },
          [=](caf::error& e) {
            self->state.creating.erase(id);
            forget();
            const std::string why = why_of(self->system(), e);
            const bool stopping = why.find("stopping") != std::string::npos;
            accepted(refusal{e == caf::sec::invalid_argument ? error_code::conflict
                             : stopping                     ? error_code::draining
                                                            : error_code::unavailable,
                             "the runtime refused job " + id + ": " + why});
          });
}

/// The proof of partition `index` of job `id` (api_backend::proof).
void job_proof(gateway_pointer self, const gateway_wiring& w, const std::string& id,
               uint32_t index,
               std::function<void(const std::string&, const std::string&, const maybe_refusal&)> k) {
  find_job(self, w, id, [=](uint64_t seq, const maybe_refusal& r) {
    if (r) return k({}, {}, r);
    job_progress_of(self, w, id, seq, 0, [=](const job_progress& p, const maybe_refusal& r) {
      if (r) return k({}, {}, r);
      if (index >= p.status.total)
        return k({}, {},
                 refusal{error_code::not_found,
                         "proof " + std::to_string(index) + ": job " + id + " has " +
                             std::to_string(p.status.total) + " partition(s), 0 to " +
                             std::to_string(p.status.total ? p.status.total - 1 : 0)});
      const auto& parts = p.complete ? p.report.partitions : p.finished;
      for (const auto& part : parts) {
        if (part.index != index) continue;
        if (part.state != partition_state::done)
          return k({}, {},
                   refusal{error_code::not_found,
                           "proof " + std::to_string(index) + ": partition " +
                               std::to_string(index) + " of job " + id + " " +
                               to_string(part.state) + (part.error.message.empty()
                                                            ? std::string()
                                                            : ": " + part.error.message)});
        const fs::path out = fs::path(w.jobs_dir) / id;
        std::string proof = read_text((out / part.proof_file).string());
        std::string pub = read_text((out / part.public_file).string());
        if (proof.empty() || pub.empty())
          return k({}, {},
                   refusal{error_code::not_found, "proof " + std::to_string(index) + ": " +
                                                      (out / part.proof_file).string() +
                                                      ": cannot be read"});
        return k(proof, pub, std::nullopt);
      }
      k({}, {},
        refusal{error_code::not_found, "proof " + std::to_string(index) + ": partition " +
                                           std::to_string(index) + " of job " + id +
                                           " is not done yet (job " + to_string(p.status.state) +
                                           "); GET /v1/jobs/" + id + "/events tells when"});
    });
  });
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
  const gateway_wiring gw = w;
  // Sends `f` to run on the gateway's thread with its state.
  auto call = [gate](std::function<void(gateway_pointer)> f) {
    caf::anon_send(*gate, std::make_shared<std::function<void(gateway_pointer)>>(std::move(f)));
  };
  api_backend backend;
  backend.create = [call, gw](job_request job, std::function<void(const maybe_refusal&)> accepted,
                              std::function<void()> ended) {
    auto shared = std::make_shared<job_request>(std::move(job));
    call([=](gateway_pointer self) { create_job(self, gw, std::move(*shared), accepted, ended); });
  };
  backend.job = [call, gw](const std::string& id,
                           std::function<void(const job_progress&, const maybe_refusal&)> k) {
    call([=](gateway_pointer self) {
      find_job(self, gw, id, [=](uint64_t seq, const maybe_refusal& r) {
        if (r) return k(job_progress{}, r);
        job_progress_of(self, gw, id, seq, 0, k);
      });
    });
  };
  backend.proof = [call, gw](const std::string& id, uint32_t index,
                             std::function<void(const std::string&, const std::string&,
                                                const maybe_refusal&)> k) {
    call([=](gateway_pointer self) { job_proof(self, gw, id, index, k); });
  };
  backend.cancel = [call, gw](const std::string& id,
                              std::function<void(const job_status&, const maybe_refusal&)> k) {
    call([=](gateway_pointer self) {
      find_job(self, gw, id, [=](uint64_t seq, const maybe_refusal& r) {
        if (r) return k(job_status{}, r);
        self->request(gw.registry, caf::infinite, cancel_atom::value, seq)
            .then([=](const job_status& s) { k(s, std::nullopt); },
                  [=](caf::error& e) {
                    // Unknown to the registry now, or finished: which one, it says.
                    self->request(gw.registry, std::chrono::seconds(10), status_atom::value, seq)
                        .then(
                            [=](const job_status& s) {
                              k(s, refusal{error_code::conflict,
                                           "job " + id + " is " + to_string(s.state) +
                                               " already; nothing to cancel"});
                            },
                            [=](caf::error&) {
                              k(job_status{}, refusal{error_code::not_found,
                                                      "job " + id + ": " + why_of(self->system(), e)});
                            });
                  });
      });
    });
  };
  backend.events = [call, gw](const std::string& id,
                              std::function<bool(const job_progress&, const maybe_refusal&)> progress) {
    call([=](gateway_pointer self) {
      find_job(self, gw, id, [=](uint64_t seq, const maybe_refusal& r) {
        if (r) {
          progress(job_progress{}, r);
          return;
        }
        const uint64_t fid = ++self->state.next_follower;
        follower f;
        f.seq = seq;
        f.progress = progress;
        self->state.followers.emplace(fid, std::move(f));
        ask_follower(self, gw, fid);
      });
    });
  };
  backend.preload = [call, gw](const std::string& path,
                               std::function<void(uint64_t, const maybe_refusal&)> k) {
    call([=](gateway_pointer self) {
      self->request(gw.keys, caf::infinite, preload_atom::value, path)
          .then(
              [=](const key_load_result& r) {
                if (!r.key)
                  return k(0, refusal{error_code::bad_request,
                                      "field path: " + (r.error.file.empty() ? path : r.error.file) +
                                          ": " + r.error.message});
                self->request(gw.keys, std::chrono::seconds(10), warm_keys_atom::value)
                    .then(
                        [=](const std::vector<warm_key>& warm) {
                          uint64_t bytes = 0;
                          for (const auto& wk : warm)
                            if (wk.path == path) bytes = wk.bytes;
                          k(bytes, std::nullopt);
                        },
                        [=](caf::error&) { k(0, std::nullopt); });
              },
              [=](caf::error& e) {
                k(0, refusal{error_code::unavailable,
                             "the key cache did not answer: " + why_of(self->system(), e)});
              });
    });
  };
  backend.evict = [call, gw](const std::string& path,
                             std::function<void(uint64_t, const maybe_refusal&)> k) {
    call([=](gateway_pointer self) {
      self->request(gw.keys, std::chrono::seconds(10), evict_path_atom::value, path)
          .then([=](uint64_t bytes) { k(bytes, std::nullopt); },
                [=](caf::error& e) {
                  std::string why = why_of(self->system(), e);
                  // The key cache says why: not loaded (404) or in use (409).
                  const bool busy = why.find("in use") != std::string::npos;
                  k(0, refusal{busy ? error_code::conflict : error_code::not_found,
                               "key " + path + ": " + why});
                });
    });
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
  impl_->handler = std::make_shared<api>(std::move(cfg), std::move(backend));
  *gate = sys.spawn<caf::detached>(gateway, gw, std::shared_ptr<const void>(impl_->handler));
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
