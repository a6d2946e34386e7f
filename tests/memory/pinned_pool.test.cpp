// The pinned pool: first-fit page-aligned blocks that coalesce when given
// back, blocks that stay taken while any buffer carved from them lives, the
// injected pinner (called once per step of the mapping, undone after the last
// block), pinning in the background that never holds a block back, and a
// random sequence of takes and give-backs against a model.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <ostream>
#include <random>
#include <thread>
#include <vector>

#include "memory/pinned_pool.hpp"

using namespace proofline::memory;

namespace {

constexpr std::size_t page = pinned_pool::block_alignment;

/// A block handle whose on_free gives the block back at once (the memory
/// manager does it by message; here the test is the owner).
struct owner {
  pinned_pool& pool;
  std::vector<std::size_t> freed;
  block_ptr take(std::size_t bytes) {
    return pool.take(bytes, [this](std::size_t offset) {
      freed.push_back(offset);
      pool.give_back(offset);
    });
  }
};

}  // namespace

TEST_CASE("pool blocks are first fit, page aligned, and coalesce when given back") {
  pinned_pool pool(64 * page);
  owner o{pool, {}};
  CHECK(pool.capacity() == 64 * page);
  auto a = o.take(10 * page - 100);  // rounds up to 10 pages
  auto b = o.take(20 * page);
  auto c = o.take(1);
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(c);
  CHECK(a->offset() == 0);
  CHECK(a->bytes() == 10 * page);
  CHECK(b->offset() == 10 * page);
  CHECK(c->offset() == 30 * page);
  CHECK(c->bytes() == page);
  CHECK(reinterpret_cast<uintptr_t>(b->data()) % page == 0);
  CHECK(pool.used() == 31 * page);
  CHECK(pool.blocks() == 3);
  CHECK(pool.largest_free() == 33 * page);
  CHECK_FALSE(static_cast<bool>(o.take(34 * page)));  // no free range is that large

  b.reset();
  CHECK(o.freed == std::vector<std::size_t>{10 * page});
  CHECK(pool.largest_free() == 33 * page);  // the hole (20) is smaller than the tail
  a.reset();                                 // merges with the hole: 30 pages at 0
  auto d = o.take(30 * page);
  REQUIRE(d);
  CHECK(d->offset() == 0);
  c.reset();  // merges the tail into one range of 34 pages
  CHECK(pool.largest_free() == 34 * page);
  d.reset();
  CHECK(pool.largest_free() == 64 * page);
  CHECK(pool.used() == 0);
  CHECK(pool.blocks() == 0);
}

TEST_CASE("a block is free only once its grant and every buffer carved from it are gone") {
  pinned_pool pool(16 * page);
  owner o{pool, {}};
  auto blk = o.take(8 * page);
  REQUIRE(blk);
  auto src = blk->buffers();
  CHECK(src.arena == -1);  // pool memory is never purged
  auto w = std::make_unique<buffer<uint64_t>>(100, src);
  auto a = std::make_unique<buffer<uint64_t>>(512, src);  // exactly one page
  CHECK(static_cast<void*>(w->data()) == blk->data());
  CHECK(reinterpret_cast<unsigned char*>(a->data()) ==
        static_cast<unsigned char*>(blk->data()) + page);  // each buffer starts on a page
  CHECK(blk->used() == 2 * page);
  blk.reset();  // the grant is gone; the buffers still hold the block
  CHECK(o.freed.empty());
  CHECK(pool.used() == 8 * page);
  std::memset(a->data(), 7, a->bytes());  // still valid memory
  w.reset();
  CHECK(o.freed.empty());
  a.reset();
  CHECK(o.freed == std::vector<std::size_t>{0});
  CHECK(pool.used() == 0);
}

TEST_CASE("a block hands out consecutive buffers and refuses one that does not fit") {
  pinned_pool pool(8 * page);
  owner o{pool, {}};
  auto blk = o.take(3 * page);
  REQUIRE(blk);
  buffer<unsigned char> x(100, blk->buffers());
  buffer<unsigned char> y(page, blk->buffers());
  CHECK(blk->used() == 2 * page);
  CHECK_THROWS_AS(buffer<unsigned char>(2 * page, blk->buffers()), std::bad_alloc);
  buffer<unsigned char> z(page, blk->buffers());  // the last page still fits
  CHECK(blk->used() == 3 * page);
}

