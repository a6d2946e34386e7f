// The end-of-run summary table and totals.
#include <doctest/doctest.h>

#include <sstream>

#include "observe/summary.hpp"

using namespace proofline;

TEST_CASE("the summary lists each job with partitions, time, output and error, then totals") {
  job_report a;
  a.id = "single";
  a.out = "out/single";
  a.state = job_state::done;
  a.partitions.resize(1);
  a.partitions[0].state = partition_state::done;
  a.total = {0.0, 1500.0};
  job_report b;
  b.id = "broken";
  b.out = "out/broken";
  b.state = job_state::failed;
  b.has_error = true;
  b.error = {"w.wtns", "w.wtns: 1520 witness values, c.zkey expects 1521"};
  b.partitions.resize(2);
  b.partitions[0].state = partition_state::done;
  b.partitions[1].state = partition_state::failed;
  b.total = {1.0, 251.0};

  std::ostringstream out;
  observe::print_summary(out, {a, b}, 2000.0);
  CHECK(
      out.str() ==
      "job     status  partitions  time     output      error\n"
      "single  done    1/1         1.500 s  out/single\n"
      "broken  failed  1/2         0.250 s  out/broken  w.wtns: 1520 witness values, c.zkey expects 1521\n"
      "\n"
      "2 jobs: 1 done, 1 failed; 2 proofs in 2.000 s wall time (1.00 proofs/s)\n");
}
