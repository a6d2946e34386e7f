// runtime_builder: the one place a proving runtime is assembled from its
// settings, for every door into it: `run`, `serve` and `prove` (app/) and
// the library (lib/). It makes the prover operations, chooses and starts the
// backends, sizes the memory system and the actor pools, and spawns the
// runtime; a command adds only what is its own (a journal, observers, the
// key read-ahead of `run`) between those steps:
//
//   runtime_builder b(settings, role);
//   b.ops().load_key = prefetch.loader();   // optional: wrap an operation
//   if (auto problem = b.choose(); !problem.empty()) ...  // usage error
//   b.config().journal = ...;               // optional: what the command adds
//   auto rt = b.start(sys);
//
// Test-only: when PROOFLINE_FAULT_INJECT is set (read once, by the
// constructor), start() hands the runtime its primary backends wrapped to
// corrupt or fail chosen proofs (engine/fault_inject.hpp) and logs a warning.
#pragma once

#include <memory>
#include <string>

#include <caf/actor_system.hpp>

#include "actors/detail/prover_ops.hpp"
#include "actors/detail/run_clock.hpp"
#include "actors/runtime.hpp"
#include "engine/backend_choice.hpp"
#include "engine/settings.hpp"

namespace proofline::engine {

/// What a door needs of the runtime beyond its settings.
struct runtime_role {
  /// Upload partitions from a pinned host pool (serve; run --pinned-pool).
  bool pinned_pool = false;
  /// Read partitions into a pool of ordinary pages kept between partitions
  /// (run --resident-pool); pinned_pool wins when both are set.
  bool resident_pool = false;
  /// Keys stay warm across jobs until the memory budget needs room (serve,
  /// the library); false drops a key with its last job (run, prove).
  bool keep_keys = false;
  /// Completed jobs the registry still answers for; 0: all (run).
  std::size_t keep_finished = 0;
  /// ... and the most bytes their records may hold; 0: no bound.
  uint64_t keep_finished_bytes = 0;
  /// False: a coordinator that proves nothing locally (no synthesizers).
  bool local_proving = true;
};

class runtime_builder {
 public:
  /// Makes the real prover operations for `settings` (threads, self-check,
  /// synthesis model); throws std::invalid_argument for a synthesis model
  /// it does not know.
  runtime_builder(runtime_settings settings, runtime_role role, run_clock clock = {});

  /// The operations the runtime will run; replace or wrap one before start().
  prover_ops& ops() { return ops_; }

  /// Starts the backends (with CUDA the slow part: device start-up) and
  /// fills config() for them: budget, synthesizers, pools, fallback. Returns
  /// a usage error naming the option, or "" when the runtime can start.
  std::string choose();

  /// After choose(): the chosen backends.
  const backend_choice& choice() const { return choice_; }
  /// After choose(): the configuration start() uses; a door may add to it.
  runtime_config& config() { return config_; }
  /// After choose(): the synthesizers chosen (what a node offers as slots
  /// even when it proves nothing locally).
  unsigned synthesizers() const { return synthesizers_; }
  const runtime_settings& settings() const { return settings_; }

  /// The runtime on `sys`, after choose(); throws std::invalid_argument when
  /// it refuses its configuration or PROOFLINE_FAULT_INJECT is malformed.
  std::unique_ptr<runtime> start(caf::actor_system& sys) const;

 private:
  runtime_settings settings_;
  runtime_role role_;
  prover_ops ops_;
  backend_choice choice_;
  runtime_config config_;
  unsigned synthesizers_ = 0;
  std::string faults_;  ///< PROOFLINE_FAULT_INJECT; "" when not set (no faults)
};

}  // namespace proofline::engine
