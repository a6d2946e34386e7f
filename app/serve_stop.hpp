// How `serve` stops: SIGINT and SIGTERM are blocked in every thread and
// waited for by the main thread; the first one drains the runtime (no new
// partition starts, those in flight finish within --drain-timeout), a
// second one stops at once.
#pragma once

#include <signal.h>

#include <caf/actor_system.hpp>

#include "messages/interfaces.hpp"

namespace proofline::app {

/// Blocks SIGINT and SIGTERM in this thread and, by inheritance, in every
/// thread the actor system starts, so sigwait() receives them.
sigset_t block_stop_signals();

/// The drain after stop signal `sig`: the registry starts no partition and
/// answers once those in flight have finished; waits for that answer at most
/// `timeout_s` seconds, or until a second signal, and logs what is left
/// (what stays in the journal when `journal`).
void drain_runtime(caf::actor_system& sys, const job_registry_actor& registry,
                   const sigset_t& signals, int sig, unsigned timeout_s, bool journal);

}  // namespace proofline::app
