#include "http/api.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <utility>

#include <openssl/evp.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "actors/result_file.hpp"
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

std::string dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

http_response refusal_response(const refusal& r) {
  const bool later = r.code == error_code::draining || r.code == error_code::unavailable ||
                     r.code == error_code::too_many_pending;
  return error_response(r.code, r.message,
                        later ? (r.code == error_code::draining ? drain_retry_s : 1) : 0);
}

/// `path` split at '/' after `prefix` ("/v1/jobs/a/proofs/3" -> a, proofs, 3).
std::vector<std::string> segments_after(const std::string& path, std::string_view prefix) {
  std::vector<std::string> out;
  std::string_view rest = std::string_view(path).substr(prefix.size());
  while (true) {
    std::size_t slash = rest.find('/');
    out.emplace_back(rest.substr(0, slash));
    if (slash == std::string_view::npos) break;
    rest = rest.substr(slash + 1);
  }
  return out;
}

/// A proof and its public signals as one JSON answer.
std::string proof_answer(const std::string& proof, const std::string& pub) {
  std::string body = "{\"proof\": ";
  body += trimmed(proof);
  body += ", \"public_signals\": ";
  body += trimmed(pub);
  body += "}\n";
  return body;
}

/// The answer where the runtime offers no such service (a stand-in backend).
http_response no_backend() {
  return error_response(error_code::unavailable, "this server does not offer that here", 1);
}

/// One Server-Sent Event.
std::string sse(const char* event, const std::string& data) {
  return std::string("event: ") + event + "\ndata: " + data + "\n\n";
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

bool base64_decode(std::string_view text, std::string& out) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::size_t n = text.size();
  while (n > 0 && text[n - 1] == '=' && text.size() - n < 2) --n;
  if (n % 4 == 1) return false;
  if (text.size() != n && text.size() % 4 != 0) return false;  // padding only to a multiple of 4
  out.clear();
  out.reserve(n / 4 * 3 + 2);
  uint32_t acc = 0;
  int bits = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const int v = value(text[i]);
    if (v < 0) return false;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  // Leftover bits must be zero (a canonical encoding).
  return (acc & ((1u << bits) - 1)) == 0;
}

bool valid_job_id(std::string_view id) {
  if (id.empty() || id.size() > 64 || id[0] == '.') return false;
  for (char c : id)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          c == '.' || c == '_' || c == '-'))
      return false;
  return true;
}

std::string job_json(const job_progress& p) {
  job_report r;
  if (p.complete) {
    r = p.report;
  } else {
    r.id = p.status.id;
    r.state = p.status.state;
    std::vector<bool> have(p.status.total, false);
    for (const auto& f : p.finished)
      if (f.index < have.size()) {
        have[f.index] = true;
        r.partitions.push_back(f);
      }
    for (uint32_t i = 0; i < p.status.total; ++i)
      if (!have[i]) {
        partition_report pending;
        pending.index = i;
        r.partitions.push_back(pending);
      }
    std::sort(r.partitions.begin(), r.partitions.end(),
              [](const partition_report& a, const partition_report& b) { return a.index < b.index; });
    for (const auto& f : r.partitions)
      if (f.state == partition_state::failed) {
        r.has_error = true;
        r.error = f.error;
        break;
      }
  }
  nlohmann::json j = nlohmann::json::parse(result_json(r));
  const std::string url = "/v1/jobs/" + r.id;
  uint32_t done = 0, failed = 0;
  for (auto& part : j["partitions"]) {
    const std::string st = part["status"];
    if (st == "done") {
      ++done;
      part["proof_url"] = url + "/proofs/" + std::to_string(part["index"].get<uint32_t>());
    } else if (st == "failed") {
      ++failed;
    }
  }
  if (!p.complete) {
    std::vector<bool> finished(p.status.total, false);
    for (const auto& f : p.finished)
      if (f.index < finished.size()) finished[f.index] = true;
    for (auto& part : j["partitions"])
      if (!finished[part["index"].get<uint32_t>()]) part["status"] = "pending";
    j["spans_ms"]["total"] = nullptr;
  }
  j["seq"] = p.status.seq;
  j["url"] = url;
  j["complete"] = p.complete;
  j["counts"] = {{"total", j["partitions"].size()}, {"done", done}, {"failed", failed}};
  return dump(j);
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
  // Every route is deferred; the events of a job are streamed.
  r.lane = [](const http_request& req) {
    const std::string& p = req.path;
    const bool events = p.rfind("/v1/jobs/", 0) == 0 && p.size() > 16 &&
                        p.compare(p.size() - 7, 7, "/events") == 0;
    return events ? observe::http_lane::streamed : observe::http_lane::deferred;
  };
  r.defer = [this](http_request&& req, http_reply reply) { handle(std::move(req), reply); };
  r.stream = [this](http_request&& req, observe::http_stream_ptr stream) {
    handle_stream(std::move(req), stream);
  };
  return r;
}

