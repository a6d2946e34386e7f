// Budget charges outside the queue: the pinned pool and fixed backend buffers
// (permanent: they lower the largest request), proving keys (taken even over
// the budget, then nothing is granted until the sum is back under), the
// last-resort grant over the budget, and the partition estimate's pool and
// backend figures.
#include <doctest/doctest.h>

#include "gpu/footprint.hpp"
#include "memory/estimate.hpp"
#include "memory/ledger.hpp"

using namespace proofline::memory;

TEST_CASE("permanent charges lower the largest request the ledger accepts") {
  ledger l(1000);
  l.charge(100, 300, true);  // a pool of 300
  CHECK(l.reserved() == 300);
  CHECK(l.permanent() == 300);
  CHECK(l.request_limit() == 700);
  CHECK_FALSE(l.submit(1, {1, 1, 0}, 701));  // could never fit beside the pool
  CHECK(l.submit(2, {1, 1, 1}, 700));
  auto g = l.grant_next();
  REQUIRE(g);
  CHECK(g->id == 2);
  CHECK(l.reserved() == 1000);
  l.release_all(100);  // the pool goes away: its bytes and its permanence
  CHECK(l.permanent() == 0);
  CHECK(l.reserved() == 700);
  CHECK(l.request_limit() == 1000);
}

TEST_CASE("a key charged over the budget holds back grants until it is released") {
  ledger l(1000);
  REQUIRE(l.submit(1, {1, 1, 0}, 600));
  REQUIRE(l.grant_next());
  l.charge(50, 700);  // a key loaded while 600 are reserved
  CHECK(l.reserved() == 1300);
  CHECK(l.available() == 0);
  CHECK(l.peak_reserved() == 1300);
  REQUIRE(l.submit(2, {1, 1, 1}, 100));
  CHECK_FALSE(l.head_fits());
  CHECK_FALSE(l.grant_next());
  l.release_all(1);  // the partition finishes: 700 reserved, 100 fits again
  CHECK(l.head_fits());
  auto g = l.grant_next();
  REQUIRE(g);
  CHECK(g->id == 2);
  CHECK(l.reserved() == 800);
}

TEST_CASE("the head can be granted over the budget only when the caller insists") {
  ledger l(1000);
  l.charge(50, 950);
  REQUIRE(l.submit(1, {1, 1, 0}, 200));
  auto h = l.head();
  REQUIRE(h);
  CHECK(h->id == 1);
  CHECK(h->bytes == 200);
  CHECK_FALSE(l.grant_next());
  auto g = l.grant_next(true);
  REQUIRE(g);
  CHECK(g->id == 1);
  CHECK(l.reserved() == 1150);
  CHECK_FALSE(l.head());
}

TEST_CASE("a partition's pool block holds its witness and a, b, c, each page-rounded") {
  // BN254: 1000 variables (32000 bytes -> 8 pages), 1024 domain (32 KiB each).
  auto e = estimate_partition(1000, 1024, 32, proofline::gpu::cpu_backend_footprint);
  CHECK(e.pinnable == 8 * 4096 + 3 * 32768);
  CHECK(e.pinnable >= e.witness + e.inputs);
  auto c = estimate_partition(1000, 1024, 32, proofline::gpu::cuda_backend_footprint);
  CHECK(c.working == 0);  // the CUDA backend keeps partitions on the device
  CHECK(c.total() == e.witness + e.inputs);
  CHECK(proofline::gpu::cuda_backend_footprint.fixed_bytes == 2 * ((64u << 20) + (1u << 20)));
}

TEST_CASE("the default pool is a quarter of the budget, in whole MiB, and none for tiny budgets") {
  CHECK(default_pool_bytes(uint64_t(8) << 30) == uint64_t(2) << 30);
  CHECK(default_pool_bytes((uint64_t(1) << 30) + 12345) == uint64_t(256) << 20);
  CHECK(default_pool_bytes(uint64_t(63) << 20) == 0);
}
