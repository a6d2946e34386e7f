// The HTTP proving API of `serve --http` (docs/API.md, docs/openapi.json):
// its routes, authentication, validation, backpressure and errors, over a
// runtime reached through an api_backend.
//
//   POST /v1/prove?key=K[&priority=P]   the body is the .wtns bytes; the
//                                       answer {"proof", "public_signals"}
//   GET  /v1/status                     queue depth, partitions in flight,
//                                       capacity, warm keys, backends
//   GET  /v1/openapi.json               the OpenAPI document
//   GET  /healthz                       liveness, without authentication
//
// Every request but /healthz must carry a bearer token from --http-tokens
// when tokens are set (401 otherwise, before any route runs); a TLS
// listener has checked the client's certificate during the handshake.
// Errors are JSON: {"error": {"code": "...", "message": "..."}}, the code
// one of a fixed set (error_code), the message naming the field or file.
//
// Threads: handle() runs on the HTTP server's loop and never waits: work
// for the runtime goes to the backend with a continuation, which replies
// from the backend's thread. The counters are atomics.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "http/tokens.hpp"
#include "messages/pipeline.hpp"
#include "messages/remote.hpp"
#include "messages/values.hpp"
#include "observe/http_server.hpp"

namespace proofline::http {

/// What GET /v1/status reports besides the API's own counters.
struct runtime_snapshot {
  std::vector<job_status> jobs;
  memory_stats memory;
  std::vector<warm_key> keys;
};

/// How the API reaches the runtime; every call returns at once and calls
/// its continuation once, on any thread.
struct api_backend {
  /// Submits a job in memory and calls `done` with its final report, or
  /// with a non-empty refusal (the report then empty) when it was not taken.
  std::function<void(local_job, std::function<void(const job_report&, const std::string&)>)>
      submit;
  /// The runtime's state, or a non-empty problem.
  std::function<void(std::function<void(const runtime_snapshot&, const std::string&)>)> status;
};

struct api_config {
  /// Why a client may not read `path` (outside --allow-root, named so), or
  /// empty when it may; null: every path is refused.
  std::function<std::string(const std::string& path)> path_problem;
  std::vector<token_entry> tokens;   ///< empty: no token is asked for
  std::size_t max_pending = 64;      ///< --max-pending: partitions accepted over HTTP, unfinished
  unsigned retry_after_s = 1;        ///< Retry-After of a 429 (503 while draining: 5)
  std::string openapi;               ///< the document GET /v1/openapi.json serves
  std::vector<std::string> backends; ///< how the status names the backends ("cpu:0", "cuda:0 ...")
  uint64_t memory_budget = 0;
};

/// The stable error codes, as the JSON "code" field spells them.
enum class error_code {
  bad_request,     ///< 400
  unauthorized,    ///< 401
  forbidden,       ///< 403 (a path outside --allow-root)
  not_found,       ///< 404
  method_not_allowed,  ///< 405
  conflict,        ///< 409
  too_large,       ///< 413
  witness_mismatch,  ///< 422
  too_many_pending,  ///< 429
  prove_failed,    ///< 500
  draining,        ///< 503
  unavailable,     ///< 503 (the runtime did not answer)
};

/// docs/openapi.json, as compiled in.
std::string openapi_document();

/// "bad_request", ...
const char* code_name(error_code c);
/// The HTTP status of a code.
int code_status(error_code c);

/// An error response: JSON, its status from the code, Retry-After when given.
observe::http_response error_response(error_code c, const std::string& message,
                                      unsigned retry_after_s = 0);

/// `text` with %XX and '+' decoded; false when a % is not followed by two hex digits.
bool percent_decode(std::string_view text, std::string& out);
/// The decoded value of query parameter `name`, or false when absent or
/// malformed (then `problem` says so).
bool query_param(const std::string& query, std::string_view name, std::string& value);

/// A key's stable id: "k" and 16 hex digits of a SHA-256 over the key file's
/// identity (canonical path, device, inode, size, modification time), so
/// it changes when the file is replaced. Empty when the file cannot be stat'ed.
std::string key_id_of(const std::string& canonical_path);

class api {
 public:
  api(api_config cfg, api_backend backend);

  /// The server's routes: what authenticates and fails validation is
  /// answered on the loop at once; proofs are deferred.
  observe::http_server::routes routes();

  /// Answers `req` through `reply` (now or later). The request handler the
  /// server and the fuzz target drive.
  void handle(observe::http_request&& req, const observe::http_reply& reply);

  /// From now on new work is answered 503 draining (with Retry-After);
  /// what was accepted still finishes and is answered.
  void drain() { draining_ = true; }
  bool draining() const { return draining_; }

  /// Partitions accepted over HTTP and not yet finished.
  std::size_t pending() const { return pending_; }

 private:
  void prove(observe::http_request&& req, const std::string& who,
             const observe::http_reply& reply);
  void status(const observe::http_reply& reply);
  /// The canonical path of the key named by `key` (an id or a path), or an error response.
  bool resolve_key(const std::string& key, std::string& path, observe::http_response& refusal);

  api_config cfg_;
  api_backend backend_;
  std::atomic<bool> draining_{false};
  std::atomic<std::size_t> pending_{0};
  std::atomic<uint64_t> next_job_{0};
  std::atomic<uint64_t> proofs_{0}, failures_{0}, refusals_{0};
  std::mutex keys_mu_;                       // the server's loop and the status replies
  std::map<std::string, std::string> keys_;  // id -> canonical path, of keys named so far
};

}  // namespace proofline::http