bool api::authenticate(const http_request& req, const http_reply& reply, std::string& who) {
  who = "anonymous";
  if (cfg_.tokens.empty()) return true;
  const std::string* field = req.header("Authorization");
  const token_entry* t = field ? match_bearer(cfg_.tokens, *field) : nullptr;
  if (!t) {
    ++refusals_;
    reply(error_response(error_code::unauthorized,
                         field ? "Authorization: the bearer token is not one of --http-tokens"
                               : "Authorization: missing; send \"Authorization: Bearer TOKEN\""));
    return false;
  }
  who = t->name;
  return true;
}

void api::handle_stream(http_request&& req, const observe::http_stream_ptr& stream) {
  http_reply reply = [stream](http_response r) { stream->reply(std::move(r)); };
  static constexpr std::string_view jobs = "/v1/jobs/";
  const bool events = req.path.size() > jobs.size() + 7 && req.path.rfind(jobs, 0) == 0 &&
                      req.path.compare(req.path.size() - 7, 7, "/events") == 0;
  if (!events || (req.method != "GET" && req.method != "HEAD")) {
    handle(std::move(req), reply);
    return;
  }
  std::string who;
  if (!authenticate(req, reply, who)) return;
  std::string id;
  if (!percent_decode(req.path.substr(jobs.size(), req.path.size() - jobs.size() - 7), id) ||
      !valid_job_id(id)) {
    reply(error_response(error_code::not_found, req.path + ": no such job"));
    return;
  }
  job_events(id, stream);
}

