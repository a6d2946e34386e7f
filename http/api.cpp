#include "http/api.hpp"

#include <chrono>
#include <filesystem>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "zk/formats/wtns.hpp"

#include "http/api_detail.hpp"

namespace proofline::http {

namespace fs = std::filesystem;
using namespace detail;

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

bool api::resolve_file(const std::string& param, const std::string& given, std::string& path,
                       http_response& refusal) {
  if (given.empty() || given[0] != '/') {
    refusal = error_response(error_code::bad_request,
                             "query parameter " + param + ": \"" + given +
                                 "\" is not an absolute path under --allow-root");
    return false;
  }
  std::string problem =
      cfg_.path_problem ? cfg_.path_problem(given) : "paths are not accepted";
  if (!problem.empty()) {
    refusal = error_response(error_code::forbidden, param + ": " + problem);
    return false;
  }
  std::error_code ec;
  path = fs::canonical(given, ec).string();
  if (ec || !fs::is_regular_file(path, ec)) {
    refusal = error_response(error_code::not_found, param + ": " + given + ": no such file");
    return false;
  }
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
  // With witness_generator the body is an input.json, whose witness the
  // generator computes on a synthesizer (the registry checks that it fits
  // the key); else it is the .wtns bytes.
  std::string generator_param, generator;
  const bool from_input = query_param(req.query, "witness_generator", generator_param);
  if (from_input && !resolve_file("witness_generator", generator_param, generator, refusal)) {
    reply(std::move(refusal));
    return;
  }
  if (req.body.empty()) {
    reply(error_response(error_code::bad_request,
                         from_input ? "request body: empty; send the input.json"
                                    : "request body: empty; send the .wtns bytes"));
    return;
  }
  auto body = std::make_shared<const std::string>(std::move(req.body));
  if (from_input) {
    // Only its first character here: the loop thread never parses a body;
    // the synthesizer does, under the job's memory reservation, and names
    // what it refuses (422).
    const auto first = body->find_first_not_of(" \t\r\n");
    if (first == std::string::npos || (*body)[first] != '{') {
      reply(error_response(error_code::bad_request,
                           "request body: an input.json is a JSON object of signals "
                           "({\"in\": \"3\", ...})"));
      return;
    }
  } else {
    try {
      zk::formats::read_wtns_info(zk::formats::memory_file{body_name, body->data(), body->size()});
    } catch (const std::exception& e) {
      const bool json = !body->empty() && body->front() == '{';
      reply(error_response(error_code::bad_request,
                           json ? std::string(e.what()) +
                                      " (an input.json needs query parameter witness_generator)"
                                : std::string(e.what())));
      return;
    }
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
  job.spec.witness_generator = generator;
  job.spec.single = true;
  job.spec.prio = prio;
  job.payload = std::move(payload);
  const std::string id = job.spec.id;
  const auto start = std::chrono::steady_clock::now();
  spdlog::info("http: {} proves {} with {} ({} {} bytes)", who, id, path, body->size(),
               from_input ? "input" : "witness");
  backend_.submit(std::move(job), [this, reply, id, who, start, generator](const job_report& r,
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
      reply(error_response(generator.empty() ? error_code::witness_mismatch
                                             : error_code::input_rejected,
                           message));
    else if (r.has_error && !generator.empty() && r.error.file == generator)
      reply(error_response(error_code::witness_mismatch, message));  // of another circuit
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
    j["warm_keys"] = keys_json(s.keys);
    j["backends"] = cfg_.backends;
    reply(json_response(200, j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
  });
}

bool api::admit(std::size_t partitions, const http_reply& reply, const std::string& named_id) {
  if (draining_) {
    reply(error_response(error_code::draining, "the server is stopping; try another or later",
                         drain_retry_s));
    return false;
  }
  // Reserved before the submission so that no burst passes the limit.
  const std::size_t before = pending_.fetch_add(partitions);
  if (before + partitions > cfg_.max_pending) {
    pending_ -= partitions;
    auto busy = error_response(error_code::too_many_pending,
                               fmt::format("{} partitions accepted over HTTP are unfinished and {} "
                                           "more would pass --max-pending {}; try again",
                                           before, partitions, cfg_.max_pending),
                               cfg_.retry_after_s);
    if (named_id.empty() || !backend_.taken) {
      reply(std::move(busy));
      return false;
    }
    // A retry would never succeed for a taken id: say so rather than 429.
    backend_.taken(named_id, [reply, busy = std::move(busy), named_id](bool taken) mutable {
      if (!taken) return reply(std::move(busy));
      reply(error_response(error_code::conflict, "field id: job " + named_id +
                                                     " exists on this server; choose another id"));
    });
    return false;
  }
  return true;
}


}  // namespace proofline::http
