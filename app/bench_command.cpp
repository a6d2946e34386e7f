#include "app/bench_command.hpp"

#include <memory>
#include <ostream>

#include <CLI/CLI.hpp>

#include "bench/registry.hpp"

namespace proofline::app {

void add_bench_command(cli& c) {
  // The registry lives as long as the cli: the runner below holds it.
  auto benches = std::make_shared<bench::registry>();
  CLI::App& app = c.add("bench", "Benchmarks: msm, msm_g2, ntt, ntt_coset, prove (kernels and whole partitions), memory, key-read",
                        [benches](std::ostream& out, std::ostream& err) { return benches->run(out, err); });
  app.require_subcommand(1);
  app.footer("Each benchmark prints a table; --json FILE writes its figures. `proofline bench "
             "<what> --help` lists its options.");
  bench::add_benchmarks(*benches, app);
}

}  // namespace proofline::app
