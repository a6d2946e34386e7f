// The benchmarks of `proofline bench <what>`, one subcommand each, registered
// on a small registry so each benchmark lives in its own file and bench/
// needs nothing of app/: the app hands in the `bench` parser and runs what
// the registry returns.
//
//   add_benchmarks(r, parser)       // app/bench_command.cpp
//     -> add_kernel_benches(r)      // bench/kernel_bench.cpp: msm, msm_g2, ntt, ntt_coset, prove
//     -> add_memory_bench(r)        // bench/memory_bench.cpp: memory
//     -> add_startup_bench(r)       // bench/startup_bench.cpp: key-read
//
// A benchmark adds its options to the parser registry::add() returns and
// gets a runner; registry::run runs the one chosen. Exit codes as for run
// (base/exit_codes.hpp): 0 done, 1 a measurement failed, 2 usage error.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "base/exit_codes.hpp"

namespace CLI {
class App;
}

namespace proofline::bench {

using base::exit_failed;
using base::exit_ok;
using base::exit_usage;

/// Runs a parsed benchmark; returns its exit code.
using runner = std::function<int(std::ostream& out, std::ostream& err)>;

class registry {
 public:
  /// Adds `<parser> <name>`; configure its options on the returned parser
  /// (valid as long as `parser`); `run` runs it when chosen.
  CLI::App& add(const std::string& name, const std::string& summary, runner run);

  /// Runs the benchmark that was parsed.
  int run(std::ostream& out, std::ostream& err);

  /// The parser benchmarks are added to (set by add_benchmarks).
  CLI::App* parser = nullptr;

 private:
  std::vector<std::pair<CLI::App*, runner>> benches_;
};

/// Adds every benchmark to `r` as a subcommand of `parser`.
void add_benchmarks(registry& r, CLI::App& parser);

/// `bench memory` (bench/memory_bench.cpp).
void add_memory_bench(registry& r);

/// `bench msm|msm_g2|ntt|ntt_coset|prove` (bench/kernel_bench.cpp).
void add_kernel_benches(registry& r);

/// `bench key-read` (bench/startup_bench.cpp).
void add_startup_bench(registry& r);

}  // namespace proofline::bench
