// front: the one actor a libproofline handle talks to. Callers on any
// thread send it a submission (a local_job with its witness bytes and the
// pending_proof to complete); it submits the job to the job registry,
// awaits the job's report and completes the pending proof, calling the
// caller's callback, if any, on its own thread. It is the completion
// thread of the handle: spawned detached, so a slow callback holds back
// other callbacks and nothing in the pipeline.
//
// Borrowed witnesses (read in place from the caller's buffer): an outcome
// is delivered only once the runtime has let go of the bytes too (the
// payload's owner tells the front when it is destroyed), so a caller may
// free its buffer as soon as it has the outcome, a cancelled one included.
//
// Keys: the library's callers hand their loaded keys to the key cache
// through the front too, so that no caller's thread takes part in CAF (a
// thread that did would hold the actor system's logger, and a close on
// another thread would wait for it for ever).
//
// Closing: the front cancels every job it has in flight and answers once
// the last outcome is delivered; a submission after that completes at once
// as cancelled.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/actor_system.hpp>
#include <caf/typed_actor.hpp>

#include "messages/interfaces.hpp"

namespace proofline::lib {

struct proof_outcome;

/// One submission's outcome, delivered once by the front actor and waited
/// for by its caller (a mutex and a condition variable: the waiting side is
/// a caller's thread, never an actor).
class pending_proof {
 public:
  using callback = std::function<void(proof_outcome&&)>;
  /// `borrowed`: the witness is read in place; the outcome waits for its release.
  explicit pending_proof(callback done = nullptr, bool borrowed = false);
  ~pending_proof();
  pending_proof(const pending_proof&) = delete;
  pending_proof& operator=(const pending_proof&) = delete;

  /// The outcome, once; runs the callback after waking the waiters.
  void complete(proof_outcome&& outcome);
  /// Blocks until complete() and returns the outcome; at most once.
  proof_outcome wait();
  bool borrowed() const { return borrowed_; }
  /// The steady-clock time of the submission.
  std::chrono::steady_clock::time_point submitted() const { return submitted_; }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  const bool borrowed_;
  std::unique_ptr<proof_outcome> outcome_;
  callback callback_;
  std::chrono::steady_clock::time_point submitted_ = std::chrono::steady_clock::now();
};
using pending_ptr = std::shared_ptr<pending_proof>;

/// The key cache's answer to an adoption: empty when taken, else why not.
using adoption_ptr = std::shared_ptr<std::promise<std::string>>;

/// Signalled once the front has delivered every outcome after a close.
struct close_signal {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  void set();
  void wait();
};
using close_ptr = std::shared_ptr<close_signal>;

}  // namespace proofline::lib

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::lib::pending_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::lib::close_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::lib::adoption_ptr)

namespace proofline::lib {

/// The front's own atoms (only it handles them; CAF 0.17 atoms need no registration).
using witness_free_atom = caf::atom_constant<caf::atom("wtnsfree")>;  ///< borrowed bytes released
using close_atom = caf::atom_constant<caf::atom("libclose")>;         ///< cancel all, then signal

using front_actor = caf::typed_actor<
    /// Submit this job and complete this pending proof with its outcome.
    caf::reacts_to<submit_atom, local_job, pending_ptr>,
    /// The runtime let go of this pending proof's borrowed witness bytes.
    caf::reacts_to<witness_free_atom, pending_ptr>,
    /// Have the key cache adopt this key under this name, then answer.
    caf::reacts_to<adopt_atom, std::string, zk::groth16::key_ptr, adoption_ptr>,
    /// Cancel everything in flight, then signal.
    caf::reacts_to<close_atom, close_ptr>>;

struct front_config {
  job_registry_actor registry;
  key_cache_actor keys;
  /// Set to the thread callbacks run on when the front starts.
  std::shared_ptr<std::atomic<std::thread::id>> thread;
};

/// Spawns the front on a thread of its own.
front_actor spawn_front(caf::actor_system& sys, front_config cfg);

}  // namespace proofline::lib
