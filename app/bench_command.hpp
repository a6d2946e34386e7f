// `proofline bench <what>`: benchmarks, one subcommand each, registered on a
// small registry so each benchmark lives in its own file:
//
//   add_bench_command(c)            // main.cpp: registers `proofline bench`
//     -> add_memory_bench(bench)    // app/memory_bench.cpp: `bench memory`
//     -> add_kernel_benches(bench)  // app/kernel_bench.cpp: msm, msm_g2, ntt, ntt_coset, prove
//
// A benchmark adds its options to the parser bench.add() returns and gets a
// runner; `proofline bench` runs the one chosen. Exit codes as for run: 0
// done, 1 a measurement failed, 2 usage error.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "app/cli.hpp"

namespace proofline::app {

class bench_command {
 public:
  /// Adds `proofline bench <name>`; configure its options on the returned
  /// parser (valid as long as the cli); `run` runs it when chosen.
  CLI::App& add(const std::string& name, const std::string& summary, cli::runner run);

  /// Runs the benchmark that was parsed.
  int run(std::ostream& out, std::ostream& err);

  /// The `bench` parser benchmarks are added to (set by add_bench_command).
  CLI::App* parser = nullptr;

 private:
  std::vector<std::pair<CLI::App*, cli::runner>> benches_;
};

/// Registers `proofline bench` and every benchmark under it.
void add_bench_command(cli& c);

/// `proofline bench memory` (app/memory_bench.cpp).
void add_memory_bench(bench_command& bench);

/// `proofline bench msm|msm_g2|ntt|ntt_coset|prove` (app/kernel_bench.cpp).
void add_kernel_benches(bench_command& bench);

}  // namespace proofline::app
