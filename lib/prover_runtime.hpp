// prover_runtime: what a libproofline handle is. It owns one proving runtime
// (an actor system, the backends, the memory budget; engine/runtime_builder
// builds it as it builds `serve`'s), holds the keys its callers loaded, and
// carries their witnesses through the runtime in memory: a witness goes in
// as bytes (job_payload), its proof comes back as text in the job's report,
// and no file, scratch directory or result.json is written.
//
// Threads: any thread may call any member. A submission is one message to
// the handle's front actor (lib/front.hpp), which submits the job to the
// registry and awaits its report; callers on many threads therefore share
// one pipeline, their partitions synthesized beside the GPU and proved in
// the order the memory manager grants them, with no lock on the way. What a
// caller waits on is its own pending_proof.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include "engine/runtime_builder.hpp"
#include "lib/front.hpp"
#include "lib/outcome.hpp"
#include "zk/groth16/proving_key.hpp"

namespace proofline::lib {

/// A key loaded into a handle; jobs name it by `name` at the key cache.
struct loaded_key {
  zk::groth16::key_ptr key;
  std::string name;   ///< unique in its handle's key cache
  std::string shown;  ///< how messages name it: the path, or "zkey buffer"
};

/// Priority and ownership of one submission.
struct submit_options {
  priority prio = priority::normal;
  /// The witness bytes stay valid until the outcome (and its release): read
  /// in place, not copied.
  bool borrow = false;
};

class prover_runtime {
 public:
  /// Starts a runtime from the options JSON (proofline_open's keys). Throws
  /// error (argument: bad options; backend: the backends cannot start).
  explicit prover_runtime(const std::string& options_json);
  /// close(), then the runtime and its actor system stop.
  ~prover_runtime();
  prover_runtime(const prover_runtime&) = delete;
  prover_runtime& operator=(const prover_runtime&) = delete;

  /// Loads and checks a .zkey (from a file, or bytes copied out) and makes
  /// it ready on the backends; it stays until release(). Throws error(input).
  std::shared_ptr<const loaded_key> load_file(const std::string& path);
  std::shared_ptr<const loaded_key> load_bytes(const void* data, std::size_t size);
  /// The key's jobs may still finish; then it goes from the host and GPUs.
  void release(const loaded_key& key);

  /// Submits one witness (.wtns bytes) proved with `key`; returns at once.
  /// A witness whose header does not fit the key throws error(input) before
  /// anything is submitted, naming the mismatch. `done` (optional) is called
  /// once with the outcome, on the front actor's thread.
  pending_ptr submit(const loaded_key& key, const void* wtns, std::size_t size,
                     submit_options opts = {}, pending_proof::callback done = nullptr);

  /// Submits one input.json text (as snarkjs reads it) whose witness
  /// `generator` (a `proofline witness build` object) computes on a
  /// synthesizer, beside the GPU; the witness is not kept. A generator that
  /// cannot be opened or does not fit the key throws error(input) before
  /// anything is submitted; an input the circuit refuses (a missing or
  /// unknown signal, a failed assert) completes as an input error naming
  /// the signal or circom's message.
  pending_ptr submit_input(const loaded_key& key, const std::string& generator, const void* input,
                           std::size_t size, submit_options opts = {},
                           pending_proof::callback done = nullptr);

  /// submit() and wait(), reading the witness in place. Throws error(state)
  /// when called on the completion thread, whose callbacks it would wait for.
  proof_outcome prove(const loaded_key& key, const void* wtns, std::size_t size,
                      priority prio = priority::normal);

  /// submit_input() and wait(), reading the input in place.
  proof_outcome prove_input(const loaded_key& key, const std::string& generator,
                            const void* input, std::size_t size,
                            priority prio = priority::normal);

  /// Cancels what is in flight (its outcomes: cancelled) and waits until
  /// every outcome is delivered. Later submissions fail with state. Idempotent.
  void close();

  /// Whether the calling thread is the one callbacks run on.
  bool on_completion_thread() const;

 private:
  /// One partition of bytes (a .wtns, or with `generator` an input.json)
  /// named `name` in messages, submitted through the front.
  pending_ptr submit_bytes(const loaded_key& key, const std::string& name,
                           const std::string& generator, const void* data, std::size_t size,
                           submit_options opts, pending_proof::callback done);

  /// A blocking call's options (borrowed bytes); throws error(state) on
  /// the completion thread, whose callbacks the call would wait for.
  submit_options blocking_options(priority prio) const;

  caf::actor_system_config cfg_;
  std::unique_ptr<caf::actor_system> sys_;
  std::optional<engine::runtime_builder> builder_;
  std::unique_ptr<runtime> runtime_;
  front_actor front_;
  std::shared_ptr<std::atomic<std::thread::id>> front_thread_;
  std::atomic<uint64_t> next_id_{0};
  std::atomic<bool> closed_{false};
  bool self_check_ = true;
};

}  // namespace proofline::lib
