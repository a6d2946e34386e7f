#include "app/run_command.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>

#include <ostream>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "actors/prover_ops.hpp"
#include "actors/runtime.hpp"
#include "app/job_file.hpp"
#include "app/locate.hpp"
#include "app/summary.hpp"
#include "gpu/backend.hpp"
#include "gpu/cuda/factory.hpp"
#include "memory/size.hpp"

namespace proofline::app {

namespace {

/// Default output root of the bundled example, relative to the working directory.
constexpr const char* bundled_out_root = "proofline-out";

/// CAF scheduler threads: they only route messages and keep the books (all
/// blocking work runs in detached actors), so two are plenty.
constexpr int scheduler_threads = 2;

struct backend_choice {
  std::vector<std::shared_ptr<gpu::backend>> backends;
  std::string error;  ///< non-empty: the requested backend is unavailable
};

backend_choice choose_backend(const run_options& opts) {
  backend_choice c;
  auto cpu = [&](const std::string& why) {
    c.backends.push_back(std::shared_ptr<gpu::backend>(gpu::make_cpu_backend(opts.cpu_threads)));
    spdlog::info("backend: CPU ({}); {}", c.backends.back()->describe(), why);
  };
  if (opts.backend == "cpu") {
    cpu("--backend cpu");
    return c;
  }
  std::string why;
  int devices = gpu::cuda_device_count(&why);
  if (devices <= 0) {
    if (opts.backend == "cuda") {
      c.error = "--backend cuda: no usable CUDA device (" + why + ")";
      return c;
    }
    cpu("--backend auto found no CUDA device (" + why + ")");
    return c;
  }
  try {
    for (int d = 0; d < devices; ++d)
      c.backends.push_back(std::shared_ptr<gpu::backend>(gpu::make_cuda_backend(d)));
  } catch (const std::exception& e) {
    c.backends.clear();
    if (opts.backend == "cuda") {
      c.error = std::string("--backend cuda: ") + e.what();
      return c;
    }
    cpu(std::string("--backend auto: the CUDA backend is unavailable (") + e.what() + ")");
    return c;
  }
  for (const auto& b : c.backends)
    spdlog::info("backend: CUDA ({}); --backend {} found {} CUDA device(s)", b->describe(),
                 opts.backend, devices);
  return c;
}

job_report failed_report(const job_spec& spec, const std::string& message) {
  job_report r;
  r.id = spec.id;
  r.out = spec.out;
  r.state = job_state::failed;
  r.has_error = true;
  r.error = {"", message};
  for (uint32_t i = 0; i < spec.witnesses.size(); ++i) {
    partition_report p;
    p.index = i;
    p.state = partition_state::failed;
    r.partitions.push_back(p);
  }
  return r;
}

}  // namespace

void setup_logging(const run_options& opts) {
  auto logger = spdlog::stderr_color_mt("proofline");
  logger->set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
  spdlog::set_default_logger(logger);
  if (opts.log_level_given || !opts.quiet)
    spdlog::set_level(spdlog::level::from_str(opts.log_level));
  else
    spdlog::set_level(spdlog::level::err);
}

int run_command(const run_options& opts, std::ostream& out, std::ostream& err) {
  // 1. The jobs: all checked before anything runs.
  std::string job_file;
  std::optional<std::string> out_root = opts.out_root;
  if (opts.job_file) {
    job_file = *opts.job_file;
  } else {
    auto bundled = find_bundled_jobs();
    if (!bundled) {
      err << "proofline run: no JOBFILE given and the bundled example was not found; looked for "
             "jobs.json in:";
      for (const auto& d : example_dirs()) err << "\n  " << d;
      err << "\n";
      return exit_usage;
    }
    job_file = *bundled;
    if (!out_root) out_root = bundled_out_root;
    spdlog::info("no JOBFILE: proving the bundled example {} into {}/", job_file, *out_root);
  }
  std::vector<job_spec> specs;
  try {
    specs = read_job_file(job_file, out_root);
  } catch (const job_file_error& e) {
    err << "proofline run: " << e.what() << "\n";
    return exit_usage;
  }

  // 2. Backend and budget.
  auto choice = choose_backend(opts);
  if (!choice.error.empty()) {
    err << "proofline run: " << choice.error << "\n";
    return exit_usage;
  }
  runtime_config rc;
  rc.memory_budget = opts.memory_budget ? opts.memory_budget : default_memory_budget();
  rc.synthesizers = opts.synthesizers;
  rc.finalizers = opts.finalizers;
  rc.pacing = opts.synthesis_ahead;  // 0: the runtime's default
  spdlog::info("memory budget {}{}", memory::format_bytes(rc.memory_budget),
               opts.memory_budget ? "" : " (default: 70% of physical memory minus 1 GiB)");
  std::size_t partitions = 0;
  for (const auto& s : specs) partitions += s.witnesses.size();
  spdlog::info("{}: {} job(s), {} partition(s)", job_file, specs.size(), partitions);

  // 3. The pipeline.
  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", scheduler_threads);
  cfg.set("logger.file-verbosity", caf::atom("quiet"));
  cfg.set("logger.console-verbosity", caf::atom("quiet"));
  register_message_types(cfg);
  caf::actor_system sys{cfg};
  rc.clock = run_clock();
  std::vector<job_report> reports;
  {
    runtime rt(sys, rc, real_prover_ops(opts.cpu_threads), choice.backends);
    caf::scoped_actor self{sys};
    std::vector<std::optional<uint64_t>> seqs;
    for (const auto& spec : specs) {
      std::optional<uint64_t> seq;
      self->request(rt.registry(), caf::infinite, submit_atom::value, spec)
          .receive([&](uint64_t s) { seq = s; },
                   [&](caf::error& e) { spdlog::error("job {}: {}", spec.id, sys.render(e)); });
      seqs.push_back(seq);
    }
    for (std::size_t i = 0; i < specs.size(); ++i) {
      if (!seqs[i]) {
        reports.push_back(failed_report(specs[i], "the job registry did not accept the job"));
        continue;
      }
      self->request(rt.registry(), caf::infinite, await_atom::value, *seqs[i])
          .receive(
              [&](job_report& r) { reports.push_back(std::move(r)); },
              [&](caf::error& e) { reports.push_back(failed_report(specs[i], sys.render(e))); });
    }
    rt.shutdown();
  }
  double wall_ms = rc.clock.now_ms();

  // 4. Summary and exit code.
  bool all_done = true;
  for (const auto& r : reports) all_done &= r.state == job_state::done;
  if (!opts.quiet) print_summary(out, reports, wall_ms);
  return all_done ? exit_ok : exit_failed;
}

}  // namespace proofline::app
