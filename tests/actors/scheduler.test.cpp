// The scheduler on its own: partitions go to GPU workers' look-ahead in grant
// order (tickets), to an idle worker as soon as they are ready, and, among
// those free to go, in the global order; parked pulls are answered as soon as
// a partition may go.
#include <doctest/doctest.h>

#include "actors/scheduler.hpp"
#include "tests/actors/fixture.hpp"
#include "tests/support/partitions.hpp"

using namespace proofline;
using namespace proofline::test;

namespace {

struct sched_fixture {
  caf::actor_system_config cfg;
  caf::actor_system sys;
  caf::scoped_actor self;  // plays the GPU worker
  caf::scheduler::test_coordinator& sched;
  scheduler_actor s;

  sched_fixture()
      : sys(deterministic(cfg)),
        self(sys, true),
        sched(dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler())) {
    s = proofline::spawn_scheduler(sys, proofline::scheduler_config{});
    sched.run();
  }
  ~sched_fixture() {
    self->send_exit(s, caf::exit_reason::user_shutdown);
    sched.run();
  }
  std::vector<std::string> handed() {
    std::vector<std::string> out;
    bool more = true;
    while (more)
      self->receive([&](synthesized_partition& p) { out.push_back(p.part.witness()); },
                    caf::after(std::chrono::seconds(0)) >> [&] { more = false; });
    return out;
  }
};

using strings = std::vector<std::string>;

}  // namespace

TEST_CASE_FIXTURE(sched_fixture, "a busy worker's look-ahead waits for every partition granted before it") {
  self->send(s, ready_atom::value, ready_partition(nullptr, 3, 0, 1, priority::high));
  self->send(s, partition_pull_atom::value, int32_t{0});
  sched.run();
  CHECK(handed() == strings{"w3_0"});  // the worker now proves ticket 1
  self->send(s, partition_pull_atom::value, int32_t{0});  // its look-ahead
  // Granted as tickets 1..4; synthesis finishes in the order 1, 4, 3, 2.
  self->send(s, ready_atom::value, ready_partition(nullptr, 2, 0, 4));
  self->send(s, ready_atom::value, ready_partition(nullptr, 1, 1, 3));
  sched.run();
  CHECK(handed().empty());  // ticket 2 is still being synthesized
  self->send(s, ready_atom::value, ready_partition(nullptr, 1, 0, 2));
  for (int i = 0; i < 2; ++i) self->send(s, partition_pull_atom::value, int32_t{0});
  sched.run();
  CHECK(handed() == strings{"w1_0", "w1_1", "w2_0"});
}

TEST_CASE_FIXTURE(sched_fixture,
                  "an idle worker takes a partition ahead of its own job's syntheses, not another job's") {
  self->send(s, granted_atom::value, uint64_t{1}, uint64_t{1});  // job 1, partition 0: in synthesis
  self->send(s, ready_atom::value, ready_partition(nullptr, 2, 0, 3));
  self->send(s, ready_atom::value, ready_partition(nullptr, 1, 1, 2));
  self->send(s, partition_pull_atom::value, int32_t{0});  // the worker holds nothing
  sched.run();
  CHECK(handed() == strings{"w1_1"});  // only job 1's own ticket 1 is still in synthesis
  self->send(s, partition_pull_atom::value, int32_t{0});  // a look-ahead: it keeps grant order
  sched.run();
  CHECK(handed().empty());
  self->send(s, worker_done_atom::value, uint64_t{1}, uint32_t{1});  // idle again
  self->send(s, partition_pull_atom::value, int32_t{0});
  sched.run();
  CHECK(handed().empty());  // job 2 may not pass job 1's ticket 1
  self->send(s, ready_atom::value, ready_partition(nullptr, 1, 0, 1));
  self->send(s, partition_pull_atom::value, int32_t{0});
  sched.run();
  CHECK(handed() == strings{"w1_0", "w2_0"});
}

