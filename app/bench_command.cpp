#include "app/bench_command.hpp"

#include <memory>
#include <ostream>

#include <CLI/CLI.hpp>

namespace proofline::app {

CLI::App& bench_command::add(const std::string& name, const std::string& summary,
                             cli::runner run) {
  CLI::App* sub = parser->add_subcommand(name, summary);
  benches_.emplace_back(sub, std::move(run));
  return *sub;
}

int bench_command::run(std::ostream& out, std::ostream& err) {
  for (auto& [sub, run] : benches_)
    if (sub->parsed()) return run ? run(out, err) : exit_ok;
  err << "proofline bench: no benchmark given (see proofline bench --help)\n";
  return exit_usage;
}

void add_bench_command(cli& c) {
  // The registry lives as long as the cli: the runner below holds it.
  auto bench = std::make_shared<bench_command>();
  CLI::App& app = c.add("bench", "Benchmarks: msm, msm_g2, ntt, ntt_coset, prove (kernels and whole partitions), memory",
                        [bench](std::ostream& out, std::ostream& err) { return bench->run(out, err); });
  app.require_subcommand(1);
  app.footer("Each benchmark prints a table; --json FILE writes its figures. `proofline bench "
             "<what> --help` lists its options.");
  bench->parser = &app;
  add_kernel_benches(*bench);
  add_memory_bench(*bench);
}

}  // namespace proofline::app
