#include "http/api.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <utility>

#include <openssl/evp.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "zk/formats/error.hpp"
#include "zk/formats/wtns.hpp"

namespace proofline::http {

namespace fs = std::filesystem;
using observe::http_reply;
using observe::http_request;
using observe::http_response;

namespace {

/// How an HTTP job's witness is named in its errors (and how a failure is
/// known to be the witness's: job_report::error::file).
const std::string body_name = "request body";

/// Retry-After while draining: a restart takes a few seconds.
constexpr unsigned drain_retry_s = 5;

http_response json_response(int status, std::string body) {
  body += "\n";
  return {status, "application/json", std::move(body)};
}

/// JSON text without its trailing white space.
std::string_view trimmed(const std::string& text) {
  std::string_view v = text;
  while (!v.empty() && (v.back() == '\n' || v.back() == '\r' || v.back() == ' ')) v.remove_suffix(1);
  return v;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

const char* code_name(error_code c) {
  switch (c) {
    case error_code::bad_request: return "bad_request";
    case error_code::unauthorized: return "unauthorized";
    case error_code::forbidden: return "forbidden";
    case error_code::not_found: return "not_found";
    case error_code::method_not_allowed: return "method_not_allowed";
    case error_code::conflict: return "conflict";
    case error_code::too_large: return "too_large";
    case error_code::witness_mismatch: return "witness_mismatch";
    case error_code::too_many_pending: return "too_many_pending";
    case error_code::prove_failed: return "prove_failed";
    case error_code::draining: return "draining";
    case error_code::unavailable: return "unavailable";
  }
  return "unknown";
}

int code_status(error_code c) {
  switch (c) {
    case error_code::bad_request: return 400;
    case error_code::unauthorized: return 401;
    case error_code::forbidden: return 403;
    case error_code::not_found: return 404;
    case error_code::method_not_allowed: return 405;
    case error_code::conflict: return 409;
    case error_code::too_large: return 413;
    case error_code::witness_mismatch: return 422;
    case error_code::too_many_pending: return 429;
    case error_code::prove_failed: return 500;
    case error_code::draining: return 503;
    case error_code::unavailable: return 503;
  }
  return 500;
}

http_response error_response(error_code c, const std::string& message, unsigned retry_after_s) {
  nlohmann::json j;
  j["error"] = {{"code", code_name(c)}, {"message", message}};
  auto r = json_response(code_status(c), j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  if (retry_after_s) r.headers.emplace_back("Retry-After", std::to_string(retry_after_s));
  if (c == error_code::unauthorized) r.headers.emplace_back("WWW-Authenticate", "Bearer");
  return r;
}

bool percent_decode(std::string_view text, std::string& out) {
  out.clear();
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '+') {
      out += ' ';
    } else if (c == '%') {
      if (i + 2 >= text.size()) return false;
      const int hi = hex_value(text[i + 1]), lo = hex_value(text[i + 2]);
      if (hi < 0 || lo < 0) return false;
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      out += c;
    }
  }
  return true;
}

bool query_param(const std::string& query, std::string_view name, std::string& value) {
  std::string_view q = query;
  while (!q.empty()) {
    std::size_t amp = q.find('&');
    std::string_view pair = q.substr(0, amp);
    q = amp == std::string_view::npos ? std::string_view() : q.substr(amp + 1);
    std::size_t eq = pair.find('=');
    std::string key;
    if (!percent_decode(pair.substr(0, eq), key) || key != name) continue;
    return percent_decode(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1),
                          value);
  }
  return false;
}

std::string key_id_of(const std::string& canonical_path) {
  struct stat st {};
  if (::stat(canonical_path.c_str(), &st) != 0) return {};
  const std::string identity =
      fmt::format("{}\n{}:{}:{}:{}.{}", canonical_path, static_cast<uint64_t>(st.st_dev),
                  static_cast<uint64_t>(st.st_ino), static_cast<uint64_t>(st.st_size),
                  static_cast<int64_t>(st.st_mtim.tv_sec), static_cast<int64_t>(st.st_mtim.tv_nsec));
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(identity.data(), identity.size(), md, &len, EVP_sha256(), nullptr) != 1) return {};
  std::string id = "k";
  for (unsigned i = 0; i < 8 && i < len; ++i) id += fmt::format("{:02x}", md[i]);
  return id;
}

api::api(api_config cfg, api_backend backend) : cfg_(std::move(cfg)), backend_(std::move(backend)) {}

