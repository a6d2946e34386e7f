// The memory manager actor on its own: pull-based grants, pacing, releases
// through reservation handles, refusals.
#include <doctest/doctest.h>

#include "actors/memory_manager.hpp"
#include "tests/support/memory_manager.hpp"

using namespace proofline;
using namespace proofline::test;

namespace {

/// Partitions of `bytes`, half of them released early (the bulk).
std::vector<work_order> orders(const job_ptr& j, uint64_t bytes) { return orders_of(j, bytes, bytes / 2); }

/// The manager with `budget` bytes and `pacing` granted partitions waiting
/// for a GPU worker, widening up to `max_pacing` (0: no widening).
memory_manager_config paced(uint64_t budget, uint32_t pacing, uint32_t max_pacing = 0) {
  return memory_manager_config{budget, pacing, max_pacing ? max_pacing : pacing, nullptr};
}

std::string name(const grant& g) { return g.part.witness(); }

}  // namespace

TEST_CASE("the memory manager answers idle synthesizers only when memory and pacing allow") {
  mm_world f(paced(1000, 2));
  auto a = queued_job(1, 4);
  for (int i = 0; i < 3; ++i) f.self->send(f.mm, grant_request_atom::value);  // three idle synthesizers
  f.sched.run();
  CHECK(f.grants().empty());  // nothing queued yet

  f.self->send(f.mm, reserve_atom::value, orders(a, 100));
  f.sched.run();
  CHECK(f.refusals().empty());
  auto g = f.grants();
  REQUIRE(g.size() == 2);  // pacing: two granted partitions may wait for a GPU worker
  CHECK(name(g[0]) == "j1_0");
  CHECK(name(g[1]) == "j1_1");
  CHECK(f.stats().untaken == 2);

  f.self->send(f.mm, taken_atom::value, g[0].reservation->id());
  f.sched.run();
  auto g2 = f.grants();
  REQUIRE(g2.size() == 1);  // the third synthesizer gets the next partition
  CHECK(name(g2[0]) == "j1_2");
  CHECK(f.stats().reserved == 300);

  // A reservation released in steps through its handle.
  CHECK(g[0].reservation->release(g[0].bulk) == 50);
  f.sched.run();
  CHECK(f.stats().reserved == 250);
  g[0].reservation.reset();  // last handle: the rest goes back
  f.sched.run();
  auto s = f.stats();
  CHECK(s.reserved == 200);
  CHECK(s.reservations == 2);
  CHECK(s.grants == 3);
}

TEST_CASE("the memory manager refuses a partition larger than the budget and queues the rest") {
  mm_world f(paced(1000, 3));
  auto j = queued_job(1, 1);
  auto k = queued_job(2, 1);
  auto all = orders(j, 5000);
  auto ok = orders(k, 10);
  all.insert(all.end(), ok.begin(), ok.end());
  f.self->send(f.mm, reserve_atom::value, all);
  f.sched.run();
  auto r = f.refusals();
  REQUIRE(r.size() == 1);
  CHECK(r[0].job_seq == 1);
  CHECK(r[0].error.file == "k.zkey");
  CHECK(r[0].error.message == "k.zkey: partition needs 4.9 KiB, the memory budget is 1000 B");
  CHECK(f.stats().queued == 1);
}

TEST_CASE("a granted partition that is dropped unused returns its memory and its pacing slot") {
  mm_world f(paced(100, 1));
  auto j = queued_job(1, 2);
  f.self->send(f.mm, reserve_atom::value, orders(j, 60));
  f.self->send(f.mm, grant_request_atom::value);
  f.self->send(f.mm, grant_request_atom::value);
  f.sched.run();
  f.refusals();
  auto g = f.grants();
  REQUIRE(g.size() == 1);
  g.clear();  // e.g. its synthesis failed: the handle drops
  f.sched.run();
  auto g2 = f.grants();
  REQUIRE(g2.size() == 1);
  CHECK(name(g2[0]) == "j1_1");
}

TEST_CASE("pacing widens only when a GPU worker runs dry while pacing held synthesis back") {
  mm_world f(paced(1000, 1, 3));
  auto j = queued_job(1, 5);
  for (int i = 0; i < 4; ++i) f.self->send(f.mm, grant_request_atom::value);  // four idle synthesizers
  f.self->send(f.mm, reserve_atom::value, orders(j, 100));
  f.sched.run();
  CHECK(f.refusals().empty());
  auto g0 = f.grants();  // held: dropping a grant would return its pacing slot
  CHECK(g0.size() == 1);  // just in time: one partition ahead
  CHECK(f.stats().pacing == 1);

  f.self->send(f.mm, starved_atom::value);  // the GPU waited for synthesis
  f.sched.run();
  auto g1 = f.grants();
  REQUIRE(g1.size() == 1);
  CHECK(name(g1[0]) == "j1_1");
  CHECK(f.stats().pacing == 2);

  f.self->send(f.mm, starved_atom::value);
  f.self->send(f.mm, starved_atom::value);  // the second reaches the ceiling
  f.sched.run();
  auto g2 = f.grants();
  CHECK(g2.size() == 1);
  CHECK(f.stats().pacing == 3);
  CHECK(f.stats().untaken == 3);
}

TEST_CASE("a GPU worker running dry does not widen pacing when memory is what holds synthesis back") {
  mm_world f(paced(250, 1, 4));
  auto j = queued_job(1, 4);
  for (int i = 0; i < 3; ++i) f.self->send(f.mm, grant_request_atom::value);
  f.self->send(f.mm, reserve_atom::value, orders(j, 100));
  f.sched.run();
  CHECK(f.refusals().empty());
  auto g0 = f.grants();
  REQUIRE(g0.size() == 1);
  f.self->send(f.mm, taken_atom::value, g0[0].reservation->id());
  f.sched.run();
  auto g1 = f.grants();
  REQUIRE(g1.size() == 1);  // 200 of 250 reserved: the third partition does not fit
  f.self->send(f.mm, starved_atom::value);
  f.sched.run();
  CHECK(f.grants().empty());
  CHECK(f.stats().pacing == 1);
}

TEST_CASE("synthesizers left idle by a round of grants lend their threads to it") {
  mm_world f(paced(1000, 8));
  for (int i = 0; i < 5; ++i) f.self->send(f.mm, grant_request_atom::value);  // five idle synthesizers
  f.sched.run();
  f.self->send(f.mm, reserve_atom::value, orders(queued_job(1, 2), 100));
  f.sched.run();
  CHECK(f.refusals().empty());
  auto g = f.grants();
  REQUIRE(g.size() == 2);
  CHECK(g[0].threads == 3);  // 1 + the three left idle, shared out: 2 and 1
  CHECK(g[1].threads == 2);
  // With more partitions than idle synthesizers every grant gets one thread.
  f.self->send(f.mm, reserve_atom::value, orders(queued_job(2, 5), 100));
  f.sched.run();
  CHECK(f.refusals().empty());
  auto g2 = f.grants();
  REQUIRE(g2.size() == 3);
  for (const auto& x : g2) CHECK(x.threads == 1);
}
