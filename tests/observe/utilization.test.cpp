// observe/utilization: the busy fraction and hand-off gaps every report uses.
// Expected values are worked out by hand from the spans in each case.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include "observe/utilization.hpp"

#include <doctest/doctest.h>

using proofline::observe::is_transfer;
using proofline::observe::partition_timeline;
using proofline::observe::percentile;
using proofline::observe::summarize;
using proofline::observe::timed_span;

namespace {

partition_timeline on(int device, std::vector<timed_span> spans) {
  return partition_timeline{device, std::move(spans)};
}

}  // namespace

TEST_CASE("copies between host and device are transfers and kernels are not") {
  CHECK(is_transfer("upload"));
  CHECK(is_transfer("upload_a"));
  CHECK(is_transfer("download"));
  CHECK(is_transfer("h2d_witness"));
  CHECK(is_transfer("d2h"));
  CHECK_FALSE(is_transfer("ntt_a"));
  CHECK_FALSE(is_transfer("msm_h"));
  CHECK_FALSE(is_transfer("reupload"));
  CHECK_FALSE(is_transfer(""));
}

TEST_CASE("an upload overlapping compute is counted once in busy time") {
  // Partition 1 computes 0..10; partition 2's upload runs 8..12 under it,
  // then its kernels 12..20. Union = 0..20 = 20 ms; summing would give 22.
  auto u = summarize({on(0, {{"upload", -2, 0}, {"ntt_a", 0, 4}, {"msm_h", 4, 10}}),
                      on(0, {{"upload", 8, 12}, {"ntt_a", 12, 15}, {"msm_h", 15, 20}})});
  REQUIRE(u.size() == 1);
  CHECK(u[0].partitions == 2);
  CHECK(u[0].first_ms == doctest::Approx(-2));
  CHECK(u[0].last_ms == doctest::Approx(20));
  CHECK(u[0].wall_ms == doctest::Approx(22));
  CHECK(u[0].busy_ms == doctest::Approx(22));
  CHECK(u[0].busy_fraction == doctest::Approx(1.0));
}

TEST_CASE("spans nested inside and overlapping each other are merged before measuring") {
  // 0..10 contains 2..5; 9..14 overlaps its end; 20..25 stands alone.
  // Union = 14 + 5 = 19 over a wall of 25.
  auto u =
      summarize({on(0, {{"msm_a", 0, 10}, {"msm_b", 2, 5}, {"msm_c", 9, 14}, {"msm_h", 20, 25}})});
  REQUIRE(u.size() == 1);
  CHECK(u[0].busy_ms == doctest::Approx(19));
  CHECK(u[0].wall_ms == doctest::Approx(25));
  CHECK(u[0].busy_fraction == doctest::Approx(19.0 / 25.0));
}

TEST_CASE("idle time between partitions lowers the busy fraction") {
  auto u = summarize({on(0, {{"ntt_a", 0, 10}}), on(0, {{"ntt_a", 30, 40}})});
  REQUIRE(u.size() == 1);
  CHECK(u[0].busy_ms == doctest::Approx(20));
  CHECK(u[0].busy_fraction == doctest::Approx(0.5));
}

TEST_CASE(
    "a hand-off gap runs from the last kernel of one partition to the first kernel of the next") {
  // Partition 2's upload (10..13) and partition 1's download (12..14) are
  // transfers: the gap is 15 (first kernel of 2) - 11 (last kernel of 1) = 4.
  auto u =
      summarize({on(0, {{"upload", 0, 1}, {"ntt_a", 1, 5}, {"msm_h", 5, 11}, {"download", 12, 14}}),
                 on(0, {{"upload", 10, 13}, {"ntt_a", 15, 20}, {"download", 20, 21}})});
  REQUIRE(u.size() == 1);
  REQUIRE(u[0].gaps_ms.size() == 1);
  CHECK(u[0].gaps_ms[0] == doctest::Approx(4));
  CHECK(u[0].gap_p50_ms == doctest::Approx(4));
  CHECK(u[0].gap_p99_ms == doctest::Approx(4));
  CHECK(u[0].gap_max_ms == doctest::Approx(4));
  // Union: 0..14 and 15..21 = 20 of 21 ms.
  CHECK(u[0].busy_ms == doctest::Approx(20));
}

TEST_CASE("partitions are paired by first kernel start, not by the order they are reported") {
  // Reported out of order: C (40..50), A (0..10), B (12..30).
  // Ordered A, B, C: gaps 12 - 10 = 2 and 40 - 30 = 10.
  auto u = summarize({on(0, {{"ntt_a", 40, 50}}), on(0, {{"ntt_a", 0, 10}}),
                      on(0, {{"upload", 5, 12}, {"ntt_a", 12, 20}, {"msm_h", 20, 30}})});
  REQUIRE(u.size() == 1);
  REQUIRE(u[0].gaps_ms.size() == 2);
  CHECK(u[0].gaps_ms[0] == doctest::Approx(2));
  CHECK(u[0].gaps_ms[1] == doctest::Approx(10));
  CHECK(u[0].gap_max_ms == doctest::Approx(10));
}