void api::handle(http_request&& req, const http_reply& reply) {
  if (req.path == "/healthz") {
    reply({200, "text/plain", "ok\n"});
    return;
  }
  // Authentication before any route: nothing below runs for a request
  // without a valid token.
  std::string who;
  if (!authenticate(req, reply, who)) return;
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
  } else if (req.path == "/v1/jobs") {
    if (req.method != "POST") return wrong_method("POST");
    create_job(std::move(req), who, reply);
  } else if (req.path == "/v1/keys") {
    if (get) return list_keys(reply);
    if (req.method != "POST") return wrong_method("GET, POST");
    preload_key(std::move(req), reply);
  } else if (req.path.rfind("/v1/keys/", 0) == 0) {
    std::string id;
    if (!percent_decode(req.path.substr(9), id) || id.empty() || id.find('/') != std::string::npos) {
      reply(error_response(error_code::not_found, req.path + ": no such route (see /v1/openapi.json)"));
      return;
    }
    if (req.method != "DELETE") return wrong_method("DELETE");
    evict_key(id, reply);
  } else if (req.path.rfind("/v1/jobs/", 0) == 0) {
    auto parts = segments_after(req.path, "/v1/jobs/");
    std::string id;
    if (!percent_decode(parts[0], id) || !valid_job_id(id)) {
      reply(error_response(error_code::not_found,
                           "job id " + parts[0] + ": no such job (ids are 1 to 64 of A-Z a-z 0-9 . _ -)"));
      return;
    }
    if (parts.size() == 1) {
      if (get) return get_job(id, reply);
      if (req.method != "DELETE") return wrong_method("GET, DELETE");
      cancel_job(id, reply);
    } else if (parts.size() == 3 && parts[1] == "proofs") {
      if (!get) return wrong_method("GET");
      get_proof(id, parts[2], reply);
    } else if (parts.size() == 2 && parts[1] == "events") {
      // Served streamed (handle_stream); reached here only without a stream.
      if (!get) return wrong_method("GET");
      reply(error_response(error_code::bad_request,
                           req.path + ": events are served as a stream only"));
    } else {
      reply(error_response(error_code::not_found, req.path + ": no such route (see /v1/openapi.json)"));
    }
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

bool api::admit(std::size_t partitions, const http_reply& reply) {
  if (draining_) {
    reply(error_response(error_code::draining, "the server is stopping; try another or later",
                         drain_retry_s));
    return false;
  }
  // Reserved before the submission so that no burst passes the limit.
  const std::size_t before = pending_.fetch_add(partitions);
  if (before + partitions > cfg_.max_pending) {
    pending_ -= partitions;
    reply(error_response(error_code::too_many_pending,
                         fmt::format("{} partitions accepted over HTTP are unfinished and {} more "
                                     "would pass --max-pending {}; try again",
                                     before, partitions, cfg_.max_pending),
                         cfg_.retry_after_s));
    return false;
  }
  return true;
}

void api::create_job(http_request&& req, const std::string& who, const http_reply& reply) {
  if (draining_) {
    reply(error_response(error_code::draining, "the server is stopping; try another or later",
                         drain_retry_s));
    return;
  }
  auto bad = [&](const std::string& message) {
    reply(error_response(error_code::bad_request, message));
  };
  nlohmann::json body;
  try {
    body = nlohmann::json::parse(req.body);
  } catch (const std::exception& e) {
    return bad(std::string("request body: not JSON: ") + e.what());
  }
  if (!body.is_object())
    return bad("request body: not a JSON object; send {\"key\": ..., \"witnesses_base64\": [...]}");
  for (const auto& [name, value] : body.items())
    if (name != "key" && name != "witnesses_base64" && name != "witnesses" &&
        name != "priority" && name != "id")
      return bad("field " + name + ": unknown; the fields are key, witnesses_base64, witnesses, "
                 "priority, id");
  job_request job;
  job.who = who;
  // key
  auto key = body.find("key");
  if (key == body.end()) return bad("field key: missing; name a key id or an absolute path");
  if (!key->is_string() || key->get<std::string>().empty())
    return bad("field key: not a non-empty string");
  http_response refusal;
  if (!resolve_key(key->get<std::string>(), job.zkey, refusal)) {
    reply(std::move(refusal));
    return;
  }
  // priority
  if (auto pr = body.find("priority"); pr != body.end()) {
    auto p = pr->is_string() ? parse_priority(pr->get<std::string>()) : std::nullopt;
    if (!p) return bad("field priority: " + dump(*pr) + " is not one of low, normal, high, critical");
    job.prio = *p;
  }
  // id
  if (auto id = body.find("id"); id != body.end()) {
    if (!id->is_string() || !valid_job_id(id->get<std::string>()))
      return bad("field id: " + dump(*id) +
                 " is not 1 to 64 of A-Z a-z 0-9 . _ - (not starting with '.')");
    job.id = id->get<std::string>();
  } else {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
    job.id = fmt::format("http-{}-{}-{}", who, ms, ++next_job_);
  }
  // witnesses: uploaded or paths, exactly one of them
  auto up = body.find("witnesses_base64");
  auto paths = body.find("witnesses");
  if ((up == body.end()) == (paths == body.end()))
    return bad("fields witnesses_base64, witnesses: give exactly one of them (uploaded .wtns "
               "files in base64, or their paths under --allow-root)");
  const auto& list = up != body.end() ? *up : *paths;
  const char* field = up != body.end() ? "witnesses_base64" : "witnesses";
  if (!list.is_array() || list.empty())
    return bad(std::string("field ") + field + ": not a non-empty array of strings");
  if (list.size() > cfg_.max_pending)
    return bad(fmt::format("field {}: {} witnesses; this server takes at most --max-pending {} "
                           "partitions at once: split the job",
                           field, list.size(), cfg_.max_pending));
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string name = fmt::format("{}[{}]", field, i);
    if (!list[i].is_string() || list[i].get_ref<const std::string&>().empty())
      return bad("field " + name + ": not a non-empty string");
    const std::string& text = list[i].get_ref<const std::string&>();
    if (up != body.end()) {
      std::string bytes;
      if (!base64_decode(text, bytes)) return bad("field " + name + ": not base64");
      try {
        zk::formats::read_wtns_info(zk::formats::memory_file{name, bytes.data(), bytes.size()});
      } catch (const std::exception& e) {
        return bad("field " + std::string(e.what()));
      }
      job.uploads.push_back(std::move(bytes));
    } else {
      if (text[0] != '/') return bad("field " + name + ": " + text + ": not an absolute path");
      std::string problem = cfg_.path_problem ? cfg_.path_problem(text) : "paths are not accepted";
      if (!problem.empty()) {
        reply(error_response(error_code::forbidden, "field " + name + ": " + problem));
        return;
      }
      std::error_code ec;
      std::string canonical = fs::canonical(text, ec).string();
      if (ec || !fs::is_regular_file(canonical, ec)) {
        reply(error_response(error_code::not_found, "field " + name + ": " + text + ": no such file"));
        return;
      }
      job.paths.push_back(std::move(canonical));
    }
  }
  const std::size_t n = list.size();
  body = nlohmann::json();  // the uploads are decoded: let the text go
  req.body = std::string();
  if (!admit(n, reply)) return;
  const std::string id = job.id;
  spdlog::info("http: {} submits job {} with {} ({} {} witness(es))", who, id, job.zkey, n,
               job.uploads.empty() ? "path" : "uploaded");
  if (!backend_.create) {
    pending_ -= n;
    reply(no_backend());
    return;
  }
  backend_.create(
      std::move(job),
      [this, reply, id, n](const maybe_refusal& refused) {
        if (refused) {
          pending_ -= n;
          reply(refusal_response(*refused));
          return;
        }
        nlohmann::json j = {{"id", id}, {"url", "/v1/jobs/" + id}, {"partitions", n}};
        reply({202, "application/json", dump(j) + "\n", {{"Location", "/v1/jobs/" + id}}});
      },
      [this, n] { pending_ -= n; });
}

