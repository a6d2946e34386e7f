// The budget ledger: grant order, no starvation, releases, refusal of
// partitions larger than the budget, and the budget invariant under random
// sequences of operations.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <vector>

#include "memory/ledger.hpp"

using proofline::memory::grant_order;
using proofline::memory::ledger;

namespace {

constexpr uint8_t low = 0, normal = 1, high = 2, critical = 3;

/// Grants until the head no longer fits; returns the ids granted, in order.
std::vector<uint64_t> drain(ledger& l) {
  std::vector<uint64_t> ids;
  while (auto g = l.grant_next()) ids.push_back(g->id);
  return ids;
}

}  // namespace

TEST_CASE("the ledger grants by priority, then job sequence, then partition index") {
  ledger l(1000);
  // Submitted in a scrambled order; ids name the expected position.
  REQUIRE(l.submit(6, {low, 1, 0}, 10));
  REQUIRE(l.submit(4, {normal, 2, 0}, 10));
  REQUIRE(l.submit(3, {normal, 1, 1}, 10));
  REQUIRE(l.submit(1, {critical, 9, 0}, 10));
  REQUIRE(l.submit(2, {normal, 1, 0}, 10));
  REQUIRE(l.submit(5, {normal, 2, 3}, 10));
  REQUIRE(l.submit(0, {critical, 3, 7}, 10));
  CHECK(drain(l) == std::vector<uint64_t>{0, 1, 2, 3, 4, 5, 6});
  CHECK(l.reserved() == 70);
  CHECK(l.queued() == 0);
  CHECK(l.reservations() == 7);
}

TEST_CASE("the ledger grants while the sum fits and stops at the first request that does not") {
  ledger l(100);
  REQUIRE(l.submit(1, {normal, 1, 0}, 40));
  REQUIRE(l.submit(2, {normal, 1, 1}, 40));
  REQUIRE(l.submit(3, {normal, 1, 2}, 40));
  CHECK(drain(l) == std::vector<uint64_t>{1, 2});
  CHECK(l.reserved() == 80);
  CHECK(l.head_bytes() == 40u);
  l.release_all(1);
  CHECK(l.reserved() == 40);
  CHECK(drain(l) == std::vector<uint64_t>{3});
  CHECK(l.reserved() == 80);
}

TEST_CASE("an older job is never overtaken by a newer one that would fit") {
  ledger l(100);
  REQUIRE(l.submit(1, {normal, 1, 0}, 60));
  REQUIRE(l.grant_next());                   // 60 of 100 held
  REQUIRE(l.submit(2, {normal, 2, 0}, 70));  // older waiting job: does not fit yet
  // A stream of small newer partitions of the same priority, each of which fits.
  for (uint64_t i = 0; i < 5; ++i) REQUIRE(l.submit(10 + i, {normal, 3 + i, 0}, 10));
  CHECK_FALSE(l.grant_next());  // nothing skips ahead of job 2
  CHECK(l.reserved() == 60);

  l.release_all(1);
  auto g = l.grant_next();
  REQUIRE(g);
  CHECK(g->id == 2);
  CHECK(drain(l) == std::vector<uint64_t>{10, 11, 12});  // 70 + 3 x 10 = 100
  CHECK(l.reserved() == 100);
}

TEST_CASE("a higher priority request goes first but waits its turn for memory") {
  ledger l(100);
  REQUIRE(l.submit(1, {normal, 1, 0}, 50));
  REQUIRE(l.submit(2, {normal, 1, 1}, 50));
  CHECK(drain(l) == std::vector<uint64_t>{1, 2});
  REQUIRE(l.submit(3, {normal, 1, 2}, 50));
  REQUIRE(l.submit(4, {high, 2, 0}, 50));
  l.release_all(2);
  CHECK(drain(l) == std::vector<uint64_t>{4});
  l.release_all(1);
  CHECK(drain(l) == std::vector<uint64_t>{3});
}

TEST_CASE("partial releases return bytes step by step and release_all returns the rest") {
  ledger l(100);
  REQUIRE(l.submit(1, {normal, 1, 0}, 90));
  REQUIRE(l.submit(2, {normal, 1, 1}, 60));
  CHECK(drain(l) == std::vector<uint64_t>{1});

  CHECK(l.release(1, 20) == 20);
  CHECK(l.reserved() == 70);
  CHECK_FALSE(l.grant_next());  // 70 + 60 > 100
  CHECK(l.release(1, 30) == 30);
  CHECK(l.reserved() == 40);
  CHECK(drain(l) == std::vector<uint64_t>{2});
  CHECK(l.reserved() == 100);

  CHECK(l.release(1, 1000) == 40);  // clamped to what is held
  CHECK(l.reserved() == 60);
  CHECK(l.reservations() == 2);  // still live at 0 bytes
  CHECK(l.release_all(1) == 0);
  CHECK(l.reservations() == 1);
  CHECK(l.release_all(2) == 60);
  CHECK(l.reserved() == 0);
  CHECK(l.release_all(2) == 0);  // unknown id: nothing
  CHECK(l.peak_reserved() == 100);
}

