// jemalloc arenas: where buffers live, what free() does (nothing), what a
// purge does (returns the pages: resident memory drops), and the lifetime of
// an arena and its buffers. The test binary links jemalloc statically, like
// the proofline executable.
#include <doctest/doctest.h>

#include <jemalloc/jemalloc.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "memory/arena.hpp"
#include "memory/process.hpp"
#include "memory/thread_arena.hpp"

using namespace proofline::memory;

namespace {

constexpr std::size_t mib = std::size_t(1) << 20;

/// Writes every page so it is resident.
void touch(buffer<unsigned char>& b) { std::memset(b.data(), 0x5a, b.bytes()); }

}  // namespace

TEST_CASE("jemalloc is linked into the test binary, so arenas are real") {
  REQUIRE(jemalloc_available());
  CHECK(jemalloc_version().rfind("5.", 0) == 0);
  auto a = arena::create();
  REQUIRE(a.valid());
  // Created arenas come after the automatic ones (0 .. narenas-1).
  CHECK(automatic_arenas() > 0);
  CHECK(a.index() >= static_cast<int>(automatic_arenas()));
  CHECK(a.buffers().arena == a.index());
  CHECK_FALSE(a.buffers().pinned);
}

TEST_CASE("the flags spelled out without jemalloc's header equal jemalloc's macros") {
  CHECK(arena_alloc_flags(7, 4096) == (MALLOCX_ARENA(7) | MALLOCX_TCACHE_NONE | MALLOCX_ALIGN(4096)));
  CHECK(arena_alloc_flags(300, 64) == (MALLOCX_ARENA(300) | MALLOCX_TCACHE_NONE | MALLOCX_ALIGN(64)));
  CHECK(tcache_none_flag() == MALLOCX_TCACHE_NONE);
}

TEST_CASE("a buffer from an arena lives in that arena, page aligned, outside the automatic arenas") {
  auto a = arena::create();
  REQUIRE(a.valid());
  buffer<uint64_t> big(mib, a.buffers());  // 8 MiB
  buffer<uint64_t> small(3, a.buffers());  // 24 bytes: still page aligned, still this arena
  for (const void* p : {static_cast<const void*>(big.data()), static_cast<const void*>(small.data())}) {
    CHECK(reinterpret_cast<uintptr_t>(p) % buffer_alignment == 0);
    REQUIRE(arena_of(p).has_value());
    CHECK(*arena_of(p) == static_cast<unsigned>(a.index()));
  }
  CHECK(big.origin().arena == a.index());
  auto s = a.stats();
  REQUIRE(s.has_value());
  CHECK(s->allocated >= 8 * mib);
}

TEST_CASE("freeing into an arena purges nothing inline; a purge returns the pages and RSS drops") {
  auto a = arena::create();
  REQUIRE(a.valid());
  constexpr std::size_t chunk = 64 << 10, total = 64 * mib;
  std::vector<buffer<unsigned char>> chunks;
  uint64_t rss0 = current_rss();
  for (std::size_t i = 0; i < total / chunk; ++i) {
    chunks.emplace_back(chunk, a.buffers());
    touch(chunks.back());
  }
  uint64_t rss_allocated = current_rss();
  CHECK(rss_allocated >= rss0 + total - 4 * mib);

  // Freed on another thread, as a finalizer frees a synthesizer's buffers.
  std::thread([&] { chunks.clear(); }).join();
  uint64_t rss_freed = current_rss();
  auto freed = a.stats();
  REQUIRE(freed.has_value());
  CHECK(freed->dirty >= total - 4 * mib);       // every page still dirty: decay is off
  CHECK(rss_freed + 4 * mib >= rss_allocated);  // and still resident

  REQUIRE(a.purge());
  uint64_t rss_purged = current_rss();
  auto purged = a.stats();
  REQUIRE(purged.has_value());
  CHECK(purged->dirty == 0);
  CHECK(purged->purged >= total - 4 * mib);
  CHECK(rss_purged + total - 8 * mib <= rss_freed);  // the pages went back to the kernel
}

TEST_CASE("a small buffer freed on another thread goes back to its arena, not that thread's cache") {
  auto a = arena::create();
  REQUIRE(a.valid());
  auto* b = new buffer<uint64_t>(8, a.buffers());  // 64 bytes
  const void* freed = b->data();
  bool reused_from_arena = true;
  std::thread([&] {
    delete b;  // dallocx(TCACHE_NONE): not parked in this thread's tcache
    void* next = std::malloc(64);
    reused_from_arena = next == freed || (arena_of(next) && *arena_of(next) == unsigned(a.index()));
    std::free(next);
  }).join();
  CHECK_FALSE(reused_from_arena);
}

TEST_CASE("a thread bound to an arena allocates from it with plain malloc") {
  auto a = arena::create();
  REQUIRE(a.valid());
  std::optional<unsigned> where;
  std::thread([&] {
    REQUIRE(a.bind_current_thread());
    void* p = std::malloc(1 << 20);
    where = arena_of(p);
    std::free(p);
  }).join();
  REQUIRE(where.has_value());
  CHECK(*where == static_cast<unsigned>(a.index()));
}

TEST_CASE("an arena outlives its handle while buffers remain, and is destroyed after the last") {
  auto a = arena::create();
  REQUIRE(a.valid());
  unsigned index = static_cast<unsigned>(a.index());
  auto b = std::make_unique<buffer<uint32_t>>(1 << 18, a.buffers());  // 1 MiB
  a = arena();  // the handle goes; the buffer keeps the arena
  CHECK_FALSE(a.valid());
  CHECK(a.buffers().arena == -1);  // an empty arena hands out the heap
  std::memset(b->data(), 1, b->bytes());
  REQUIRE(arena_of(b->data()).has_value());
  CHECK(*arena_of(b->data()) == index);
  CHECK(read_arena_stats(index).has_value());
  b.reset();  // last buffer: arena.<i>.destroy
  CHECK_FALSE(read_arena_stats(index).has_value());
}

TEST_CASE("a thread binding names and binds its own thread once, and leaves a shared one alone") {
  thread_binding own{make_arena(), true, "pl.test"};
  REQUIRE(static_cast<bool>(own.arena));
  std::string name;
  std::optional<unsigned> where;
  int bound_arena = -2;
  std::thread([&] {
    own.bind();
    own.bind();  // once: a second call changes nothing
    name = thread_name();
    void* p = std::malloc(1 << 20);
    where = arena_of(p);
    std::free(p);
    bound_arena = own.bound_arena();
  }).join();
  CHECK(name == "pl.test");
  REQUIRE(where.has_value());
  CHECK(*where == static_cast<unsigned>(own.arena->index()));
  CHECK(bound_arena == own.arena->index());

  thread_binding shared{make_arena(), false, "pl.shared"};
  std::string before = thread_name();
  shared.bind();
  CHECK_FALSE(shared.bound);
  CHECK(shared.bound_arena() == -1);
  CHECK(thread_name() == before);
}
