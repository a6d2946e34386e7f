#include "app/run_command.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "actors/detail/prover_ops.hpp"
#include "app/error_stream.hpp"
#include "actors/runtime.hpp"
#include "actors/detail/system_setup.hpp"
#include "actors/key_cache.hpp"
#include "engine/runtime_builder.hpp"
#include "actors/detail/key_prefetch.hpp"
#include "base/interrupt.hpp"
#include "base/text.hpp"
#include "observe/html_report.hpp"
#include "jobs/job_file.hpp"
#include "jobs/locate.hpp"
#include "observe/metrics_http.hpp"
#include "observe/observer.hpp"
#include "observe/report.hpp"
#include "observe/summary.hpp"
#include "observe/trace.hpp"
#include "gpu/backend.hpp"
#include "gpu/cuda/factory.hpp"
#include "gpu/pinning.hpp"
#include "memory/estimate.hpp"
#include "memory/size.hpp"
#include "zk/formats/atomic_file.hpp"
#include "zk/groth16/synthesis_model.hpp"

namespace proofline::app {

using engine::backend_records;
using jobs::job_file_error;
using jobs::read_job_file;

using observe::build_report;
using observe::html_report;
using observe::is_loopback_address;
using observe::metrics_endpoint;
using observe::observation;
using observe::observation_options;
using observe::parse_metrics_endpoint;
using observe::print_gpu_figures;
using observe::jemalloc_line;
using observe::memory_summary_line;
using observe::print_interrupted;
using observe::print_summary;
using observe::report_json;
using observe::run_record;
using observe::run_report;
using observe::trace_json;

namespace {

/// Distinct keys read while the backends start: the first jobs' keys. More
/// would only compete with the first key for the disk and the cores.
constexpr std::size_t prefetch_keys = 2;

/// After a second SIGINT or SIGTERM, how long `run` may still take to write
/// its summary and reports before it ends anyway (each cancelled job's
/// result.json is written as its cancel completes, within milliseconds).
constexpr std::chrono::seconds second_signal_grace{2};

/// Default output root of the bundled example, relative to the working directory.
constexpr const char* bundled_out_root = "proofline-out";

/// Writes --report, --trace and --html; false (with the reason on `err`) if
/// one could not be written.
bool write_reports(const run_options& opts, const run_record& record, const run_report& report,
                   std::ostream& err) {
  bool ok = true;
  auto write = [&](const std::string& path, const char* what, auto&& render) {
    if (path.empty()) return;
    try {
      zk::formats::write_file_atomic(path, render());
      spdlog::info("{}: {}", what, path);
    } catch (const std::exception& e) {
      err << "proofline run: " << what << ": " << e.what() << "\n";
      ok = false;
    }
  };
  write(opts.report_file, "run report", [&] { return report_json(report) + "\n"; });
  write(opts.trace_file, "trace", [&] { return trace_json(record); });
  write(opts.html_file, "HTML report", [&] { return html_report(record, report); });
  return ok;
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

/// %& in a log pattern: the message with its control characters escaped
/// (base::escape_controls), so text a client chose (a job id, a path) can
/// neither end the line and start a forged one nor drive a terminal.
class text_message_flag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    std::string text = base::escape_controls(std::string_view(msg.payload.data(), msg.payload.size()));
    dest.append(text.data(), text.data() + text.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<text_message_flag>();
  }
};

/// %* in a log pattern: the message as the inside of a JSON string.
class json_message_flag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    std::string_view text(msg.payload.data(), msg.payload.size());
    std::string quoted = nlohmann::json(std::string(text)).dump(
        -1, ' ', false, nlohmann::json::error_handler_t::replace);
    dest.append(quoted.data() + 1, quoted.data() + quoted.size() - 1);  // without the quotes
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<json_message_flag>();
  }
};

}  // namespace

void setup_logging(const run_options& opts) {
  set_json_errors(opts.log_format == "json");
  auto logger = spdlog::stderr_color_mt("proofline");
  if (opts.log_format == "json") {
    // One object a line, time in UTC with milliseconds:
    // {"time":"2026-12-01T12:04:44.123Z","level":"info","msg":"..."}
    auto f = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
    f->add_flag<json_message_flag>('*').set_pattern(
        R"({"time":"%Y-%m-%dT%H:%M:%S.%eZ","level":"%l","msg":"%*"})");
    logger->set_formatter(std::move(f));
  } else {
    auto f = std::make_unique<spdlog::pattern_formatter>();
    f->add_flag<text_message_flag>('&').set_pattern("[%H:%M:%S.%e] [%^%l%$] %&");
    logger->set_formatter(std::move(f));
  }
  spdlog::set_default_logger(logger);
  if (opts.log_level_given || !opts.quiet)
    spdlog::set_level(spdlog::level::from_str(opts.log_level));
  else
    spdlog::set_level(spdlog::level::err);
}

