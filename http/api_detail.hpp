// What the API's route handlers share (http/api.cpp, api_jobs.cpp,
// api_keys.cpp): JSON answers, the names and retry times of refusals, path
// segments and Server-Sent Events. Internal to http/.
#pragma once

#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "http/api.hpp"

namespace proofline::http {

using observe::http_reply;
using observe::http_request;
using observe::http_response;

namespace detail {

/// How an HTTP job's witness is named in its errors (and how a failure is
/// known to be the witness's: job_report::error::file).
inline const std::string body_name = "request body";

/// Retry-After while draining: a restart takes a few seconds.
constexpr unsigned drain_retry_s = 5;

inline http_response json_response(int status, std::string body) {
  body += "\n";
  return {status, "application/json", std::move(body)};
}

/// JSON text without its trailing white space.
inline std::string_view trimmed(const std::string& text) {
  std::string_view v = text;
  while (!v.empty() && (v.back() == '\n' || v.back() == '\r' || v.back() == ' ')) v.remove_suffix(1);
  return v;
}

inline std::string dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

inline http_response refusal_response(const refusal& r) {
  const bool later = r.code == error_code::draining || r.code == error_code::unavailable ||
                     r.code == error_code::too_many_pending;
  return error_response(r.code, r.message,
                        later ? (r.code == error_code::draining ? drain_retry_s : 1) : 0);
}

/// `path` split at '/' after `prefix` ("/v1/jobs/a/proofs/3" -> a, proofs, 3).
inline std::vector<std::string> segments_after(const std::string& path, std::string_view prefix) {
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
inline std::string proof_answer(const std::string& proof, const std::string& pub) {
  std::string body = "{\"proof\": ";
  body += trimmed(proof);
  body += ", \"public_signals\": ";
  body += trimmed(pub);
  body += "}\n";
  return body;
}

/// The answer where the runtime offers no such service (a stand-in backend).
inline http_response no_backend() {
  return error_response(error_code::unavailable, "this server does not offer that here", 1);
}

/// One Server-Sent Event.
/// A request's body as JSON, or false with `problem` naming what is wrong.
inline bool json_body(const http_request& req, nlohmann::json& body, std::string& problem) {
  try {
    body = nlohmann::json::parse(req.body);
    return true;
  } catch (const std::exception& e) {
    problem = std::string("request body: not JSON: ") + e.what();
    return false;
  }
}

inline std::string sse(const char* event, const std::string& data) {
  return std::string("event: ") + event + "\ndata: " + data + "\n\n";
}

}  // namespace detail
}  // namespace proofline::http
