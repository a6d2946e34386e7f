// `proofline run`: reads the job file, picks the backend and memory budget,
// starts the actor pipeline (observed for the progress line, metrics and
// reports: observe/observer.hpp), submits every job, waits for all of them,
// writes the reports asked for (--report, --trace, --html), prints the
// summary (or --json, the run report) and returns the exit code.
#pragma once

#include <iosfwd>

#include "app/cli.hpp"

namespace proofline::app {

/// Sets up the log on stderr from the options (--log-level, --quiet).
void setup_logging(const run_options& opts);

/// Runs the command; returns exit_ok, exit_failed or exit_usage. Usage
/// errors are printed on `err`, the summary on `out`.
int run_command(const run_options& opts, std::ostream& out, std::ostream& err);

}  // namespace proofline::app
