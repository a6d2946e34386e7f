// The end-of-run summary table and totals.
#include <doctest/doctest.h>

#include <csignal>
#include <sstream>

#include "observe/summary.hpp"
#include "tests/support/job_reports.hpp"

using namespace proofline;
using namespace proofline::test;

namespace {
constexpr auto done = partition_state::done;
constexpr auto failed = partition_state::failed;
constexpr auto cancelled = partition_state::cancelled;
}  // namespace

TEST_CASE("the summary lists each job with partitions, time, output and error, then totals") {
  job_report a = job_with("single", job_state::done, {done}, {0.0, 1500.0});
  job_report b = failed_job("broken", {done, failed}, "w.wtns",
                            "w.wtns: 1520 witness values, c.zkey expects 1521", {1.0, 251.0});

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

TEST_CASE("a cancelled job counts as cancelled, not failed, and the interrupted line names it") {
  job_report a = job_with("whole", job_state::done, {done}, {0.0, 1000.0});
  job_report c = job_with("big", job_state::cancelled, {done, cancelled, cancelled}, {0.0, 500.0});

  std::ostringstream out;
  observe::print_summary(out, {a, c}, 1000.0);
  CHECK(out.str().find("2 jobs: 1 done, 0 failed, 1 cancelled; 2 proofs") != std::string::npos);

  std::ostringstream line;
  observe::print_interrupted(line, {a, c}, SIGINT);
  CHECK(line.str() ==
        "interrupted (SIGINT): cancelled 1 job (big); 2 partitions not proved, 1 finished "
        "proof kept; each result.json lists which\n");
  std::ostringstream none;
  observe::print_interrupted(none, {a}, SIGTERM);
  CHECK(none.str() == "terminated (SIGTERM): no job was left to cancel\n");
}

TEST_CASE("the memory summary line names the budget, the peaks, what is held and where purges ran") {
  constexpr uint64_t mib = uint64_t(1) << 20;
  memory_stats s;
  s.budget = 8 * mib;
  s.peak_reserved = 6 * mib;
  s.peak_rss = 7 * mib;
  s.pool = 2 * mib;
  s.pool_pinned = true;
  s.fixed = 1 * mib;
  s.purges = 10;
  s.purges_run = 4;
  s.purge_ms_total = 12.25;
  s.purge_ms_max = 5.5;
  s.purged_bytes = 3 * mib;
  s.purge_threads = {"pl.memory"};
  CHECK(observe::memory_summary_line(s) ==
        "memory: budget 8 MiB, peak reserved 6 MiB, peak RSS 7 MiB (held: pool 2 MiB pinned, "
        "backend buffers 1 MiB); 4 purge(s) for 10 request(s), 12.2 ms (max 5.5 ms), 3 MiB "
        "returned, on thread pl.memory");
}

TEST_CASE("the memory summary line leaves out what is not held and purges that never ran") {
  memory_stats s;
  s.budget = 1024;
  s.peak_reserved = 512;
  s.peak_rss = 2048;
  s.purges = 3;
  CHECK(observe::memory_summary_line(s) ==
        "memory: budget 1 KiB, peak reserved 512 B, peak RSS 2 KiB; 0 purge(s) for 3 request(s)");
}
