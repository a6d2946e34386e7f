// The end-of-run summary `proofline run` prints on stdout: one row per job
// (job, status, partitions done/total, time, output directory, error), the
// totals (proofs, wall time, proofs/s) and each GPU's busy fraction and
// hand-off gaps; then one line on the memory system and one on jemalloc's
// arenas.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "observe/report.hpp"
#include "messages/values.hpp"

namespace proofline::observe {

/// Writes the table and totals; `wall_ms` is the run's wall time.
void print_summary(std::ostream& out, const std::vector<job_report>& reports, double wall_ms);

/// For runs with jobs that compute their witnesses (a witness generator),
/// one line: how many witnesses, their time, and how long the backends sat
/// idle between proofs waiting for a synthesis to end, and whether
/// synthesis bounds throughput (above 5% of their time). Nothing otherwise.
/// print_summary ends with it.
void print_synthesis_wait(std::ostream& out, const std::vector<job_report>& reports,
                          double wall_ms);

/// One line after the summary of a run ended early by signal `signo`
/// (SIGINT, SIGTERM): the jobs it cancelled, their partitions not proved and
/// the proofs they kept.
void print_interrupted(std::ostream& out, const std::vector<job_report>& reports, int signo);

/// One line per GPU (or the CPU backend, whose spans stand for it): busy
/// fraction over its span window, NVML's figure beside it when sampled, and
/// the hand-off gaps p50/p99/max; then why NVML has no samples on a CUDA run,
/// and the process's CPU time over the proving window (run_report::cpu).
void print_gpu_figures(std::ostream& out, const run_report& r);

/// One line: first GPU work (first proving work when `gpu` is false: the CPU
/// backend), first proof, each key's read and preparation, the pinned pool's
/// pinning.
void print_startup(std::ostream& out, const startup_report& s, bool gpu = true);

/// One line for the end of a run: budget, peak reservation, what is held
/// (keys, pool, fixed buffers), peak RSS, and the purges (how many, where,
/// how long, how much). Reused by run reports.
std::string memory_summary_line(const memory_stats& s);

/// One line on every jemalloc arena at the run's end (pactive, pdirty,
/// pmuzzy, retained summed over arenas 0 .. automatic + `created`): what the
/// purges left behind. Empty without jemalloc.
std::string jemalloc_line(unsigned created);

}  // namespace proofline::observe
