// app/progress: the live line's text and its time estimate.
#include "observe/progress.hpp"
#include "base/finish_rate.hpp"

#include <doctest/doctest.h>

#include <cstdio>

using namespace proofline;
using namespace proofline::observe;

TEST_CASE("the progress line shows partitions, GPU busy, queues and the ETA") {
  progress_state s;
  s.done = 8;
  s.total = 32;
  s.elapsed_ms = 2000;
  s.busy_fraction = 0.973;
  s.ready = 2;
  s.waiting_memory = 1;
  // 8 partitions in 2 s: 24 more take 6 s.
  CHECK(progress_line(s) ==
        "8/32 partitions  GPU busy 97.3%  queue: 2 ready, 1 waiting to start  ETA 6.0 s");
}

TEST_CASE("before anything finishes the line has no busy figure and no ETA") {
  progress_state s;
  s.total = 4;
  s.elapsed_ms = 300;
  CHECK(progress_line(s) ==
        "0/4 partitions  GPU busy -  queue: 0 ready, 0 waiting to start  ETA -");
  CHECK_FALSE(eta_ms(s).has_value());
}

TEST_CASE("failed partitions count as finished for the ETA and show in the line") {
  progress_state s;
  s.done = 3;
  s.failed = 1;
  s.total = 8;
  s.elapsed_ms = 400;
  CHECK(eta_ms(s).value() == doctest::Approx(400.0));
  CHECK(progress_line(s).rfind("3/8 partitions (1 failed)", 0) == 0);
  s.elapsed_ms = 4.0 * 60'000;  // 4 minutes for 4: 4 more minutes
  CHECK(progress_line(s).find("ETA 4 min 00 s") != std::string::npos);
  s.done = 7;
  CHECK(eta_ms(s).value() == 0.0);
}

TEST_CASE("the ETA is the rate of finishes once there is one, not the time since the start") {
  // A backlog whose first proof came after 5 s of start (the key's load,
  // the first synthesis), then one every 100 ms: 10 of 100 done at 5.9 s.
  progress_state s;
  s.done = 10;
  s.total = 100;
  s.elapsed_ms = 5900;
  CHECK(eta_ms(s).value() == doctest::Approx(53100.0));  // no rate yet: 5.9 s / 10 x 90
  base::finish_rate rate;
  for (int i = 1; i <= 10; ++i) rate.observe(5000 + 100 * (i - 1), i);
  s.eta_at_rate_ms = rate.eta_ms(s.elapsed_ms, s.total);
  CHECK(eta_ms(s).value() == doctest::Approx(9000.0));  // 90 left at 100 ms each
  CHECK(progress_line(s).find("ETA 9.0 s") != std::string::npos);
  s.done = 100;
  CHECK(eta_ms(s).value() == 0.0);
}

TEST_CASE("the display draws nothing when its stream is not a terminal") {
  std::FILE* f = std::tmpfile();
  REQUIRE(f);
  {
    progress_display d(f, true);
    CHECK_FALSE(d.active());
    progress_state s;
    s.total = 1;
    d.update(s);
    d.clear();
  }
  CHECK(std::ftell(f) == 0);
  std::fclose(f);
}

TEST_CASE("with the CPU backend the line says CPU busy and never GPU") {
  progress_state s;
  s.done = 1;
  s.total = 2;
  s.elapsed_ms = 1000;
  s.busy_fraction = 0.5;
  s.gpu = false;
  CHECK(progress_line(s) ==
        "1/2 partitions  CPU busy 50.0%  queue: 0 ready, 0 waiting to start  ETA 1.0 s");
}
