// The key routes of the HTTP API: GET and POST /v1/keys, DELETE
// /v1/keys/{id}.
#include "http/api.hpp"

#include <mutex>
#include <utility>

#include <nlohmann/json.hpp>

#include "http/api_detail.hpp"

namespace proofline::http {

using namespace detail;

nlohmann::json api::keys_json(const std::vector<warm_key>& keys) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& k : keys) {
    std::string id = key_id_of(k.path);
    if (!id.empty()) {  // remembered, so that requests may name the key by it
      std::lock_guard<std::mutex> g(keys_mu_);
      keys_[id] = k.path;
    }
    out.push_back({{"id", id}, {"path", k.path}, {"bytes", k.bytes}, {"users", k.users},
                   {"idle_ms", k.idle_ms}});
  }
  return out;
}

void api::list_keys(const http_reply& reply) {
  backend_.status([this, reply](const runtime_snapshot& s, const std::string& problem) {
    if (!problem.empty()) {
      reply(error_response(error_code::unavailable, problem, cfg_.retry_after_s));
      return;
    }
    reply(json_response(200, dump(nlohmann::json{{"keys", keys_json(s.keys)}})));
  });
}

void api::preload_key(http_request&& req, const http_reply& reply) {
  auto bad = [&](const std::string& message) {
    reply(error_response(error_code::bad_request, message));
  };
  nlohmann::json body;
  if (std::string problem; !json_body(req, body, problem)) return bad(problem);
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
