// The HTTP proving API of `serve --http` (docs/API.md, docs/openapi.json):
// its routes, authentication, validation, backpressure and errors, over a
// runtime reached through an api_backend.
//
//   POST /v1/prove?key=K[&priority=P]   the body is the .wtns bytes; the
//                                       answer {"proof", "public_signals"}
//   POST /v1/prove?key=K&witness_generator=G   the body is an input.json,
//                                       whose witness G computes
//   POST   /v1/jobs                     a job of uploaded witnesses (JSON,
//                                       base64) or of paths under
//                                       --allow-root; 202 {"id", "url"}
//   GET    /v1/jobs/{id}                where it stands: result.json's shape
//   GET    /v1/jobs/{id}/proofs/{i}     one proof {"proof", "public_signals"}
//   DELETE /v1/jobs/{id}                cancels it
//   GET    /v1/jobs/{id}/events         Server-Sent Events: one per finished
//                                       partition, then "end"
//   GET    /v1/keys                     the warm keys with their ids
//   POST   /v1/keys                     preloads a key {"path"} under --allow-root
//   DELETE /v1/keys/{id}                evicts an idle key
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
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

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

enum class error_code;

/// Why the runtime side did not do what a request asked: the error answered.
struct refusal {
  error_code code;
  std::string message;
};
using maybe_refusal = std::optional<refusal>;

/// A job POST /v1/jobs creates, validated: its witnesses are either
/// uploaded bytes or files under --allow-root.
struct job_request {
  std::string id;    ///< the client's, or one the API made
  std::string who;   ///< the token's name ("anonymous" without tokens)
  std::string zkey;  ///< canonical path
  priority prio = priority::normal;
  std::vector<std::string_view> uploads;  ///< .wtns bytes, one per partition, or
  std::vector<std::string> paths;    ///< witness files, one per partition
  std::shared_ptr<const void> uploads_owner;  ///< holds the bytes `uploads` views
};

/// How the API reaches the runtime; every call returns at once and calls
/// its continuation once (events: until it returns false), on any thread.
struct api_backend {
  /// Submits a job in memory and calls `done` with its final report, or
  /// with a non-empty refusal (the report then empty) when it was not taken.
  std::function<void(local_job, std::function<void(const job_report&, const std::string&)>)>
      submit;
  /// The runtime's state, or a non-empty problem.
  std::function<void(std::function<void(const runtime_snapshot&, const std::string&)>)> status;
  /// Stores a job's uploaded witnesses where a restart finds them, then
  /// submits it: `accepted` once the registry took it (journaled under
  /// --state), or with a refusal (409 for an id in use); after an
  /// acceptance, `ended` once the job completed.
  std::function<void(job_request, std::function<void(const maybe_refusal&)> accepted,
                     std::function<void()> ended)>
      create;
  /// What job `id` finished so far (every finished partition; the report
  /// once complete), or a refusal (404 unknown).
  std::function<void(const std::string& id,
                     std::function<void(const job_progress&, const maybe_refusal&)>)>
      job;
  /// The proof.json and public.json text of partition `index` of job `id`,
  /// or a refusal (404: unknown job, index out of range, not done).
  std::function<void(const std::string& id, uint32_t index,
                     std::function<void(const std::string& proof, const std::string& pub,
                                        const maybe_refusal&)>)>
      proof;
  /// Cancels job `id`: its status after the cancel, or a refusal (404
  /// unknown, 409 finished already).
  std::function<void(const std::string& id,
                     std::function<void(const job_status&, const maybe_refusal&)>)>
      cancel;
  /// Follows job `id`: `progress` gets what finished so far, then what
  /// finishes after each time, the last time with `complete` set; with an
  /// empty `finished` and `complete` unset now and then (a keep-alive). It
  /// returns false to stop following (the client is gone). A refusal comes
  /// alone (404 unknown).
  std::function<void(const std::string& id,
                     std::function<bool(const job_progress&, const maybe_refusal&)> progress)>
      events;
  /// Loads the key at `path` (canonical) and keeps it warm: its bytes, or a
  /// refusal naming the file.
  std::function<void(const std::string& path,
                     std::function<void(uint64_t bytes, const maybe_refusal&)>)>
      preload;
  /// Evicts the idle key at `path`: the bytes freed, or a refusal (404 not
  /// loaded, 409 in use).
  std::function<void(const std::string& path,
                     std::function<void(uint64_t bytes, const maybe_refusal&)>)>
      evict;
  /// Whether job id `id` is taken on this server (a job live, being
  /// created, or with its outputs kept): a client's id at the --max-pending
  /// limit gets 409 rather than 429, as it would with room to spare.
  std::function<void(const std::string& id, std::function<void(bool)>)> taken;
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
enum class error_code : int {
  bad_request,     ///< 400
  unauthorized,    ///< 401
  forbidden,       ///< 403 (a path outside --allow-root)
  not_found,       ///< 404
  method_not_allowed,  ///< 405
  conflict,        ///< 409
  too_large,       ///< 413
  witness_mismatch,  ///< 422
  input_rejected,  ///< 422 (an input.json the circuit refuses)
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

/// `text` as base64 (RFC 4648, '=' padding optional, no line breaks) into
/// `out`; false when it is not.
bool base64_decode(std::string_view text, std::string& out);

/// Whether `id` may name a job: 1 to 64 of A-Z a-z 0-9 . _ -, not
/// starting with '.' (it names the job's directory).
bool valid_job_id(std::string_view id);

/// The JSON GET /v1/jobs/{id} answers for `p`: result.json's shape (id,
/// status, error, partitions with spans, spans_ms) with the partitions not
/// finished yet as "pending", plus partition counts and proof URLs.
std::string job_json(const job_progress& p);

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