TEST_CASE("kernels of consecutive partitions that overlap make a zero gap, not a negative one") {
  auto u = summarize({on(0, {{"msm_h", 0, 10}}), on(0, {{"ntt_a", 8, 12}})});
  REQUIRE(u[0].gaps_ms.size() == 1);
  CHECK(u[0].gaps_ms[0] == 0.0);
  CHECK(u[0].busy_ms == doctest::Approx(12));
}

TEST_CASE("a partition with only transfers counts toward busy time but not toward gaps") {
  auto u = summarize(
      {on(0, {{"ntt_a", 0, 10}}), on(0, {{"upload", 10, 14}}), on(0, {{"ntt_a", 14, 20}})});
  REQUIRE(u.size() == 1);
  CHECK(u[0].partitions == 3);
  REQUIRE(u[0].gaps_ms.size() == 1);
  CHECK(u[0].gaps_ms[0] == doctest::Approx(4));
  CHECK(u[0].busy_fraction == doctest::Approx(1.0));
}

TEST_CASE("each device is summarized on its own, in ascending device order") {
  auto u = summarize({on(1, {{"ntt_a", 100, 110}}), on(0, {{"ntt_a", 0, 10}}),
                      on(1, {{"ntt_a", 120, 130}}), on(0, {{"ntt_a", 11, 21}})});
  REQUIRE(u.size() == 2);
  CHECK(u[0].device == 0);
  CHECK(u[0].partitions == 2);
  CHECK(u[0].wall_ms == doctest::Approx(21));
  CHECK(u[0].busy_ms == doctest::Approx(20));
  REQUIRE(u[0].gaps_ms.size() == 1);
  CHECK(u[0].gaps_ms[0] == doctest::Approx(1));
  CHECK(u[1].device == 1);
  CHECK(u[1].partitions == 2);
  CHECK(u[1].first_ms == doctest::Approx(100));
  CHECK(u[1].wall_ms == doctest::Approx(30));
  CHECK(u[1].busy_fraction == doctest::Approx(20.0 / 30.0));
  REQUIRE(u[1].gaps_ms.size() == 1);
  CHECK(u[1].gaps_ms[0] == doctest::Approx(10));
}

TEST_CASE("gap percentiles are nearest-rank over the gaps of one device") {
  // Eleven partitions of 1 ms each, gaps 1, 2, ..., 10 ms.
  std::vector<partition_timeline> parts;
  double t = 0;
  for (int k = 0; k < 11; ++k) {
    parts.push_back(on(0, {{"msm_h", t, t + 1}}));
    t += 1 + (k + 1);
  }
  auto u = summarize(parts);
  REQUIRE(u[0].gaps_ms.size() == 10);
  CHECK(u[0].gap_p50_ms == doctest::Approx(5));
  CHECK(u[0].gap_p99_ms == doctest::Approx(10));
  CHECK(u[0].gap_max_ms == doctest::Approx(10));
  CHECK(u[0].busy_ms == doctest::Approx(11));
}

TEST_CASE("nearest-rank percentiles pick a member of the values") {
  CHECK(percentile({}, 50) == 0.0);
  CHECK(percentile({7}, 0) == 7.0);
  CHECK(percentile({7}, 100) == 7.0);
  CHECK(percentile({3, 1, 2}, 50) == 2.0);
  CHECK(percentile({3, 1, 2}, 0) == 1.0);
  CHECK(percentile({3, 1, 2}, 100) == 3.0);
  CHECK(percentile({4, 3, 2, 1}, 50) == 2.0);  // rank ceil(2) = 2
  CHECK(percentile({4, 3, 2, 1}, 51) == 3.0);  // rank ceil(2.04) = 3
  std::vector<double> hundred;
  for (int i = 100; i >= 1; --i) hundred.push_back(i);
  CHECK(percentile(hundred, 99) == 99.0);  // not 100: rank is exactly 99
  CHECK(percentile(hundred, 99.5) == 100.0);
  CHECK(percentile(hundred, 1) == 1.0);
  CHECK(percentile(hundred, 150) == 100.0);  // clamped
  CHECK(percentile(hundred, -5) == 1.0);     // clamped
}

TEST_CASE("no timelines, or timelines without spans, give zeros and no division by zero") {
  CHECK(summarize({}).empty());
  auto u = summarize({on(2, {}), on(2, {})});
  REQUIRE(u.size() == 1);
  CHECK(u[0].device == 2);
  CHECK(u[0].partitions == 2);
  CHECK(u[0].wall_ms == 0.0);
  CHECK(u[0].busy_ms == 0.0);
  CHECK(u[0].busy_fraction == 0.0);
  CHECK(u[0].gaps_ms.empty());
  CHECK(u[0].gap_p99_ms == 0.0);
  auto point = summarize({on(0, {{"ntt_a", 5, 5}})});
  CHECK(point[0].wall_ms == 0.0);
  CHECK(point[0].busy_fraction == 0.0);
}