TEST_CASE("pinning is injected: one call for a mapping within one step, undone after the last block") {
  struct calls {
    int pins = 0, unpins = 0;
    void* pinned = nullptr;
    std::size_t bytes = 0;
    void* unpinned = nullptr;
  } c;
  pinner fake;
  fake.name = "fakeRegister";
  fake.pin = [&c](void* p, std::size_t bytes, std::string*) {
    ++c.pins;
    c.pinned = p;
    c.bytes = bytes;
    return true;
  };
  fake.unpin = [&c](void* p) {
    ++c.unpins;
    c.unpinned = p;
  };
  block_ptr survivor;
  {
    pinned_pool pool(10 * page + 1, fake);  // rounds up to 11 pages
    CHECK(pool.pinned());
    CHECK(pool.pin_error().empty());
    CHECK(c.pins == 1);
    CHECK(c.bytes == 11 * page);
    survivor = pool.take(page, nullptr);
    REQUIRE(survivor);
    CHECK(survivor->pinned());
    CHECK(survivor->buffers().pinned);  // what the CUDA backend checks: origin().pinned
    CHECK(survivor->data() == c.pinned);
  }
  CHECK(c.unpins == 0);  // a block outlives the pool: its memory stays mapped and pinned
  std::memset(survivor->data(), 1, page);
  survivor.reset();
  CHECK(c.unpins == 1);
  CHECK(c.unpinned == c.pinned);
}

TEST_CASE("pinned in the background a step at a time: blocks never wait, and are pinned once all their pages are") {
  std::atomic<int> calls{0};
  std::atomic<bool> release{false};
  pinner slow;
  slow.name = "slowRegister";
  slow.pin = [&](void*, std::size_t bytes, std::string*) {
    CHECK(bytes == 2 * page);
    if (calls++ == 1)  // the second step blocks until the test lets it go
      while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return true;
  };
  int unpins = 0;
  slow.unpin = [&](void*) { ++unpins; };
  {
    pinned_pool pool(8 * page, slow, true, 2 * page);
    CHECK(pool.pinned_bytes() == 0);
    // Nothing pinned yet: a block is ordinary pages, at once.
    auto early = pool.take(page, nullptr);
    REQUIRE(early);
    CHECK_FALSE(early->buffers().pinned);
    std::thread pinning([task = pool.pin_task(), &pool] { pool.pin_finished(task()); });
    for (int i = 0; i < 5000 && pool.pinned_bytes() < 2 * page; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    REQUIRE(pool.pinned_bytes() == 2 * page);  // the first step; the second is stuck
    CHECK_FALSE(pool.pinned());
    CHECK(early->pinned());  // its pages are now pinned
    CHECK(early->buffers().pinned);
    auto beyond = pool.take(3 * page, nullptr);  // pages 1-3: partly unpinned
    REQUIRE(beyond);
    CHECK_FALSE(beyond->pinned());
    CHECK_FALSE(beyond->buffers().pinned);  // the backend stages it instead of waiting
    std::memset(beyond->data(), 7, 3 * page);
    release = true;
    pinning.join();
    CHECK(pool.pinned());
    CHECK(pool.pin_error().empty());
    CHECK(beyond->pinned());
    CHECK(calls == 4);
  }
  CHECK(unpins == 4);  // every step undone
}

TEST_CASE("a pinner that fails leaves ordinary pages and says why") {
  pinner failing;
  failing.name = "fakeRegister";
  failing.pin = [](void*, std::size_t, std::string* why) {
    *why = "no device";
    return false;
  };
  bool unpinned = false;
  failing.unpin = [&](void*) { unpinned = true; };
  {
    pinned_pool pool(4 * page, failing);
    CHECK_FALSE(pool.pinned());
    CHECK(pool.pin_error() == "fakeRegister: no device");
    auto blk = pool.take(page, nullptr);
    REQUIRE(blk);
    CHECK_FALSE(blk->buffers().pinned);
  }
  CHECK_FALSE(unpinned);  // nothing was pinned, so nothing is unpinned
}

TEST_CASE("random takes and give-backs keep the pool's books exact") {
  constexpr std::size_t pages = 256;
  pinned_pool pool(pages * page);
  std::mt19937 rng(11);
  std::map<std::size_t, std::size_t> live;  // offset -> bytes, the model
  std::vector<block_ptr> held;
  for (int step = 0; step < 4000; ++step) {
    if (!held.empty() && (rng() % 2 || held.size() > 40)) {
      std::size_t i = rng() % held.size();
      std::size_t offset = held[i]->offset();
      held.erase(held.begin() + static_cast<long>(i));  // on_free gives it back
      live.erase(offset);
    } else {
      std::size_t want = 1 + rng() % (24 * page);
      auto b = pool.take(want, [&pool](std::size_t off) { pool.give_back(off); });
      if (!b) {
        CHECK(pool.largest_free() < pinned_pool::block_bytes(want));
        continue;
      }
      CHECK(b->bytes() == pinned_pool::block_bytes(want));
      // The new block overlaps no live one.
      auto next = live.lower_bound(b->offset());
      if (next != live.end()) CHECK(b->offset() + b->bytes() <= next->first);
      if (next != live.begin()) {
        auto prev = std::prev(next);
        CHECK(prev->first + prev->second <= b->offset());
      }
      live.emplace(b->offset(), b->bytes());
      held.push_back(std::move(b));
    }
    std::size_t used = 0;
    for (const auto& [o, n] : live) used += n;
    REQUIRE(pool.used() == used);
    REQUIRE(pool.blocks() == live.size());
  }
  held.clear();
  CHECK(pool.used() == 0);
  CHECK(pool.largest_free() == pages * page);  // everything merged back into one range
}
