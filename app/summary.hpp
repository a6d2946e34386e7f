// The end-of-run summary `proofline run` prints on stdout: one row per job
// (job, status, partitions done/total, time, output directory, error) and the
// totals (proofs, wall time, proofs/s).
#pragma once

#include <iosfwd>
#include <vector>

#include "messages/catalogue.hpp"

namespace proofline::app {

/// Writes the table and totals; `wall_ms` is the run's wall time.
void print_summary(std::ostream& out, const std::vector<job_report>& reports, double wall_ms);

}  // namespace proofline::app