int run_command(const run_options& opts, std::ostream& out, std::ostream& err) {
  // The run's time base starts with the command, so wall time and start-up
  // figures include reading the job file and starting the backends.
  const run_clock clock;
  // 1. The jobs: all checked before anything runs.
  std::string job_file;
  std::optional<std::string> out_root = opts.out_root;
  if (opts.job_file) {
    job_file = *opts.job_file;
  } else {
    auto bundled = jobs::find_bundled_jobs();
    if (!bundled) {
      err << "proofline run: no JOBFILE given and the bundled example was not found; looked for "
             "jobs.json in:";
      for (const auto& d : jobs::example_dirs()) err << "\n  " << d;
      err << "\n";
      return exit_usage;
    }
    job_file = *bundled;
    if (!out_root) out_root = bundled_out_root;
    spdlog::info("no JOBFILE: proving the bundled example {} into {}/", job_file, *out_root);
  }
  std::vector<job_spec> specs;
  try {
    specs = read_job_file(job_file, out_root, opts.max_partitions);
    for (auto& s : specs) s.keep_witness = opts.keep_witness && !s.witness_generator.empty();
  } catch (const job_file_error& e) {
    err << "proofline run: " << e.what() << "\n";
    return exit_usage;
  }

  // Observability flags, checked before anything starts.
  // Output paths are checked before anything is proved: a report that
  // cannot be written is a usage error; a job whose out directory cannot be
  // written fails at once, alone.
  for (const auto* path : {&opts.report_file, &opts.trace_file, &opts.html_file}) {
    if (path->empty()) continue;
    std::filesystem::path parent = std::filesystem::path(*path).parent_path();
    if (auto problem = zk::formats::writable_dir_problem(parent.string()); !problem.empty()) {
      err << "proofline run: " << *path << ": " << problem << "\n";
      return exit_usage;
    }
  }
  std::vector<std::string> unwritable(specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i)
    unwritable[i] = zk::formats::writable_dir_problem(specs[i].out);

  std::optional<metrics_endpoint> metrics;
  if (!opts.metrics.empty()) {
    std::string why;
    metrics = parse_metrics_endpoint(opts.metrics, &why);
    if (!metrics) {
      err << "proofline run: --metrics: " << why << "\n";
      return exit_usage;
    }
    if (!is_loopback_address(metrics->host)) {
      if (!opts.metrics_public) {
        err << "proofline run: --metrics " << opts.metrics
            << ": not a loopback address, and the endpoint has no authentication; add "
               "--metrics-public to serve it there anyway\n";
        return exit_usage;
      }
      spdlog::warn("metrics: serving on {}, reachable beyond this host, without authentication",
                   opts.metrics);
    }
  }

  // 2. Backend and budget. The keys of the first jobs are read meanwhile
  //    (actors/detail/key_prefetch.hpp): starting a CUDA device takes as long as
  //    reading a small key, and nothing else needs either.
  engine::runtime_role role;
  role.pinned_pool = opts.pinned_pool;
  role.resident_pool = opts.resident_pool;
  engine::runtime_builder builder(opts, role, clock);
  std::vector<std::pair<int, std::string>> key_order;
  for (std::size_t i = 0; i < specs.size(); ++i)
    if (unwritable[i].empty()) key_order.emplace_back(static_cast<int>(specs[i].prio), specs[i].zkey);
  key_prefetch<zk::groth16::key_ptr, file_identity> prefetch(
      builder.ops().load_key, identify_file, keys_to_prefetch(key_order, prefetch_keys));
  builder.ops().load_key = prefetch.loader();
  const double backends_start_ms = clock.now_ms();
  const std::string problem = builder.choose();
  spdlog::debug("backends started in {:.1f} ms ({} key(s) read meanwhile)",
                clock.now_ms() - backends_start_ms, prefetch.size());
  if (!problem.empty()) {
    err << "proofline run: " << problem << "\n";
    return exit_usage;
  }
  runtime_config& rc = builder.config();
  const auto& choice = builder.choice();
  const unsigned synthesizers = builder.synthesizers();
  spdlog::info("memory budget {}{}", memory::format_bytes(rc.memory_budget),
               opts.memory_budget ? "" : " (default: 70% of physical memory minus 1 GiB)");
  std::size_t partitions = 0;
  for (const auto& s : specs) partitions += s.witnesses.size();
  spdlog::info("{}: {} job(s), {} partition(s)", job_file, specs.size(), partitions);

  // 3. The pipeline.
  caf::actor_system_config cfg;
  configure_actor_system(cfg);
  caf::actor_system sys{cfg};
  run_record record;
  record.job_file = job_file;
  record.started_at = observe::iso8601_utc(std::chrono::system_clock::now());
  record.backends = backend_records(choice);
  record.synthesizers = synthesizers;
  record.finalizers = opts.finalizers;
  std::optional<observation> obs;
  try {
    observation_options oo;
    oo.progress = !opts.quiet && !opts.json;
    oo.nvml = choice.cuda();
    oo.metrics = metrics;
    obs.emplace(sys, rc.clock, record.backends, oo);
  } catch (const std::exception& e) {
    err << "proofline run: " << e.what() << "\n";
    return exit_usage;
  }
  rc.on_purge = obs->purge_hook();
  if (opts.synthesis_model != "plain")
    spdlog::info("synthesis model: {} (allocates as a bellperson-style synthesizer)", opts.synthesis_model);
  // SIGINT/SIGTERM from here on cancel the unfinished jobs (base/interrupt.hpp).
  std::optional<base::interrupt_watch> interrupt;
  interrupt.emplace();
  std::vector<job_report> reports;
  std::string memory_line;  // memory_summary_line of the run's end
  std::string jemalloc_end;  // jemalloc_line of the run's end
  std::atomic<bool> reported{false};  // the summary and reports are written
  int signo = 0;
  bool all_done = true, written = true;
  {
    auto started = builder.start(sys);
    runtime& rt = *started;
    obs->attach({rt.registry(), rt.memory(), rt.scheduler()});
    caf::scoped_actor self{sys};
    std::vector<std::optional<uint64_t>> seqs;
    for (std::size_t i = 0; i < specs.size(); ++i) {
      const auto& spec = specs[i];
      std::optional<uint64_t> seq;
      if (!unwritable[i].empty()) {  // failed below with the reason, not proved
        seqs.push_back(seq);
        continue;
      }
      self->request(rt.registry(), caf::infinite, submit_atom::value, spec)
          .receive([&](uint64_t s) { seq = s; },
                   [&](caf::error& e) { spdlog::error("job {}: {}", spec.id, sys.render(e)); });
      seqs.push_back(seq);
    }
    // A signal becomes one cancel message per job; the registry writes each
    // cancelled job's result.json (finished partitions keep their proofs) and
    // answers the awaits below.
    // A second signal ends the run once the summary and reports are out
    // (made from the registry's records, like each result.json), or after
    // second_signal_grace at most.
    interrupt->start(
        [registry = rt.registry(), seqs](int signo) {
          spdlog::warn("{}: cancelling the unfinished jobs (a second signal ends at once)",
                       signo == SIGINT ? "interrupted (SIGINT)" : "terminated (SIGTERM)");
          for (const auto& seq : seqs)
            if (seq) caf::anon_send(registry, cancel_atom::value, *seq);
        },
        [&reported](int signo) {
          const auto until = std::chrono::steady_clock::now() + second_signal_grace;
          while (!reported.load(std::memory_order_acquire) &&
                 std::chrono::steady_clock::now() < until)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
          std::_Exit(base::exit_signal(signo));
        });
    for (std::size_t i = 0; i < specs.size(); ++i) {
      if (!seqs[i]) {
        reports.push_back(failed_report(specs[i], unwritable[i].empty()
                                                      ? "the job registry did not accept the job"
                                                      : "out: " + unwritable[i]));
        continue;
      }
      self->request(rt.registry(), caf::infinite, await_atom::value, *seqs[i])
          .receive(
              [&](job_report& r) { reports.push_back(std::move(r)); },
              [&](caf::error& e) { reports.push_back(failed_report(specs[i], sys.render(e))); });
    }
    self->request(rt.memory(), caf::infinite, stats_atom::value)
        .receive(
            [&](memory_stats& m) {
              memory_line = memory_summary_line(m);
              record.memory = std::move(m);
            },
            [&](caf::error&) {});
    // Before shutdown, while the actors' arenas still exist: one arena per
    // synthesizer, finalizer and GPU worker, and a few more.
    if (!opts.quiet && !opts.json) jemalloc_end = jemalloc_line(synthesizers + opts.finalizers + 64);
    self->request(rt.keys(), caf::infinite, startup_atom::value)
        .receive([&](std::vector<key_startup>& keys) { record.keys = std::move(keys); },
                 [&](caf::error&) {});
    obs->finish(record);  // before shutdown: the samples end with the last job
    // 4. Reports, summary and exit code, from the registry's records (the
    //    ones each result.json was written from), before the actors stop:
    //    a second signal during the shutdown loses none of them.
    record.wall_ms = rc.clock.now_ms();
    record.jobs = reports;
    run_report report = build_report(record);
    for (const auto& r : reports) all_done &= r.state == job_state::done;
    signo = interrupt->signal();
    written = write_reports(opts, record, report, err);
    if (opts.json) {
      out << report_json(report) << "\n";
    } else if (!opts.quiet) {
      print_summary(out, reports, record.wall_ms);
      if (signo) print_interrupted(out, reports, signo);
      print_gpu_figures(out, report);
      print_startup(out, report.startup, report.backend != "cpu");
      if (!memory_line.empty()) out << memory_line << "\n";
      if (!jemalloc_end.empty()) out << jemalloc_end << "\n";
    } else {
      // --quiet prints nothing but failures: every failed job and its error.
      for (const auto& r : reports) {
        if (r.state == job_state::done) continue;
        err << "proofline run: job " << base::escape_controls(r.id) << " " << to_string(r.state);
        if (r.has_error) err << ": " << base::escape_controls(r.error.message);
        err << "\n";
      }
      if (signo) print_interrupted(err, reports, signo);
    }
    out.flush();
    err.flush();
    reported.store(true, std::memory_order_release);
    rt.shutdown();
  }
  interrupt.reset();  // a signal from here on ends the process the default way
  obs.reset();
  if (signo) return base::exit_signal(signo);
  return all_done && written ? exit_ok : exit_failed;
}

}  // namespace proofline::app
