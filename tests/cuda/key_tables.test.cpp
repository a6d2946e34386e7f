// The CUDA backend's choice of building a key's window tables
// (gpu/cuda/key_tables.hpp): a pure function, tested without a GPU.
#include <doctest/doctest.h>

#include <cstddef>
#include <string>

#include "gpu/cuda/key_tables.hpp"

using namespace proofline::gpu::cuda;

namespace {

tables::key_sizes sizes(unsigned log_n) {
  tables::key_sizes k;
  k.n_w = std::size_t(1) << log_n;
  k.n_c = k.n_w - 2;
  k.n_h = k.n_w;
  return k;
}

tables::inputs with(unsigned log_n, std::size_t partitions, std::size_t free_bytes) {
  tables::inputs in;
  in.costs = tables::estimate(sizes(log_n));
  in.partitions_to_come = partitions;
  in.device_free = free_bytes;
  return in;
}

constexpr std::size_t plenty = std::size_t(1) << 50;

}  // namespace

TEST_CASE("the cost model: tables save work per partition, cost more to build than one partition, take W times the points") {
  for (unsigned log_n : {10u, 16u, 20u, 24u}) {
    CAPTURE(log_n);
    const auto c = tables::estimate(sizes(log_n));
    CHECK(c.fixed < c.plain);
    CHECK(c.build > c.plain - c.fixed);
    CHECK(c.table_bytes > 4 * c.plain_bytes);
    const std::size_t n = std::size_t(1) << log_n;
    CHECK(c.plain_bytes == (3 * n + n - 2) * 64 + n * 128);
  }
}

TEST_CASE("tables are built when the partitions to come pay for them and they fit") {
  const auto c = tables::estimate(sizes(20));
  const double saved = c.plain - c.fixed;
  const auto pays = std::size_t(c.build / saved) + 1;  // the fewest partitions that pay
  CHECK(tables::decide(with(20, pays, plenty)) == tables::verdict::build);
  CHECK(tables::decide(with(20, 100000, c.table_bytes)) == tables::verdict::build);
}

TEST_CASE("tables are skipped when they do not pay") {
  const auto c = tables::estimate(sizes(20));
  const auto pays = std::size_t(c.build / (c.plain - c.fixed)) + 1;
  CHECK(tables::decide(with(20, pays - 1, plenty)) == tables::verdict::not_paid);
  CHECK(tables::decide(with(20, 0, plenty)) == tables::verdict::not_paid);
  // a 2^24 job of two partitions never pays for its tables
  CHECK(tables::decide(with(24, 2, plenty)) == tables::verdict::not_paid);
  // no gain at all: nothing to pay back
  tables::inputs none = with(20, 100000, plenty);
  none.costs.fixed = none.costs.plain;
  CHECK(tables::decide(none) == tables::verdict::no_gain);
}

TEST_CASE("tables are skipped when they do not fit beside the plain points and the lanes' scratch") {
  const auto c = tables::estimate(sizes(20));
  CHECK(tables::decide(with(20, 100000, c.table_bytes - 1)) == tables::verdict::no_room);
  auto in = with(20, 100000, c.table_bytes);
  in.scratch_growth = 1;
  CHECK(tables::decide(in) == tables::verdict::no_room);
  CHECK(tables::decide(with(20, 100000, 0)) == tables::verdict::no_room);
  CHECK(std::string(tables::to_string(tables::verdict::no_room)).find("device-memory") != std::string::npos);
}

TEST_CASE("partitions still to come: the announcement less those proved since, else as many as proved (ski rental)") {
  CHECK(tables::to_come(true, 32, 0, 0) == 32);
  CHECK(tables::to_come(true, 32, 5, 9) == 27);
  CHECK(tables::to_come(true, 3, 5, 5) == 0);
  CHECK(tables::to_come(false, 0, 0, 0) == 0);
  CHECK(tables::to_come(false, 0, 7, 7) == 7);
}
