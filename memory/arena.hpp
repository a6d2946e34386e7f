// Per-actor jemalloc arenas: partition buffers that no free() purges inline,
// returned to the kernel only when the memory manager says so.
//
// Problem: with jemalloc's default decay (dirty_decay_ms = 10 s), a burst of
// large frees purges pages inside free() on whichever thread frees (most of
// a burst's pages: docs/BENCHMARKS.md, "Memory"), and glibc's trim walks
// every arena at once. Either way the purge lands on a
// thread that did not choose it, possibly a GPU worker's.
//
// Design: every synthesizer, finalizer and GPU worker owns an `arena` created
// with `arenas.create` and run with dirty_decay_ms = muzzy_decay_ms = -1, so
// freed pages stay dirty until purge_arena() (arena.<i>.purge) runs; the
// memory manager calls it on its own thread. Buffers come from an arena by
// mallocx(MALLOCX_ARENA | MALLOCX_TCACHE_NONE | MALLOCX_ALIGN(4096)) and go
// back by dallocx(MALLOCX_TCACHE_NONE) from any thread (the pages return to
// the owning arena, never into the freeing thread's cache).
//
// The libraries do not force jemalloc: mallctl, mallocx and dallocx are
// reached through weak declarations. The proofline executable and its tests
// link jemalloc statically (target proofline_jemalloc); a program linked
// without it (the glibc baseline under bench/) still links, and there
// jemalloc_available() is false, arenas are empty and hand out heap_source().
//
// Lifecycle: arena::create() -> source() for buffers -> purge() any number of
// times -> last handle and last buffer gone -> arena.<i>.destroy. Each buffer
// holds a reference, so an arena outlives every buffer taken from it. An
// arena that a thread was bound to (bind_current_thread) is purged but never
// destroyed: that thread's own small allocations may still live in it.
//
// Cost: creating an arena and a large mallocx/dallocx are cheap (no mmap
// when dirty pages are reused); a purge is kernel time in madvise, in
// proportion to the bytes it returns (per GiB: docs/BENCHMARKS.md, "Memory").
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "memory/buffer.hpp"

namespace proofline::memory {

/// True when jemalloc's API is linked into this program (the proofline
/// executable and its tests); false with glibc malloc.
bool jemalloc_available();

/// jemalloc's version string ("5.3.0-0-g54ea..."), or "" without jemalloc.
std::string jemalloc_version();

/// Page counts of one arena as bytes, after an `epoch` refresh.
struct arena_stats {
  uint64_t active = 0;    ///< pages backing live allocations (pactive × page)
  uint64_t dirty = 0;     ///< freed pages still resident, to be purged (pdirty × page)
  uint64_t muzzy = 0;     ///< pages lazily freed with MADV_FREE (pmuzzy × page)
  uint64_t retained = 0;  ///< virtual memory kept mapped but returned to the kernel
  uint64_t allocated = 0;  ///< bytes in live allocations (small + large)
  uint64_t purged = 0;     ///< bytes purged from this arena so far (dirty_purged × page)
};

/// Statistics of arena `index`; nullopt without jemalloc or for an unknown
/// index. Refreshes jemalloc's statistics epoch first (a global lock for a
/// few µs per arena).
std::optional<arena_stats> read_arena_stats(unsigned index);

/// Purges every dirty and muzzy page of arena `index` (arena.<i>.purge).
/// Blocking for as long as the kernel takes to drop the pages; returns false
/// without jemalloc or on error.
bool purge_arena(unsigned index);

/// Purges every arena of the process (arena.<MALLCTL_ARENAS_ALL>.purge): the
/// jemalloc counterpart of glibc's trim of every arena. Benchmarks only.
bool purge_all_arenas();

/// The arena that owns `p` (arenas.lookup); nullopt without jemalloc. `p`
/// must be a live allocation of jemalloc's (tests use it to check where a
/// buffer came from).
std::optional<unsigned> arena_of(const void* p);

/// The mallocx/dallocx flags of an arena buffer: MALLOCX_ARENA(index) |
/// MALLOCX_TCACHE_NONE | MALLOCX_ALIGN(align); align a power of two. Spelled
/// out here because jemalloc's header is not included (weak linkage).
int arena_alloc_flags(unsigned index, std::size_t align);
/// MALLOCX_TCACHE_NONE.
int tcache_none_flag();

/// Bytes the calling thread has allocated so far (jemalloc's
/// thread.allocated, a running total that frees do not lower); 0 without
/// jemalloc. The difference across a call is what that call allocated.
uint64_t thread_allocated_bytes();

/// Number of arenas jemalloc created at start (opt.narenas): the automatic
/// arenas are 0 .. narenas - 1; arenas.create gives indices above them.
unsigned automatic_arenas();

class arena {
 public:
  /// An empty arena: valid() is false and source() is heap_source().
  arena() noexcept = default;
  /// Creates an arena with automatic decay off (dirty and muzzy -1). Without
  /// jemalloc, or if jemalloc refuses, returns an empty arena.
  static arena create();

  arena(const arena&) = delete;
  arena& operator=(const arena&) = delete;
  arena(arena&& o) noexcept;
  arena& operator=(arena&& o) noexcept;
  /// Drops this handle; the arena is destroyed once its buffers are gone too.
  ~arena();

  bool valid() const noexcept { return core_ != nullptr; }
  /// jemalloc's arena index, or -1 when empty.
  int index() const noexcept;

  /// Where buffers from this arena come from; heap_source() when empty.
  /// Allocation: mallocx(ARENA | TCACHE_NONE | ALIGN(align)); release:
  /// dallocx(TCACHE_NONE) from any thread.
  source buffers() const;

  /// Makes plain malloc() on the calling thread use this arena (thread.arena),
  /// for a thread that lives as long as the arena's owner (a detached actor).
  /// The arena is then never destroyed, only purged. Returns false when empty.
  bool bind_current_thread();

  /// purge_arena(index()); false when empty.
  bool purge() const;
  /// read_arena_stats(index()); nullopt when empty.
  std::optional<arena_stats> stats() const;

  /// Shared state behind the handle and every buffer; opaque.
  struct core;

 private:
  explicit arena(core* c) noexcept : core_(c) {}
  core* core_ = nullptr;
};

/// Arenas travel in actor configurations (copied by CAF at spawn) by handle.
using arena_ptr = std::shared_ptr<arena>;

/// A new arena behind a shared handle (empty without jemalloc).
inline arena_ptr make_arena() { return std::make_shared<arena>(arena::create()); }

}  // namespace proofline::memory