TEST_CASE_FIXTURE(sched_fixture,
                  "among partitions free to go the best by priority, job and index goes first") {
  self->send(s, ready_atom::value, ready_partition(nullptr, 2, 0, 1));
  self->send(s, ready_atom::value, ready_partition(nullptr, 1, 1, 2));
  self->send(s, ready_atom::value, ready_partition(nullptr, 4, 0, 3, priority::low));
  self->send(s, ready_atom::value, ready_partition(nullptr, 3, 0, 4, priority::critical));
  self->send(s, ready_atom::value, ready_partition(nullptr, 1, 0, 5));
  sched.run();
  for (int i = 0; i < 5; ++i) self->send(s, partition_pull_atom::value, int32_t{0});
  sched.run();
  CHECK(handed() == strings{"w3_0", "w1_0", "w1_1", "w2_0", "w4_0"});
}

TEST_CASE_FIXTURE(sched_fixture, "a skipped ticket releases the partitions behind it") {
  self->send(s, ready_atom::value, ready_partition(nullptr, 5, 0, 1));
  self->send(s, partition_pull_atom::value, int32_t{0});
  sched.run();
  CHECK(handed() == strings{"w5_0"});  // busy from now on
  self->send(s, partition_pull_atom::value, int32_t{0});
  self->send(s, ready_atom::value, ready_partition(nullptr, 1, 1, 3));
  sched.run();
  CHECK(handed().empty());
  self->send(s, skip_atom::value, uint64_t{2});  // ticket 2's synthesis failed
  sched.run();
  CHECK(handed() == strings{"w1_1"});
}

TEST_CASE("placed partitions go only to the backends they admit; a lost one's go elsewhere") {
  caf::actor_system_config cfg;
  caf::actor_system sys{deterministic(cfg)};
  auto& sched = dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler());
  caf::scoped_actor gpu0{sys, true}, gpu1{sys, true}, cpu{sys, true};
  // Two GPUs (0, 1) and the fallback (2).
  auto s = spawn_scheduler(sys, scheduler_config{2, true});
  auto take = [&](caf::scoped_actor& worker) {
    std::string got;
    worker->receive([&](synthesized_partition& p) { got = p.part.witness(); },
                    caf::after(std::chrono::seconds(0)) >> [] {});
    return got;
  };
  auto placed = [](synthesized_partition p, placement where) {
    p.part.where = where;
    return p;
  };
  gpu0->send(s, partition_pull_atom::value, int32_t{0});
  gpu1->send(s, partition_pull_atom::value, int32_t{1});
  cpu->send(s, partition_pull_atom::value, int32_t{2});
  sched.run();
  // Ticket 1 may only go to GPU 1, ticket 2 anywhere but GPU 1, ticket 3 to the fallback.
  gpu0->send(s, ready_atom::value, placed(ready_partition(nullptr, 1, 0, 1), {1, false}));
  gpu0->send(s, ready_atom::value, placed(ready_partition(nullptr, 1, 1, 2), {1, true}));
  gpu0->send(s, ready_atom::value, placed(ready_partition(nullptr, 1, 2, 3), {2, false}));
  sched.run();
  CHECK(take(gpu1) == "w1_0");
  CHECK(take(gpu0) == "w1_1");
  CHECK(take(cpu) == "w1_2");

  // GPU 1 is lost: a partition placed on it goes to GPU 0; once both are
  // lost, even an unplaced one goes to the fallback.
  gpu1->send(s, lost_atom::value, int32_t{1});
  gpu1->send(s, partition_pull_atom::value, int32_t{1});
  gpu0->send(s, partition_pull_atom::value, int32_t{0});
  gpu0->send(s, ready_atom::value, placed(ready_partition(nullptr, 2, 0, 4), {1, false}));
  sched.run();
  CHECK(take(gpu1).empty());
  CHECK(take(gpu0) == "w2_0");
  gpu0->send(s, lost_atom::value, int32_t{0});
  cpu->send(s, partition_pull_atom::value, int32_t{2});
  gpu0->send(s, ready_atom::value, ready_partition(nullptr, 3, 0, 5));
  sched.run();
  CHECK(take(cpu) == "w3_0");
  CHECK(take(gpu1).empty());
  gpu0->send_exit(s, caf::exit_reason::user_shutdown);
  sched.run();
}