void api::get_job(const std::string& id, const http_reply& reply) {
  if (!backend_.job) return reply(no_backend());
  backend_.job(id, [reply](const job_progress& p, const maybe_refusal& refused) {
    if (refused) return reply(refusal_response(*refused));
    reply(json_response(200, job_json(p)));
  });
}

void api::get_proof(const std::string& id, const std::string& index, const http_reply& reply) {
  uint32_t i = 0;
  bool ok = !index.empty() && index.size() <= 9;
  for (char c : index) ok = ok && c >= '0' && c <= '9';
  if (!ok) {
    reply(error_response(error_code::bad_request,
                         "proof index " + index + ": not a partition number (0, 1, ...)"));
    return;
  }
  i = static_cast<uint32_t>(std::stoul(index));
  if (!backend_.proof) return reply(no_backend());
  backend_.proof(id, i, [reply](const std::string& proof, const std::string& pub,
                                const maybe_refusal& refused) {
    if (refused) return reply(refusal_response(*refused));
    reply({200, "application/json", proof_answer(proof, pub)});
  });
}

void api::cancel_job(const std::string& id, const http_reply& reply) {
  if (!backend_.cancel) return reply(no_backend());
  backend_.cancel(id, [reply](const job_status& s, const maybe_refusal& refused) {
    if (refused) return reply(refusal_response(*refused));
    nlohmann::json j = {{"id", s.id},         {"status", to_string(s.state)},
                        {"done", s.done},     {"failed", s.failed},
                        {"total", s.total}};
    reply(json_response(200, dump(j)));
  });
}

