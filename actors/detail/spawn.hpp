// How an actor of actors/ is spawned: CAF constructs its state class with the
// actor's pointer, and the state's make_behavior(config) gives the behaviour
// (docs/ARCHITECTURE.md: one shape for every actor).
#pragma once

#include <caf/actor_system.hpp>
#include <caf/spawn_options.hpp>

#include <utility>

namespace proofline {

/// Spawns the actor whose state class is `State` with `config`; on a thread
/// of its own when `detached` (an actor that blocks: synthesis, proving,
/// file writes, SQLite), else on the actor system's scheduler.
template <class State, class Config>
auto spawn_stateful(caf::actor_system& sys, Config config, bool detached = false) {
  auto fun = [](typename State::pointer self, Config c) {
    return self->state.make_behavior(std::move(c));
  };
  return detached ? sys.spawn<caf::detached>(fun, std::move(config))
                  : sys.spawn(fun, std::move(config));
}

}  // namespace proofline
