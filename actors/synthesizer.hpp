// synthesizer: one of a pool (N, default 2). When idle it pulls a grant from
// the memory manager, reads the partition's witness and computes a, b, c into
// buffers from its memory source, and sends the partition to the scheduler.
// A bad witness fails only that partition: the error (naming the file) goes to
// the registry and the reservation is released at once.
//
// Synthesis blocks for as long as the arithmetic takes, so production spawns
// synthesizers detached (one thread each: thread.own_thread); tests spawn them
// undetached for determinism. The threads a synthesis may use come with its
// grant (grant::threads) and go to the synthesize op as a parameter.
//
// Memory: the grant may carry a pinned pool block; then the witness and a, b,
// c are written straight into it (the GPU uploads them from there, no extra
// copy). Everything else, and all of it without a block, comes from the
// synthesizer's own jemalloc arena (decay off, purged only by the memory
// manager when a finalizer frees the partition). Detached, the synthesizer
// also binds its thread to that arena, so its incidental mallocs never land
// in (or purge) a shared arena.
#pragma once

#include <caf/fwd.hpp>

#include <string>

#include "actors/detail/prover_ops.hpp"
#include "actors/detail/run_clock.hpp"
#include "memory/arena.hpp"
#include "memory/thread_arena.hpp"
#include "memory/buffer.hpp"
#include "messages/interfaces.hpp"

namespace proofline {

struct synthesizer_config {
  memory_manager_actor memory;
  scheduler_actor scheduler;
  job_registry_actor registry;
  decltype(prover_ops::synthesize) synthesize;
  memory::source source = memory::heap_source();  ///< partition buffers without an arena
  run_clock clock;
  /// Its own thread (detached) and arena, bound on the first message; the
  /// arena also holds its pageable buffers (source is then
  /// thread.arena->buffers()); a null or empty arena keeps `source`.
  memory::thread_binding thread{nullptr, false, "pl.synth"};
};

/// Spawns a synthesizer, detached (on a thread of its own) when cfg.thread.own_thread.
synthesizer_actor spawn_synthesizer(caf::actor_system& sys, synthesizer_config cfg);

}  // namespace proofline
