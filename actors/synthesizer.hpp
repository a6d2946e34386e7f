// synthesizer: one of a pool (N, default 2). When idle it pulls a grant from
// the memory manager, reads the partition's witness and computes a, b, c into
// buffers from its memory source, and sends the partition to the scheduler.
// A bad witness fails only that partition: the error (naming the file) goes to
// the registry and the reservation is released at once.
//
// Synthesis blocks for as long as the arithmetic takes, so production spawns
// synthesizers detached (one thread each); tests spawn them undetached for
// determinism.
//
// Memory: the grant may carry a pinned pool block; then the witness and a, b,
// c are written straight into it (the GPU uploads them from there, no extra
// copy). Everything else, and all of it without a block, comes from the
// synthesizer's own jemalloc arena (decay off, purged only by the memory
// manager when a finalizer frees the partition). Detached, the synthesizer
// also binds its thread to that arena, so its incidental mallocs never land
// in (or purge) a shared arena.
#pragma once

#include <string>

#include "actors/prover_ops.hpp"
#include "actors/run_clock.hpp"
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

struct synthesizer_state {
  static inline const char* name = "synthesizer";
  synthesizer_config cfg;
  bool asking = false;  ///< a pull request is outstanding
  uint64_t synthesized = 0;
};

using synthesizer_pointer = synthesizer_actor::stateful_pointer<synthesizer_state>;

synthesizer_actor::behavior_type synthesizer(synthesizer_pointer self, synthesizer_config cfg);

/// Asks the memory manager for work unless a request is already out.
void ask_for_work(synthesizer_pointer self);
/// A grant arrived: synthesize it, then ask for the next.
void on_grant(synthesizer_pointer self, const grant& g);
/// Synthesizes one granted partition and hands it on (or reports its failure).
void synthesize_granted(synthesizer_pointer self, const grant& g);

}  // namespace proofline