observe::http_server::routes api::routes() {
  observe::http_server::routes r;
  r.lane = [](const http_request&) { return observe::http_lane::deferred; };
  r.defer = [this](http_request&& req, http_reply reply) { handle(std::move(req), reply); };
  return r;
}

void api::handle(http_request&& req, const http_reply& reply) {
  if (req.path == "/healthz") {
    reply({200, "text/plain", "ok\n"});
    return;
  }
  // Authentication before any route: nothing below runs for a request
  // without a valid token.
  std::string who = "anonymous";
  if (!cfg_.tokens.empty()) {
    const std::string* field = req.header("Authorization");
    const token_entry* t = field ? match_bearer(cfg_.tokens, *field) : nullptr;
    if (!t) {
      ++refusals_;
      reply(error_response(error_code::unauthorized,
                           field ? "Authorization: the bearer token is not one of --http-tokens"
                                 : "Authorization: missing; send \"Authorization: Bearer TOKEN\""));
      return;
    }
    who = t->name;
  }
  const bool get = req.method == "GET" || req.method == "HEAD";
  auto wrong_method = [&](const char* allowed) {
    auto r = error_response(error_code::method_not_allowed,
                            req.method + " " + req.path + ": not allowed; use " + allowed);
    r.headers.emplace_back("Allow", allowed);
    reply(std::move(r));
  };
  if (req.path == "/v1/prove") {
    if (req.method != "POST") return wrong_method("POST");
    prove(std::move(req), who, reply);
  } else if (req.path == "/v1/status") {
    if (!get) return wrong_method("GET");
    status(reply);
  } else if (req.path == "/v1/openapi.json") {
    if (!get) return wrong_method("GET");
    reply({200, "application/json", cfg_.openapi});
  } else {
    reply(error_response(error_code::not_found, req.path + ": no such route (see /v1/openapi.json)"));
  }
}

bool api::resolve_key(const std::string& key, std::string& path, http_response& refusal) {
  {
    std::lock_guard<std::mutex> g(keys_mu_);
    if (auto it = keys_.find(key); it != keys_.end()) {
      path = it->second;
      return true;
    }
  }
  if (key.empty() || key[0] != '/') {
    refusal = error_response(error_code::not_found,
                             "key: " + key + ": not a key id this server knows, nor an absolute "
                             "path (GET /v1/keys lists the ids)");
    return false;
  }
  std::string problem = cfg_.path_problem ? cfg_.path_problem(key) : "key: paths are not accepted";
  if (!problem.empty()) {
    refusal = error_response(error_code::forbidden, "key: " + problem);
    return false;
  }
  std::error_code ec;
  path = fs::canonical(key, ec).string();
  if (ec || !fs::is_regular_file(path, ec)) {
    refusal = error_response(error_code::not_found, "key: " + key + ": no such file");
    return false;
  }
  std::string id = key_id_of(path);
  std::lock_guard<std::mutex> g(keys_mu_);
  if (!id.empty()) keys_[id] = path;
  return true;
}

