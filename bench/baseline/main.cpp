// proofline-baseline: the locked baseline engine (bench/baseline/engine.hpp)
// on a `proofline run` job file. Built without jemalloc.
//
//   proofline-baseline JOBS.json --backend cuda --report baseline.json
//
// Exit codes as `proofline run`: 0 every partition proved, 1 some failed,
// 2 usage error (bad option or job file, --backend cuda without a GPU).
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "base/exit_codes.hpp"
#include "base/text.hpp"
#include "actors/detail/prover_ops.hpp"
#include "jobs/job_file.hpp"
#include "bench/baseline/engine.hpp"
#include "bench/baseline/report.hpp"
#include "gpu/cuda/factory.hpp"
#include "gpu/pinning.hpp"
#include "memory/arena.hpp"
#include "zk/groth16/synthesis_model.hpp"

namespace {

using namespace proofline;
using namespace proofline::bench::baseline;

using base::exit_failed;
using base::exit_ok;
using base::exit_usage;

struct options {
  std::string job_file;
  std::optional<std::string> out_root;
  std::string backend = "auto";
  std::string gpus = "all";
  unsigned lanes = 2;  ///< per GPU, as `proofline run --gpu-lanes`
  unsigned cpu_threads = 0;
  std::optional<std::string> report;
  std::string log_level = "info";
  bool quiet = false;
  std::string synthesis_model = "plain";
  engine_config engine;
};

/// "all" or a comma-separated list of visible device ids; nullopt with the
/// reason in `error`.
std::optional<std::vector<int>> gpu_ids(const std::string& text, int visible, std::string& error) {
  std::vector<int> ids;
  if (text == "all") {
    for (int d = 0; d < visible; ++d) ids.push_back(d);
    return ids;
  }
  for (const std::string& item : base::split(text, ',')) {
    if (item.empty() || item.size() > 4 ||
        item.find_first_not_of("0123456789") != std::string::npos) {
      error = "--gpus " + text + ": expected all or device ids like 0,1";
      return std::nullopt;
    }
    int id = std::stoi(item);
    if (id >= visible || std::find(ids.begin(), ids.end(), id) != ids.end()) {
      error = "--gpus " + text + ": device " + item + " is not visible or listed twice (" +
              std::to_string(visible) + " visible)";
      return std::nullopt;
    }
    ids.push_back(id);
  }
  if (ids.empty()) error = "--gpus " + text + ": no device ids";
  if (ids.empty()) return std::nullopt;
  return ids;
}

/// The backends as `proofline run` chooses them: cuda (every listed GPU),
/// cpu, or auto (CUDA when a device works, else the CPU). Empty with the
/// reason in `error` when the choice cannot be honoured.
std::vector<device_backend> choose(const options& o, std::vector<device_info>& info,
                                   std::string& error) {
  std::vector<device_backend> out;
  auto cpu = [&] {
    std::shared_ptr<gpu::backend> b(gpu::make_cpu_backend(o.cpu_threads));
    info.push_back({b->describe(), "cpu", b->lanes()});
    out.push_back({b, b->lanes()});
  };
  if (o.backend == "cpu") {
    cpu();
    return out;
  }
  std::string why;
  int visible = gpu::cuda_device_count(&why);
  if (visible <= 0) {
    if (o.backend == "cuda") {
      error = "--backend cuda: no usable CUDA device (" + why + ")";
      return out;
    }
    spdlog::info("--backend auto: no CUDA device ({}); using the CPU", why);
    cpu();
    return out;
  }
  auto ids = gpu_ids(o.gpus, visible, error);
  if (!ids) return out;
  gpu::cuda_settings settings;
  settings.lanes = std::max(1u, o.lanes);
  try {
    for (int d : *ids) {
      std::shared_ptr<gpu::backend> b(gpu::make_cuda_backend(d, settings));
      info.push_back({device_name(b->describe()), "cuda", b->lanes()});
      out.push_back({b, b->lanes()});
    }
  } catch (const std::exception& e) {
    out.clear();
    info.clear();
    if (o.backend == "cuda") {
      error = std::string("--backend cuda: ") + e.what();
      return out;
    }
    spdlog::info("--backend auto: the CUDA backend is unavailable ({}); using the CPU", e.what());
    cpu();
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const proofline::run_clock clock;  // wall time from the start, as `proofline run` counts it
  options o;
  CLI::App app{
      "proofline-baseline: the locked baseline engine (one mutex-protected job tracker, "
      "glibc malloc, malloc_trim(0) under the lock after every partition) on a "
      "`proofline run` job file, for scripts/bench-utilization.sh"};
  app.add_option("JOBFILE", o.job_file, "Job file, as for `proofline run`")->required();
  app.add_option("--out-root", o.out_root, "Directory that relative \"out\" paths resolve against");
  app.add_option("--backend", o.backend, "auto, cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  app.add_option("--gpus", o.gpus, "all, or CUDA device ids like 0,1")->capture_default_str();
  app.add_option("--lanes", o.lanes,
                 "GPU-worker threads (backend lanes) per GPU; the CPU backend has 1")
      ->check(CLI::Range(1u, 16u))
      ->capture_default_str();
  app.add_option("--synthesizers", o.engine.synthesizers, "Synthesis threads")
      ->check(CLI::Range(1u, 256u))
      ->capture_default_str();
  app.add_option("--finalizers", o.engine.finalizers, "Finalizer threads")
      ->check(CLI::Range(1u, 256u))
      ->capture_default_str();
  app.add_option("--cpu-threads", o.cpu_threads,
                 "Threads of the CPU backend and of key loading; 0 = every hardware thread")
      ->capture_default_str();
  app.add_option("--in-flight", o.engine.in_flight,
                 "Partitions synthesized but not finalized, at most; 0 = synthesizers + 3 x lanes")
      ->capture_default_str();
  app.add_flag("--pinned-pool", o.engine.pinned_pool,
               "Witness and a, b, c in a pinned pool like proofline's (default: glibc heap)");
  app.add_option("--synthesis-model", o.synthesis_model,
                 "plain, lc or lc-keep: how synthesis allocates, as for `proofline run`")
      ->check(CLI::IsMember({"plain", "lc", "lc-keep"}))
      ->capture_default_str();
  app.add_flag("--heap-stats", o.engine.heap_stats,
               "malloc_info after every finalized partition (before the lock); the report's "
               "memory.glibc_heap_peak");
  bool no_trim = false;
  app.add_flag("--no-trim", no_trim, "Skip malloc_trim(0) (to measure the lock alone)");
  app.add_option("--report", o.report, "Write the run report (JSON) here");
  app.add_option("--log-level", o.log_level, "trace, debug, info, warn, error, off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}))
      ->capture_default_str();
  app.add_flag("-q,--quiet", o.quiet, "No summary on stdout");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? exit_ok : exit_usage;
  }
  o.engine.trim = !no_trim;

  auto logger = spdlog::stderr_color_mt("baseline");
  logger->set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(o.log_level));
  if (memory::jemalloc_available())
    spdlog::warn("jemalloc is linked into this binary; the baseline must run on glibc malloc");

  std::vector<job_spec> jobs;
  try {
    jobs = proofline::jobs::read_job_file(o.job_file, o.out_root);
  } catch (const proofline::jobs::job_file_error& e) {
    std::cerr << "proofline-baseline: " << e.what() << "\n";
    return exit_usage;
  }
  std::vector<device_info> info;
  std::string error;
  auto devices = choose(o, info, error);
  if (devices.empty()) {
    std::cerr << "proofline-baseline: " << error << "\n";
    return exit_usage;
  }
  for (const auto& d : info) spdlog::info("backend: {} ({}), {} lane(s)", d.name, d.kind, d.lanes);
  if (info.front().kind == "cuda" && o.engine.pinned_pool) o.engine.pinner = gpu::cuda_pinner();

  o.engine.synthesis_model = o.synthesis_model;
  auto ops = real_prover_ops(o.cpu_threads, /*self_check=*/false,  // the baseline stays as it was
                             *zk::groth16::parse_synthesis_model(o.synthesis_model));
  o.engine.clock = clock;
  auto result = run_engine(jobs, ops, devices, o.engine);
  if (!o.quiet) print_summary(std::cout, result, info);
  if (o.report) {
    try {
      ops.write_file(*o.report, report_json(result, info, o.engine));
    } catch (const std::exception& e) {
      std::cerr << "proofline-baseline: " << e.what() << "\n";
      return exit_failed;
    }
  }
  return result.failed == 0 ? exit_ok : exit_failed;
}