TEST_CASE("a partition larger than the whole budget is refused at once") {
  ledger l(8ull << 30);
  uint64_t big = uint64_t(9.6 * (1ull << 30));
  CHECK_FALSE(l.submit(1, {normal, 1, 0}, big));
  CHECK(l.queued() == 0);
  CHECK(proofline::memory::too_large_message(big, 8ull << 30) ==
        "partition needs 9.6 GiB, the memory budget is 8 GiB");
  // Exactly the budget is fine.
  CHECK(l.submit(2, {normal, 1, 1}, 8ull << 30));
  CHECK(drain(l) == std::vector<uint64_t>{2});
}

TEST_CASE("a refusal names the key and the permanent charges beside the partition") {
  using proofline::memory::refusal_message;
  CHECK(refusal_message(2048, 0, 1024, 0) == "partition needs 2 KiB, the memory budget is 1 KiB");
  CHECK(refusal_message(500, 600, 1000, 0) ==
        "partition needs 500 B beside its proving key (600 B), the memory budget is 1000 B");
  CHECK(refusal_message(500, 0, 1000, 700) ==
        "partition needs 500 B, the memory budget is 1000 B, of which 700 B is held by the "
        "pinned pool and the backends' buffers");
}

TEST_CASE("a cancelled request leaves the queue and unblocks the one behind it") {
  ledger l(100);
  REQUIRE(l.submit(1, {normal, 1, 0}, 80));
  REQUIRE(l.grant_next());
  REQUIRE(l.submit(2, {normal, 2, 0}, 50));
  REQUIRE(l.submit(3, {normal, 3, 0}, 20));
  CHECK_FALSE(l.grant_next());
  CHECK(l.cancel(2));
  CHECK_FALSE(l.cancel(2));
  CHECK(drain(l) == std::vector<uint64_t>{3});
}

TEST_CASE("under random operations the sum of reservations never exceeds the budget") {
  std::mt19937_64 rng(20240601);
  for (int round = 0; round < 20; ++round) {
    const uint64_t budget = 1000 + rng() % 9000;
    ledger l(budget);
    std::map<uint64_t, uint64_t> held;  // model: id -> bytes
    std::map<grant_order, uint64_t> waiting;
    uint64_t next_id = 1;
    for (int step = 0; step < 2000; ++step) {
      switch (rng() % 4) {
        case 0: {  // submit
          grant_order o{uint8_t(rng() % 4), rng() % 50, uint32_t(next_id)};
          uint64_t bytes = 1 + rng() % (budget + budget / 4);
          bool ok = l.submit(next_id, o, bytes);
          CHECK(ok == (bytes <= budget));
          if (ok) waiting.emplace(o, next_id);
          ++next_id;
          break;
        }
        case 1: {  // grant: must be the model's head, exactly when it fits
          uint64_t sum = 0;
          for (auto& [id, b] : held) sum += b;
          auto g = l.grant_next();
          if (waiting.empty()) {
            CHECK_FALSE(g);
          } else if (g) {
            CHECK(g->id == waiting.begin()->second);
            held[g->id] = g->bytes;
            waiting.erase(waiting.begin());
          } else {
            CHECK(*l.head_bytes() > budget - sum);
          }
          break;
        }
        case 2:  // partial release
          if (!held.empty()) {
            auto it = std::next(held.begin(), rng() % held.size());
            uint64_t want = rng() % (it->second + 2);
            uint64_t got = l.release(it->first, want);
            CHECK(got == std::min(want, it->second));
            it->second -= got;
          }
          break;
        case 3:  // full release
          if (!held.empty()) {
            auto it = std::next(held.begin(), rng() % held.size());
            CHECK(l.release_all(it->first) == it->second);
            held.erase(it);
          }
          break;
      }
      uint64_t sum = 0;
      for (auto& [id, b] : held) sum += b;
      REQUIRE(l.reserved() == sum);
      REQUIRE(l.reserved() <= budget);
    }
  }
}