  /// Answers a streamed route (GET /v1/jobs/{id}/events) through `stream`,
  /// any other request as handle() does.
  void handle_stream(observe::http_request&& req, const observe::http_stream_ptr& stream);

 private:
  void prove(observe::http_request&& req, const std::string& who,
             const observe::http_reply& reply);
  void status(const observe::http_reply& reply);
  /// Authenticates `req`: the token's name, or false after answering 401.
  bool authenticate(const observe::http_request& req, const observe::http_reply& reply,
                    std::string& who);
  void create_job(observe::http_request&& req, const std::string& who,
                  const observe::http_reply& reply);
  /// The JSON form's witnesses (witnesses_base64 decoded, or witnesses'
  /// paths checked) into `job`, or false with the refusal replied.
  bool read_job_witnesses(const nlohmann::json& body, job_request& job,
                          const observe::http_reply& reply);
  void get_job(const std::string& id, const observe::http_reply& reply);
  void get_proof(const std::string& id, const std::string& index,
                 const observe::http_reply& reply);
  void cancel_job(const std::string& id, const observe::http_reply& reply);
  void job_events(const std::string& id, const observe::http_stream_ptr& stream);
  void list_keys(const observe::http_reply& reply);
  void preload_key(observe::http_request&& req, const observe::http_reply& reply);
  void evict_key(const std::string& id, const observe::http_reply& reply);
  /// The refusal of new work while draining or over --max-pending for
  /// `partitions` more, or true with them reserved in pending_. Over the
  /// limit, a job whose client chose `named_id` that is taken gets 409.
  bool admit(std::size_t partitions, const observe::http_reply& reply,
             const std::string& named_id = {});
  /// The canonical path of the key named by `key` (an id or a path), or an error response.
  bool resolve_key(const std::string& key, std::string& path, observe::http_response& refusal);
  /// The canonical path of query parameter `param`'s file, an absolute path
  /// under --allow-root, or an error response naming the parameter.
  bool resolve_file(const std::string& param, const std::string& given, std::string& path,
                    observe::http_response& refusal);
  /// The held keys as the status and GET /v1/keys list them, each id
  /// remembered for resolve_key.
  nlohmann::json keys_json(const std::vector<warm_key>& keys);

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
