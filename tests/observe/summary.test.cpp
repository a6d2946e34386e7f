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

namespace {
/// A partition proved on GPU 0 over [start, start + 10] ms whose synthesis
/// ran for `synth` ms up to its prove and spent `witness` ms of them
/// generating the witness.
partition_report generated(uint32_t index, double start, double synth, double witness) {
  partition_report p;
  p.index = index;
  p.state = partition_state::done;
  p.spans.synthesize = {start - synth, start};
  p.spans.witness = {start - synth, start - synth + witness};
  p.spans.prove = {start, start + 10};
  p.spans.gpu = 0;
  return p;
}
}  // namespace

TEST_CASE("the synthesis line names witness generation when it starves the backends") {
  // Proves at 100, 200, 300 ms, each waiting ~90 ms for its synthesis, of
  // which the witness took 90%: the GPU waited 180 of 310 ms.
  job_report j = job_with("w", job_state::done, {});
  j.partitions = {generated(0, 100, 95, 85.5), generated(1, 200, 95, 85.5),
                  generated(2, 300, 95, 85.5)};
  std::ostringstream out;
  observe::print_synthesis_wait(out, {j}, 310);
  const std::string line = out.str();
  CHECK(line.find("witness generation: 3 witnesses") == 0);
  CHECK(line.find("the backends waited 0.180 s for synthesis (58.1% of their time)") !=
        std::string::npos);
  CHECK(line.find(": witness generation bounds throughput (90% of the synthesizers' time") !=
        std::string::npos);

  // The same waits where the witness is a tenth of synthesis: synthesis
  // bounds it, and the line says how little of it the witness was.
  for (auto& p : j.partitions) p.spans.witness.end = p.spans.witness.start + 9.5;
  std::ostringstream other;
  observe::print_synthesis_wait(other, {j}, 310);
  CHECK(other.str().find(": synthesis bounds throughput, witness generation 10% of it") !=
        std::string::npos);

  // Fed: the syntheses end before the backend is free.
  for (auto& p : j.partitions) p.spans.synthesize.end = p.spans.synthesize.start + 1;
  std::ostringstream fed;
  observe::print_synthesis_wait(fed, {j}, 310);
  CHECK(fed.str().find(": synthesis kept them fed") != std::string::npos);
}