void api::job_events(const std::string& id, const observe::http_stream_ptr& stream) {
  auto opened = std::make_shared<bool>(false);
  if (!backend_.events) {
    stream->reply(no_backend());
    return;
  }
  backend_.events(id, [stream, opened](const job_progress& p, const maybe_refusal& refused) {
    if (refused) {
      stream->reply(refusal_response(*refused));
      return false;
    }
    std::string text;
    const std::string url = "/v1/jobs/" + p.status.id;
    for (const auto& f : p.finished) {
      nlohmann::json e = {{"index", f.index},
                          {"status", to_string(f.state)},
                          {"verified", f.verified},
                          {"retries", f.retries}};
      if (f.state == partition_state::done)
        e["proof_url"] = url + "/proofs/" + std::to_string(f.index);
      if (f.state == partition_state::failed)
        e["error"] = {{"file", f.error.file}, {"message", f.error.message}};
      text += sse("partition", dump(e));
    }
    if (p.complete) text += sse("end", job_json(p));
    if (text.empty()) text = ": waiting\n\n";  // a keep-alive: shows whether the client is there
    bool ok;
    if (!*opened) {
      *opened = true;
      ok = stream->open({200, "text/event-stream", std::move(text), {{"Cache-Control", "no-store"}}});
    } else {
      ok = stream->send(std::move(text));
    }
    if (p.complete) {
      stream->end();
      return false;
    }
    return ok;
  });
}

void api::list_keys(const http_reply& reply) {
  backend_.status([this, reply](const runtime_snapshot& s, const std::string& problem) {
    if (!problem.empty()) {
      reply(error_response(error_code::unavailable, problem, cfg_.retry_after_s));
      return;
    }
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
    reply(json_response(200, dump(nlohmann::json{{"keys", std::move(keys)}})));
  });
}

void api::preload_key(http_request&& req, const http_reply& reply) {
  auto bad = [&](const std::string& message) {
    reply(error_response(error_code::bad_request, message));
  };
  nlohmann::json body;
  try {
    body = nlohmann::json::parse(req.body);
  } catch (const std::exception& e) {
    return bad(std::string("request body: not JSON: ") + e.what());
  }
  if (!body.is_object()) return bad("request body: not a JSON object; send {\"path\": ...}");
  for (const auto& [name, value] : body.items())
    if (name != "path") return bad("field " + name + ": unknown; the field is path");
  auto path = body.find("path");
  if (path == body.end()) return bad("field path: missing; name an absolute path of a .zkey");
  if (!path->is_string() || path->get<std::string>().empty() || path->get<std::string>()[0] != '/')
    return bad("field path: not an absolute path");
  std::string canonical;
  http_response refusal;
  if (!resolve_key(path->get<std::string>(), canonical, refusal)) {
    // resolve_key names the query parameter; here it is the body's field.
    auto j = nlohmann::json::parse(refusal.body);
    std::string message = j["error"]["message"];
    if (message.rfind("key: ", 0) == 0) message = "field path: " + message.substr(5);
    refusal = error_response(refusal.status == 403 ? error_code::forbidden : error_code::not_found,
                             message);
    reply(std::move(refusal));
    return;
  }
  if (!backend_.preload) return reply(no_backend());
  backend_.preload(canonical, [reply, canonical](uint64_t bytes, const maybe_refusal& refused) {
    if (refused) return reply(refusal_response(*refused));
    nlohmann::json j = {{"id", key_id_of(canonical)}, {"path", canonical}, {"bytes", bytes}};
    reply(json_response(200, dump(j)));
  });
}

void api::evict_key(const std::string& id, const http_reply& reply) {
  std::string path;
  {
    std::lock_guard<std::mutex> g(keys_mu_);
    if (auto it = keys_.find(id); it != keys_.end()) path = it->second;
  }
  if (path.empty()) {
    reply(error_response(error_code::not_found,
                         "key " + id + ": not a key id this server knows (GET /v1/keys lists them)"));
    return;
  }
  if (!backend_.evict) return reply(no_backend());
  backend_.evict(path, [reply, id, path](uint64_t bytes, const maybe_refusal& refused) {
    if (refused) return reply(refusal_response(*refused));
    nlohmann::json j = {{"id", id}, {"path", path}, {"bytes_freed", bytes}};
    reply(json_response(200, dump(j)));
  });
}

}  // namespace proofline::http
