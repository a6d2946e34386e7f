#include "bench/registry.hpp"

#include <ostream>

#include <CLI/CLI.hpp>

namespace proofline::bench {

CLI::App& registry::add(const std::string& name, const std::string& summary, runner run) {
  CLI::App* sub = parser->add_subcommand(name, summary);
  benches_.emplace_back(sub, std::move(run));
  return *sub;
}

int registry::run(std::ostream& out, std::ostream& err) {
  for (auto& [sub, run] : benches_)
    if (sub->parsed()) return run ? run(out, err) : exit_ok;
  err << "proofline bench: no benchmark given (see proofline bench --help)\n";
  return exit_usage;
}

void add_benchmarks(registry& r, CLI::App& parser) {
  r.parser = &parser;
  add_kernel_benches(r);
  add_memory_bench(r);
  add_startup_bench(r);
}

}  // namespace proofline::bench
