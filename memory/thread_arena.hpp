// One thread, one arena: what an actor with a thread of its own (synthesizer,
// finalizer, GPU worker) does on that thread before its first allocation, so
// everything it allocates lands in its own jemalloc arena and `top -H` shows
// whose thread it is.
#pragma once

#include <string>

#include "memory/arena.hpp"
#include "memory/process.hpp"

namespace proofline::memory {

/// The thread an actor runs on and the arena that thread allocates from.
/// Part of the actor's configuration; bind() runs on the actor's thread.
struct thread_binding {
  /// The arena the thread allocates from; null: its default arena.
  arena_ptr arena;
  /// The actor runs on a thread of its own (detached); false leaves the
  /// thread as it is (actors on a shared scheduler, as in deterministic tests).
  bool own_thread = false;
  /// The thread's name (15 characters at most).
  std::string name;
  /// Bound and named already (on the first message).
  bool bound = false;

  /// On the calling thread, once and only with own_thread: names it `name`
  /// and binds it to `arena`.
  void bind() {
    if (!own_thread || bound) return;
    bound = true;
    set_thread_name(name);
    if (arena) arena->bind_current_thread();
  }

  /// The arena the thread is bound to, or -1 (not bound, or no arena).
  int bound_arena() const { return bound && arena ? arena->index() : -1; }
};

}  // namespace proofline::memory
