// base::finish_rate: the ETA of the progress lines (run's, submit's) from
// the rate partitions finish at since the first finish seen.
#include <doctest/doctest.h>

#include "base/finish_rate.hpp"

using proofline::base::finish_rate;

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

TEST_CASE("the ETA counts down between finishes; a late finish leaves the others' share") {
  finish_rate r;
  r.observe(0, 2);  // a client attaching to a job half done starts from its count
  r.observe(2000, 4);  // two finishes in 2 s: 1 s each, 6 left
  CHECK(*r.eta_ms(2000, 10) == doctest::Approx(6000));
  CHECK(*r.eta_ms(2500, 10) == doctest::Approx(5500));
  // The next was due at 3 s: late, the 5 after it still take 1 s each.
  CHECK(*r.eta_ms(3500, 10) == doctest::Approx(5000));
  CHECK(*r.eta_ms(60000, 10) == doctest::Approx(5000));
  r.observe(3000, 9);  // a burst: seven in 3 s, 1 left
  CHECK(*r.eta_ms(3000, 10) == doctest::Approx(3000.0 / 7));
  r.observe(3100, 10);
  CHECK(*r.eta_ms(3100, 10) == 0);
}

TEST_CASE("a last count of 1 left counts down to 0") {
  finish_rate r;
  r.observe(0, 1);
  r.observe(1000, 2);
  CHECK(*r.eta_ms(1000, 3) == doctest::Approx(1000));
  CHECK(*r.eta_ms(5000, 3) == doctest::Approx(0));
}
