// observe/observer: the busy tracker behind the live GPU busy figure, and the
// scheduler's queue statistics it samples.
#include "observe/observer.hpp"

#include <doctest/doctest.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/exit_reason.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include "actors/scheduler.hpp"

using proofline::observe::busy_tracker;

TEST_CASE("the busy tracker measures the union of spans however they arrive") {
  busy_tracker t;
  CHECK(t.empty());
  t.add(10, 20);
  t.add(0, 5);
  t.add(15, 30);  // overlaps the first
  t.flush();
  CHECK(t.busy_ms() == doctest::Approx(25));  // 0..5 + 10..30
  CHECK(t.window_ms() == doctest::Approx(30));
  t.add(4, 11);  // bridges the gap
  t.flush();
  CHECK(t.busy_ms() == doctest::Approx(30));
}

TEST_CASE("spans long past are settled into a total and still counted") {
  busy_tracker t;
  t.add(0, 1000);
  t.add(2000, 3000);
  t.flush();
  // A span two minutes later settles both earlier ones.
  t.add(busy_tracker::settle_ms + 5000, busy_tracker::settle_ms + 6000);
  t.flush();
  CHECK(t.busy_ms() == doctest::Approx(3000));
  // A late span overlapping the settled past counts only where it is newer
  // than everything settled (3000 ms on).
  t.add(2500, 4000);
  t.flush();
  CHECK(t.busy_ms() == doctest::Approx(4000));
  CHECK(t.window_ms() == doctest::Approx(busy_tracker::settle_ms + 6000));
}

TEST_CASE("the scheduler reports its ready partitions and parked pulls for the observer") {
  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", 1);
  cfg.set("logger.console-verbosity", caf::atom("quiet"));
  caf::actor_system sys{cfg};
  auto s = proofline::spawn_scheduler(sys, proofline::scheduler_config{});
  caf::scoped_actor self{sys};
  auto stats = [&] {
    proofline::scheduler_stats out{99, 99, 99};
    self->request(s, std::chrono::seconds(5), proofline::stats_atom::value)
        .receive([&](const proofline::scheduler_stats& x) { out = x; }, [](caf::error&) {});
    return out;
  };
  auto idle = stats();
  CHECK(idle.ready == 0);
  CHECK(idle.parked == 0);
  CHECK(idle.handed == 0);
  // Two GPU workers ask with nothing ready: both pulls wait.
  self->send(s, proofline::partition_pull_atom::value, int32_t{0});
  self->send(s, proofline::partition_pull_atom::value, int32_t{0});
  auto waiting = stats();
  CHECK(waiting.parked == 2);
  CHECK(waiting.ready == 0);
  caf::anon_send_exit(s, caf::exit_reason::user_shutdown);
}
