// One thread, one arena: what an actor with a thread of its own (synthesizer,
// finalizer, GPU worker) does on that thread before its first allocation, so
// everything it allocates lands in its own jemalloc arena and `top -H` shows
// whose thread it is.
#pragma once

#include <string>

#include "memory/arena.hpp"
#include "memory/process.hpp"

namespace proofline::memory {

/// On the calling thread, once (`bound` remembers it): names the thread
/// `name` and binds it to `arena` (none: the thread keeps its default arena).
inline void bind_thread_once(bool& bound, const std::string& name, const arena_ptr& arena) {
  if (bound) return;
  bound = true;
  set_thread_name(name);
  if (arena) arena->bind_current_thread();
}

}  // namespace proofline::memory
