// The HTTP door's gateway (internal to http/): the actor that takes the
// API's submissions and questions as messages and answers their
// continuations from the runtime's replies (http/door.cpp spawns it and
// builds the API's calls over its handlers).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>

#include "http/api.hpp"
#include "http/door.hpp"

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

/// The gateway's config: what it reaches, and the API whose continuations
/// it calls (kept alive until the gateway stops).
struct gateway_config {
  gateway_wiring wiring;
  std::shared_ptr<const void> keep;
};

class gateway_state;
/// One of the API's calls, run on the gateway's thread by its state.
using gateway_call = std::shared_ptr<std::function<void(gateway_state&)>>;

/// The gateway: takes the API's submissions and questions as messages and
/// answers their continuations from the runtime's replies, never waiting
/// (requests with continuations). It runs detached: storing a job's
/// uploaded witnesses writes files. The API's calls reach it as closures
/// over its public handlers (door::door builds them), so each call runs on
/// its thread with its state.
class gateway_state {
 public:
  static inline const char* name = "http_gateway";
  using pointer = caf::stateful_actor<gateway_state>*;

  explicit gateway_state(pointer self) : self(self) {}

  caf::behavior make_behavior(gateway_config config);

  // ---- handlers: the API's calls (api_backend)
  /// Stores and submits a job of POST /v1/jobs (api_backend::create).
  void create_job(job_request job, std::function<void(const maybe_refusal&)> accepted,
                  std::function<void()> ended);
  /// Where job `id` stands (api_backend::job).
  void job(const std::string& id, std::function<void(const job_progress&, const maybe_refusal&)> k);
  /// The proof of partition `index` of job `id` (api_backend::proof).
  void job_proof(const std::string& id, uint32_t index,
                 std::function<void(const std::string&, const std::string&, const maybe_refusal&)> k);
  /// Cancels job `id` (api_backend::cancel).
  void cancel(const std::string& id, std::function<void(const job_status&, const maybe_refusal&)> k);
  /// Follows job `id` for an events client (api_backend::events).
  void events(const std::string& id,
              std::function<bool(const job_progress&, const maybe_refusal&)> progress);
  /// Loads a key and keeps it warm (api_backend::preload).
  void preload(const std::string& path, std::function<void(uint64_t, const maybe_refusal&)> k);
  /// Whether job id `id` is live, being created, or has its outputs kept
  /// (api_backend::taken; create_job refuses such an id with 409).
  bool taken(const std::string& id) const;
  /// Evicts a key (api_backend::evict).
  void evict(const std::string& path, std::function<void(uint64_t, const maybe_refusal&)> k);

 private:
  // ---- handlers: the runtime's messages
  /// One proof in memory (api_backend::submit): submitted, then its report.
  void submit(local_job& job, const submit_done& done);
  /// The runtime's state for GET /v1/status (api_backend::status).
  void status(const status_done& done);
  /// The registry has news of job `seq`: its followers ask for it.
  void on_news(uint64_t seq);
  /// A keep-alive to every follower without news; the ones whose client left go.
  void on_tick();

  // ---- helpers
  /// Finds job `id`: one this door submitted, or (after a restart) one the
  /// registry holds by that id with its directory under the jobs directory
  /// (a job the journal resumed). `k` gets its seq, or 0 and the refusal.
  void find_job(const std::string& id, std::function<void(uint64_t, const maybe_refusal&)> k);
  /// Job `seq`'s progress from the start (every finished partition).
  void job_progress_of(const std::string& id, uint64_t seq, uint32_t seen,
                       std::function<void(const job_progress&, const maybe_refusal&)> k);
  /// Asks the registry what follower `fid` has not seen, and tells its client.
  void ask_follower(uint64_t fid);
  std::string why_of(const caf::error& e) const;
  /// Removes the outputs of the oldest finished jobs (a result.json, by its
  /// time) beyond w.keep_jobs, and forgets them: their ids are free again.
  void prune_outputs();

  // ---- data
  pointer self;
  gateway_wiring w;
  std::shared_ptr<const void> keep;
  std::map<std::string, uint64_t> by_id;  ///< jobs this door submitted: id -> seq
  std::map<std::string, bool> creating;   ///< ids being stored or submitted now
  std::map<uint64_t, follower> followers;
  uint64_t next_follower = 0;
};

}  // namespace proofline::http

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::http::submit_done)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::http::status_done)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::http::gateway_call)