void api::prove(http_request&& req, const std::string& who, const http_reply& reply) {
  if (draining_) {
    reply(error_response(error_code::draining, "the server is stopping; try another or later",
                         drain_retry_s));
    return;
  }
  std::string key, prio_text;
  if (!query_param(req.query, "key", key) || key.empty()) {
    reply(error_response(error_code::bad_request,
                         "query parameter key: missing; name a key id or an absolute path of a "
                         ".zkey under --allow-root"));
    return;
  }
  priority prio = priority::normal;
  if (query_param(req.query, "priority", prio_text)) {
    auto p = parse_priority(prio_text);
    if (!p) {
      reply(error_response(error_code::bad_request,
                           "query parameter priority: \"" + prio_text +
                               "\" is not one of low, normal, high, critical"));
      return;
    }
    prio = *p;
  }
  std::string path;
  http_response refusal;
  if (!resolve_key(key, path, refusal)) {
    reply(std::move(refusal));
    return;
  }
  if (req.body.empty()) {
    reply(error_response(error_code::bad_request, "request body: empty; send the .wtns bytes"));
    return;
  }
  auto body = std::make_shared<const std::string>(std::move(req.body));
  try {
    zk::formats::read_wtns_info(zk::formats::memory_file{body_name, body->data(), body->size()});
  } catch (const std::exception& e) {
    reply(error_response(error_code::bad_request, e.what()));
    return;
  }
  // One partition: reserved before the submission so that no burst passes the limit.
  if (pending_.fetch_add(1) >= cfg_.max_pending) {
    --pending_;
    reply(error_response(error_code::too_many_pending,
                         fmt::format("{} partitions accepted over HTTP are unfinished "
                                     "(--max-pending {}); try again",
                                     cfg_.max_pending, cfg_.max_pending),
                         cfg_.retry_after_s));
    return;
  }
  auto payload = std::make_shared<job_payload>();
  payload->return_outputs = true;
  payload->witnesses = {{body->data(), body->size()}};
  payload->owner = body;
  local_job job;
  job.spec.id = fmt::format("http-{}-{}", who, ++next_job_);
  job.spec.zkey = path;
  job.spec.witnesses = {body_name};
  job.spec.single = true;
  job.spec.prio = prio;
  job.payload = std::move(payload);
  const std::string id = job.spec.id;
  const auto start = std::chrono::steady_clock::now();
  spdlog::info("http: {} proves {} with {} ({} witness bytes)", who, id, path, body->size());
  backend_.submit(std::move(job), [this, reply, id, who, start](const job_report& r,
                                                                 const std::string& refused) {
    --pending_;
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!refused.empty()) {
      ++failures_;
      spdlog::warn("http: {}'s {} refused: {}", who, id, refused);
      const bool stopping = draining_ || refused.find("stopping") != std::string::npos;
      reply(error_response(stopping ? error_code::draining : error_code::unavailable, refused,
                           stopping ? drain_retry_s : cfg_.retry_after_s));
      return;
    }
    const partition_report* part = r.partitions.empty() ? nullptr : &r.partitions.front();
    if (r.state == job_state::done && part && part->state == partition_state::done) {
      ++proofs_;
      spdlog::debug("http: {}'s {} proved in {:.1f} ms", who, id, ms);
      std::string body = "{\"proof\": ";
      body += trimmed(part->proof_json);
      body += ", \"public_signals\": ";
      body += trimmed(part->public_json);
      body += "}\n";
      reply({200, "application/json", std::move(body), {{"X-Proofline-Job", id}}});
      return;
    }
    ++failures_;
    const std::string message = r.has_error ? r.error.message
                                            : std::string("the job ended ") + to_string(r.state);
    spdlog::warn("http: {}'s {} failed after {:.1f} ms: {}", who, id, ms, message);
    if (r.state == job_state::cancelled)
      reply(error_response(error_code::draining, "cancelled: " + message, drain_retry_s));
    else if (r.has_error && r.error.file == body_name)
      reply(error_response(error_code::witness_mismatch, message));
    else
      reply(error_response(error_code::prove_failed, message));
  });
}

void api::status(const http_reply& reply) {
  backend_.status([this, reply](const runtime_snapshot& s, const std::string& problem) {
    if (!problem.empty()) {
      reply(error_response(error_code::unavailable, problem, cfg_.retry_after_s));
      return;
    }
    nlohmann::json j;
    uint64_t live = 0, queued_jobs = 0;
    for (const auto& job : s.jobs) {
      if (job.state == job_state::done || job.state == job_state::failed ||
          job.state == job_state::cancelled)
        continue;
      ++live;
      if (job.state == job_state::queued) ++queued_jobs;
    }
    j["draining"] = draining_.load();
    j["queue"] = {{"partitions_waiting_for_memory", s.memory.queued},
                  {"jobs_live", live},
                  {"jobs_queued", queued_jobs},
                  {"jobs_running", live - queued_jobs}};
    j["in_flight"] = {{"partitions_with_memory", s.memory.reservations},
                      {"granted_not_proving", s.memory.untaken}};
    j["http"] = {{"pending", pending_.load()},
                 {"max_pending", cfg_.max_pending},
                 {"proofs", proofs_.load()},
                 {"failures", failures_.load()},
                 {"refused_unauthorized", refusals_.load()}};
    j["capacity"] = {{"memory_budget", s.memory.budget},
                     {"memory_reserved", s.memory.reserved},
                     {"key_bytes", s.memory.keys}};
    nlohmann::json keys = nlohmann::json::array();
    for (const auto& k : s.keys) {
      std::string id = key_id_of(k.path);
      if (!id.empty()) {
        std::lock_guard<std::mutex> g(keys_mu_);
        keys_[id] = k.path;
      }
      keys.push_back({{"id", id}, {"path", k.path}, {"bytes", k.bytes}, {"users", k.users},
                      {"idle_ms", k.idle_ms}});
    }
    j["warm_keys"] = std::move(keys);
    j["backends"] = cfg_.backends;
    reply(json_response(200, j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
  });
}

}  // namespace proofline::http
