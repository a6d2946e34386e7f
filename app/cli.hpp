// The command line of `proofline`: subcommands, options, help text and exit
// codes (0 success, 1 a job failed, 2 usage error). CLI11 parses; its own
// exit codes are mapped onto these.
//
// Each subcommand lives in its own file and registers itself on a `cli` with
// its options and a function that runs it; main.cpp lists them:
//
//   cli c;
//   add_run_command(c, run_opts);    // app/cli.cpp
//   add_bench_command(c);            // app/bench_command.cpp, ...
//   if (auto code = c.parse(argc, argv, std::cout, std::cerr)) return *code;
//   return c.run(std::cout, std::cerr);
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/exit_codes.hpp"
#include "engine/settings.hpp"

namespace CLI {
class App;
class Validator;
}

namespace proofline::app {

/// Exit codes of `proofline` (base/exit_codes.hpp).
using base::exit_failed;
using base::exit_ok;
using base::exit_usage;

/// CLI11 check for a size option: bytes or with a binary unit (512M, 8G, 1.5T).
CLI::Validator size_validator();

/// Adds --gpus, --gpu-memory and --gpu-lanes (shared by run and serve).
void add_gpu_options(CLI::App& app, std::string& gpus, std::string& gpu_memory,
                     unsigned& gpu_lanes);

/// The proving runtime's options, the same for run and serve (declared once,
/// by add_runtime_options): the runtime's settings (engine/settings.hpp)
/// and how the command logs and is observed.
struct runtime_options : engine::runtime_settings {
  std::string log_level = "info";
  std::string log_format = "text";  ///< text | json (one JSON object a line)
  // ---- observability (docs/OBSERVABILITY.md)
  std::string metrics;           ///< --metrics ADDR:PORT; empty: no endpoint
  bool metrics_public = false;   ///< --metrics-public: a non-loopback address is intended
};

/// Adds what every proving command takes (run, serve, prove): --backend,
/// the GPU options, --cpu-threads, --memory-budget, --no-verify, --log-level.
void add_prover_options(CLI::App& app, runtime_options& o);

/// Adds the runtime's options to `app` (run and serve): add_prover_options,
/// then --synthesizers, --finalizers, --synthesis-ahead(-max),
/// --synthesis-model, --log-format, --config and the metrics options.
void add_runtime_options(CLI::App& app, runtime_options& o);

/// What `proofline run` was asked to do.
struct run_options : runtime_options {
  std::optional<std::string> job_file;  ///< none: the bundled example
  std::optional<std::string> out_root;  ///< relative `out` paths resolve here
  std::size_t max_partitions = 100000;  ///< job_file.hpp's default_max_partitions
  bool log_level_given = false;
  bool quiet = false;
  bool pinned_pool = false;      ///< --pinned-pool: partitions upload from a pinned pool
  /// --resident-pool: partitions are read into a pool of ordinary pages that
  /// stay resident between partitions.
  bool resident_pool = false;
  /// --keep-witness: jobs with a witness generator also write each computed
  /// witness (<out>/witness.wtns, witness_<i>.wtns).
  bool keep_witness = false;
  // ---- observability (docs/OBSERVABILITY.md)
  std::string trace_file;        ///< --trace: Chrome trace-event JSON; empty: none
  std::string report_file;       ///< --report: the run report (JSON); empty: none
  std::string html_file;         ///< --html: the HTML report; empty: none
  bool json = false;             ///< --json: the run report on stdout instead of the table
};

/// Adds --config FILE (run and serve): a JSON object whose keys are the
/// command's long option names without "--" ({"listen": "0.0.0.0:7470",
/// "allow-root": ["/data"], "no-verify": true}). cli::parse reads it:
/// an option given on the command line wins over the file, the file over
/// the defaults. An unknown key or a value of the wrong kind is a usage error
/// naming the file and the key.
void add_config_option(CLI::App& app);

/// Adds --log-format text|json (run and serve); setup_logging applies it.
void add_log_format_option(CLI::App& app, std::string& format);

/// Adds --metrics ADDR:PORT and --metrics-public (shared by run and serve).
void add_metrics_options(CLI::App& app, std::string& metrics, bool& metrics_public);

/// The root parser and its subcommands.
class cli {
 public:
  /// Runs a parsed subcommand; returns the exit code.
  using runner = std::function<int(std::ostream& out, std::ostream& err)>;

  cli();
  ~cli();
  cli(const cli&) = delete;
  cli& operator=(const cli&) = delete;

  /// Adds subcommand `name`; configure its options and help on the returned
  /// parser (valid as long as this cli). `run` is called if it is chosen.
  CLI::App& add(const std::string& name, const std::string& summary, runner run);

  /// Parses argv. Returns nullopt when the chosen subcommand should run, else
  /// the exit code to return at once (help and version: 0, printed on `out`;
  /// usage errors: 2, message on `err`).
  std::optional<int> parse(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

  /// Runs the subcommand parse() chose.
  int run(std::ostream& out, std::ostream& err);

  /// What --version prints (default: version_text()). --version is taken
  /// anywhere before a "--", after a subcommand too.
  void set_version(std::function<std::string()> text);

 private:
  std::function<std::string()> version_;
  std::unique_ptr<CLI::App> root_;
  std::vector<std::pair<CLI::App*, runner>> commands_;
};

/// `proofline run`: fills `opts` when parsed and runs `run` (run_command()
/// in the binary). `opts` must outlive the cli.
void add_run_command(cli& c, run_options& opts, cli::runner run);

/// A cli with `run` alone, parsing into `opts`; what the tests of the run
/// options use. Same return convention as cli::parse.
std::optional<int> parse_command_line(int argc, const char* const* argv, run_options& opts,
                                      std::ostream& out, std::ostream& err);

/// The default memory budget and physical memory (engine/settings.hpp).
using engine::default_memory_budget;
using engine::physical_memory;

/// The version string, "proofline 0.1.0".
std::string version_text();

}  // namespace proofline::app
