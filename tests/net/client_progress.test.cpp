// The progress line of submit and await (net/client_progress.hpp): its ETA
// from the rate of finished partitions, and its format.
#include <doctest/doctest.h>

#include "net/client_progress.hpp"

using proofline::net::client_progress_line;
using proofline::net::finish_rate;
using proofline::net::format_duration;
using proofline::net::job_count;

TEST_CASE("no ETA before two finishes a partition apart") {
  finish_rate r;
  CHECK_FALSE(r.eta_ms(0, 10));
  r.observe(500, 0);  // nothing finished yet: no start of the rate
  CHECK_FALSE(r.eta_ms(600, 10));
  r.observe(8000, 1);
  CHECK_FALSE(r.eta_ms(8000, 10));
  r.observe(9000, 1);  // the same count again: still one observation
  CHECK_FALSE(r.eta_ms(9000, 10));
}

TEST_CASE("the ETA ignores the time before the first finish") {
  // 10 s of key loading and queueing, then one partition a second: after
  // the third finish at 12 s, 7 are left, so 7 s. The rate since the start
  // (3 in 12 s) would say 28 s.
  finish_rate r;
  r.observe(10000, 1);
  r.observe(11000, 2);
  r.observe(12000, 3);
  auto eta = r.eta_ms(12000, 10);
  REQUIRE(eta);
  CHECK(*eta == doctest::Approx(7000));
}

TEST_CASE("the ETA counts down between finishes and never goes below 0") {
  finish_rate r;
  r.observe(0, 2);  // a client attaching to a job half done starts from its count
  r.observe(2000, 4);  // two finishes in 2 s: 1 s each, 6 left
  CHECK(*r.eta_ms(2000, 10) == doctest::Approx(6000));
  CHECK(*r.eta_ms(3500, 10) == doctest::Approx(4500));
  CHECK(*r.eta_ms(60000, 10) == doctest::Approx(0));
  r.observe(3000, 9);  // a burst: seven in 3 s, 1 left
  CHECK(*r.eta_ms(3000, 10) == doctest::Approx(3000.0 / 7));
  r.observe(3100, 10);
  CHECK(*r.eta_ms(3100, 10) == 0);
}

TEST_CASE("durations") {
  CHECK(format_duration(850) == "850 ms");
  CHECK(format_duration(3240) == "3.2 s");
  CHECK(format_duration(245000) == "4 min 05 s");
  CHECK(format_duration(7380000) == "2 h 03 min");
}

TEST_CASE("the line: counts and ETA first, unfinished jobs after, cut to the width") {
  std::vector<job_count> jobs{{"batch", 2, 4, false}, {"single", 1, 1, true}, {"x\ny", 0, 3, false}};
  CHECK(client_progress_line(jobs, std::nullopt) == "[3/8 proofs, ETA -] batch 2/4 x\\x0ay 0/3");
  CHECK(client_progress_line(jobs, 4100.0) == "[3/8 proofs, ETA 4.1 s] batch 2/4 x\\x0ay 0/3");
  const auto cut = client_progress_line(jobs, 4100.0, 30);
  CHECK(cut.size() == 30);
  CHECK(cut == "[3/8 proofs, ETA 4.1 s] bat...");
}
