// Actor-system configurations for tests: quiet logs, and either CAF's
// deterministic `testing` scheduler or a small real one.
#pragma once

#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>

#include <cstddef>

namespace proofline::test {

/// No log file and no console log.
inline caf::actor_system_config& quiet(caf::actor_system_config& cfg) {
  cfg.set("logger.file-verbosity", caf::atom("quiet"));
  cfg.set("logger.console-verbosity", caf::atom("quiet"));
  return cfg;
}

/// CAF's `testing` scheduler policy: no worker threads; sched.run() runs
/// every actor until nothing is left to do.
inline caf::actor_system_config& deterministic(caf::actor_system_config& cfg) {
  cfg.set("scheduler.policy", caf::atom("testing"));
  return quiet(cfg);
}

/// The real scheduler on `threads` worker threads.
inline caf::actor_system_config& threaded(caf::actor_system_config& cfg, size_t threads) {
  cfg.set("scheduler.max-threads", threads);
  return quiet(cfg);
}

}  // namespace proofline::test
