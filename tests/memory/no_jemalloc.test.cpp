// The memory library linked WITHOUT jemalloc (like the glibc baseline under
// bench/): it links, says arenas are unavailable and falls back to the heap.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <dlfcn.h>

#include <cstring>

#include "memory/arena.hpp"

using namespace proofline::memory;

TEST_CASE("without jemalloc arenas are unavailable and buffers come from the heap") {
  REQUIRE(dlsym(RTLD_DEFAULT, "mallctl") == nullptr);  // really built without jemalloc
  CHECK_FALSE(jemalloc_available());
  CHECK(jemalloc_version().empty());
  auto a = arena::create();
  CHECK_FALSE(a.valid());
  CHECK(a.index() == -1);
  CHECK_FALSE(a.bind_current_thread());
  CHECK_FALSE(a.purge());
  source s = a.buffers();
  CHECK(s.arena == -1);
  buffer<uint64_t> b(1 << 16, s);
  std::memset(b.data(), 3, b.bytes());
  CHECK(reinterpret_cast<uintptr_t>(b.data()) % buffer_alignment == 0);
  CHECK_FALSE(purge_arena(0));
  CHECK_FALSE(read_arena_stats(0).has_value());
  CHECK_FALSE(arena_of(b.data()).has_value());
  CHECK(automatic_arenas() == 0);
}
