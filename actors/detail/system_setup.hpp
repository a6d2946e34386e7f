// The actor system every proofline program runs the pipeline on: a small
// scheduler (the pipeline's busy actors are detached, each on a thread of its
// own), CAF's logger off (spdlog logs), and every message type registered.
// `run`, `serve`/clients (after loading the network modules) and
// `bench memory` start from it.
#pragma once

#include <caf/actor_system_config.hpp>

namespace proofline {

/// CAF scheduler threads: they only route messages and keep the books (all
/// blocking work runs in detached actors, the network on the middleman's own
/// thread), so two are plenty.
inline constexpr int default_scheduler_threads = 2;

/// Sets the scheduler's threads, silences CAF's logger and registers every
/// message type (messages/catalogue.hpp) on `cfg`.
void configure_actor_system(caf::actor_system_config& cfg,
                            int scheduler_threads = default_scheduler_threads);

}  // namespace proofline
