// `proofline bench <what>`: the subcommand that runs the benchmarks of
// bench/ (bench/registry.hpp lists them). Exit codes as for run: 0 done, 1 a
// measurement failed, 2 usage error.
#pragma once

#include "app/cli.hpp"

namespace proofline::app {

/// Registers `proofline bench` and every benchmark under it.
void add_bench_command(cli& c);

}  // namespace proofline::app
