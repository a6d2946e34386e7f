#include "app/cli.hpp"

#include <algorithm>
#include <array>
#include <memory>
#include <ostream>
#include <string_view>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "base/text.hpp"
#include "memory/size.hpp"
#include "zk/formats/error.hpp"
#include "zk/formats/json_limits.hpp"
#include "zk/formats/whole_file.hpp"

namespace proofline::app {

namespace {

const char* const overview =
    "proofline: a Groth16 proving runtime. It turns snarkjs proving keys (.zkey) and\n"
    "witnesses (.wtns) into proofs that `snarkjs groth16 verify` accepts, pipelining\n"
    "witness synthesis, proving (CUDA GPU or CPU) and proof assembly in an actor system\n"
    "under one memory budget.";

const char* const main_footer =
    "Run `proofline run --help` for the job file format, outputs and exit codes.\n"
    "One proof, as rapidsnark: proofline prove circuit.zkey witness.wtns proof.json public.json\n"
    "(exit 0 written, 1 proving failed, 2 bad input); check it with proofline verify.\n"
    "\n"
    "Exit codes: 0 every job done; 1 some job failed; 2 usage error (bad option,\n"
    "bad job file, requested backend unavailable); 130 or 143: run or serve stopped\n"
    "by SIGINT or SIGTERM.";

const char* const run_footer = R"(JOB FILE (JSON):
  {"jobs": [
    {"id": "a", "zkey": "circuit.zkey", "witness": "w.wtns", "out": "out/a"},
    {"id": "b", "zkey": "circuit.zkey", "witnesses": ["w0.wtns", "w1.wtns"],
     "out": "out/b", "priority": "high"}
  ]}
  Each job needs "id" (unique), "zkey", "out" (unique) and exactly one of
  "witness" (one proof) or "witnesses" (one proof per partition,
  proof_<i>.json for the i-th); or "witness_generator" (the object `proofline
  witness build` makes) with "input" or "inputs" (input.json files: the
  synthesizers compute each witness; --keep-witness also writes them);
  "priority" is optional: low, normal (default), high, critical. Other
  keys are errors. Relative paths resolve against the job file's directory;
  relative "out" paths against --out-root when it is given. A file that is not
  valid JSON or breaks these rules is rejected before anything runs (exit 2),
  with a message naming the job and the field.

OUTPUTS, in each job's out directory (written atomically: temp file + rename):
  "witness" job:    proof.json, public.json
  "witnesses" job:  proof_<i>.json, public_<i>.json for i = 0..k-1
  every job:        result.json:
    {"id": "b", "status": "done" | "failed" | "cancelled",
     "error": null | {"file", "message"},
     "partitions": [{"index": 0, "status": "done", "proof": "proof_0.json",
                     "public": "public_0.json", "spans_ms": {"synthesize": [s, e],
                     "prove": [s, e], "finalize": [s, e]}}, ...],
     "spans_ms": {"total": [s, e]}}
    Spans are [start, end] in ms since the run started. A failed partition has
    "proof"/"public" null and its own "error"; a job fails if any partition
    fails, and the proofs of its other partitions are kept.
  proofs and public signals are in snarkjs format; check one with
    snarkjs groth16 verify verification_key.json public.json proof.json
  stdout: a summary table (job, status, partitions done/total, time, output,
  error), totals (proofs, wall time, proofs/s), each GPU's busy fraction and
  hand-off gaps, memory and purges; with --json the run report instead.
  stderr: the log (timing lines with --log-level debug) and, on a terminal, a
  live progress line. --report, --trace and --html write the run report, a
  Chrome trace and an HTML page (docs/OBSERVABILITY.md).

WITHOUT JOBFILE: proves the bundled example (examples/jobs.json, found next to
the binary: <exe dir>/examples, <exe dir>/../examples,
<exe dir>/../share/proofline/examples, then the source tree) into
./proofline-out/ (as if --out-root proofline-out).

EXIT CODES: 0 every job done; 1 at least one job failed (the others still run
and their outputs are written), or a --report, --trace or --html file could
not be written; 2 usage error: bad option, unreadable or invalid job file,
bundled example not found, --backend cuda without a usable GPU, a --metrics
address that is taken or not loopback without --metrics-public; 130 (SIGINT,
Ctrl-C) or 143 (SIGTERM): interrupted. The first signal cancels the unfinished
jobs: each gets result.json with status "cancelled", its finished partitions
keep their proofs and the rest are listed as "cancelled"; the summary names
them. A second signal ends the process at once (outputs are written
atomically, so none is half-written).)";

std::string budget_help() {
  std::string h =
      "Memory budget for partitions in flight: bytes, or with K/M/G/T (binary units: "
      "512M, 8G, 1.5T). Partitions wait for memory in priority order; one larger "
      "than the budget fails its job at once. Default: 70% of physical memory minus "
      "1 GiB (at least 256 MiB)";
  if (physical_memory()) h += "; here " + memory::format_bytes(default_memory_budget());
  return h;
}

}  // namespace

CLI::Validator size_validator() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        return memory::parse_size(s)
                   ? std::string()
                   : "expected a size in bytes or with a unit (512M, 8G, 1.5T), got " + s;
      },
      "SIZE", "size");
}

void add_gpu_options(CLI::App& app, std::string& gpus, std::string& gpu_memory,
                     unsigned& gpu_lanes) {
  app.add_option("--gpus", gpus,
                 "CUDA devices to prove on: all, or device ids like 0,1 (with --backend auto "
                 "or cuda)")
      ->type_name("all|IDS")
      ->capture_default_str();
  app.add_option("--gpu-memory", gpu_memory,
                 "Device memory each GPU may hold for resident proving keys, tables and "
                 "scratch (512M, 40G), or one size per GPU of --gpus (40G,20G); least "
                 "recently used keys are evicted beyond it, and a key a GPU cannot hold "
                 "is proved by the others. Default: 90% of the memory free on the device "
                 "at start")
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {
            for (size_t at = 0;;) {  // every comma-separated item, empty ones too
              size_t comma = s.find(',', at);
              if (!memory::parse_size(s.substr(at, comma - at)))
                return "expected a size (40G) or one per GPU (40G,20G), got " + s;
              if (comma == std::string::npos) return std::string();
              at = comma + 1;
            }
          },
          "SIZE[,SIZE...]", "sizes"));
  app.add_option("--gpu-lanes", gpu_lanes,
                 "GPU-worker lanes per GPU: partitions in the GPU at once. 2 (default) "
                 "uploads one partition while the other computes; 1 serializes them")
      ->check(CLI::Range(1u, 8u))
      ->capture_default_str();
}

void add_config_option(CLI::App& app) {
  app.add_option("--config", "Read options from FILE, a JSON object keyed by long option "
                             "names without \"--\" ({\"listen\": \"127.0.0.1:7470\", "
                             "\"allow-root\": [\"/data\"], \"no-verify\": true}); options "
                             "on the command line win over the file, the file over the defaults")
      ->type_name("FILE");
}

void add_log_format_option(CLI::App& app, std::string& format) {
  app.add_option("--log-format", format,
                 "Log lines on stderr as text, or json: one object a line with an ISO 8601 "
                 "time (UTC), level and message, for journald and log collectors; the errors "
                 "that end the process too. stdout keeps the command's result")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
}

namespace {

/// A --config file: an object of options, each a scalar or an array of
/// them; 1 MiB and 65,536 values are far more than every option takes.
constexpr zk::formats::json_limits config_limits{uint64_t(1) << 20, zk::formats::max_json_depth,
                                                 65536};

/// The arguments that `--config FILE` of subcommand `sub` stands for: each
/// key of the file not already on the command line (`given`), as its long
/// option and value(s). Throws std::runtime_error naming the file and key.
std::vector<std::string> config_arguments(const CLI::App& sub, const std::string& file,
                                          const std::vector<std::string>& given,
                                          std::vector<std::string>& keys_used) {
  std::string text;
  try {
    text = zk::formats::read_whole_file(file, config_limits.max_bytes);
  } catch (const zk::formats::format_error& e) {
    throw std::runtime_error(e.what());
  }
  nlohmann::json j;
  try {
    j = zk::formats::parse_json_limited<nlohmann::json>(text, config_limits);
  } catch (const zk::formats::json_limit_error& e) {
    throw std::runtime_error(file + ": " + e.what());
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(file + ": not valid JSON (" + e.what() + ")");
  }
  if (!j.is_object()) throw std::runtime_error(file + ": expected a JSON object of options");
  auto on_command_line = [&](const std::string& flag) {
    for (const auto& a : given)
      if (a == flag || a.rfind(flag + "=", 0) == 0) return true;
    return false;
  };
  std::vector<std::string> args;
  for (const auto& item : j.items()) {
    // Named variables, not a structured binding: the lambda below captures
    // `key`, which C++17 allows only for variables (clang rejects it).
    const std::string& key = item.key();
    const nlohmann::json& value = item.value();
    const std::string flag = "--" + key;
    const CLI::Option* opt = key == "config" ? nullptr : sub.get_option_no_throw(flag);
    if (!opt)
      throw std::runtime_error(file + ": key \"" + key + "\": `" + sub.get_name() +
                               "` has no option " + flag);
    if (on_command_line(flag)) continue;  // the command line wins
    keys_used.push_back(key);
    auto scalar = [&](const nlohmann::json& v) -> std::string {
      if (v.is_string()) return v.get<std::string>();
      if (v.is_number()) return v.dump();
      throw std::runtime_error(file + ": key \"" + key + "\": expected a string or a number");
    };
    if (opt->get_expected_max() == 0) {  // a flag
      if (!value.is_boolean())
        throw std::runtime_error(file + ": key \"" + key + "\": expected true or false");
      if (value.get<bool>()) args.push_back(flag);
    } else if (value.is_array()) {
      if (opt->get_items_expected_max() <= 1)
        throw std::runtime_error(file + ": key \"" + key + "\": " + flag +
                                 " takes one value; expected a string or a number, not a list");
      for (const auto& v : value) {
        args.push_back(flag);
        args.push_back(scalar(v));
      }
    } else {
      args.push_back(flag);
      args.push_back(scalar(value));
    }
  }
  return args;
}

/// Long option names `app` takes ("--backend"), its subcommands' not included.
std::vector<std::string> long_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* o : app.get_options())
    for (const auto& n : o->get_lnames()) names.push_back("--" + n);
  return names;
}

/// "did you mean ...?" lines for the words of `args` that name no option of
/// the subcommand they follow (or no subcommand), where a known name is
/// near: a typo of a flag or command is then one look, not a --help.
std::string suggestions(const CLI::App& root, const std::vector<CLI::App*>& subs,
                        const std::vector<std::string>& args) {
  const CLI::App* sub = nullptr;
  std::vector<std::string> sub_names;
  for (const CLI::App* s : subs) sub_names.push_back(s->get_name());
  std::string out;
  for (const auto& a : args) {
    if (a == "--") break;
    if (!sub) {
      for (const CLI::App* s : subs)
        if (s->get_name() == a) sub = s;
      if (sub) continue;
      if (!a.empty() && a[0] != '-') {
        if (auto near = base::nearest(a, sub_names); !near.empty())
          out += "proofline: there is no command " + a + "; did you mean " + near + "?\n";
        break;
      }
    }
    if (a.rfind("--", 0) != 0 || a.size() == 2) continue;
    const std::string name = a.substr(0, a.find('='));
    std::vector<std::string> known = long_names(root);
    if (sub)
      for (auto& n : long_names(*sub)) known.push_back(std::move(n));
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    if (auto near = base::nearest(name, known); !near.empty())
      out += "proofline" + (sub ? " " + sub->get_name() : std::string()) + ": there is no option " +
             name + "; did you mean " + near + "?\n";
  }
  return out;
}

}  // namespace

void add_metrics_options(CLI::App& app, std::string& metrics, bool& metrics_public) {
  app.add_option("--metrics", metrics,
                 "Serve Prometheus metrics at http://ADDR:PORT/metrics while running: "
                 "partitions by status, proof durations, queue depths, GPU busy, memory. "
                 "ADDR:PORT, or PORT alone for 127.0.0.1; port 0 picks a free one (logged)")
      ->type_name("ADDR:PORT");
  app.add_flag("--metrics-public", metrics_public,
               "Allow --metrics on an address other than loopback (the endpoint has no "
               "authentication)");
}

std::string version_text() { return std::string("proofline ") + PROOFLINE_VERSION; }

cli::cli() : root_(std::make_unique<CLI::App>(overview, "proofline")) {
  root_->set_version_flag("--version", version_text(), "Print the version and exit");
  root_->require_subcommand(1);
  root_->footer(main_footer);
  root_->get_formatter()->column_width(34);
}

cli::~cli() = default;

CLI::App& cli::add(const std::string& name, const std::string& summary, runner run) {
  CLI::App* sub = root_->add_subcommand(name, summary);
  commands_.emplace_back(sub, std::move(run));
  return *sub;
}

void cli::set_version(std::function<std::string()> text) { version_ = std::move(text); }

std::optional<int> cli::parse(int argc, const char* const* argv, std::ostream& out,
                              std::ostream& err) {
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--") break;
    if (a == "--version") {
      std::string text = version_ ? version_() : version_text();
      out << text << (text.empty() || text.back() != '\n' ? "\n" : "");
      return exit_ok;
    }
  }
  // --config FILE of the chosen subcommand: its options join the command line.
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string config_file;
  std::vector<std::string> config_keys;  // the keys of config_file given to CLI11
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string file;
    if (args[i] == "--config" && i + 1 < args.size())
      file = args[i + 1];
    else if (args[i].rfind("--config=", 0) == 0)
      file = args[i].substr(9);
    else
      continue;
    CLI::App* sub = nullptr;
    std::size_t at = 0;
    for (std::size_t k = 0; k < i && !sub; ++k)
      for (auto& [s, run] : commands_)
        if (s->get_name() == args[k]) {
          sub = s;
          at = k;
        }
    if (!sub) break;  // CLI11 reports --config where no subcommand takes it
    try {
      auto extra = config_arguments(*sub, file, args, config_keys);
      args.insert(args.begin() + static_cast<std::ptrdiff_t>(at + 1), extra.begin(), extra.end());
      config_file = file;
    } catch (const std::exception& e) {
      err << "proofline " << sub->get_name() << ": --config " << e.what() << "\n";
      return exit_usage;
    }
    break;
  }
  std::vector<const char*> full{argv[0]};
  for (const auto& a : args) full.push_back(a.c_str());
  try {
    root_->parse(static_cast<int>(full.size()), full.data());
  } catch (const CLI::ParseError& e) {
    // A value from the config file that CLI11 refused ("--synthesizers:
    // Value two not in range ..."): named by the file and its key.
    const std::string what = e.what();
    for (const auto& key : config_keys)
      if (what.rfind("--" + key + ":", 0) == 0 || what.find(" --" + key + ":") != std::string::npos) {
        std::string sub_name;
        for (auto& [s, run] : commands_)
          if (s->parsed()) sub_name = " " + s->get_name();
        err << "proofline" << sub_name << ": --config " << config_file << ": key \"" << key
            << "\": " << what << "\n";
        return exit_usage;
      }
    int code = root_->exit(e, out, err);
    if (code != 0) {
      std::vector<CLI::App*> subs;
      for (auto& [sub, run] : commands_) subs.push_back(sub);
      err << suggestions(*root_, subs, args);
    }
    if (code != 0 && !config_file.empty())
      err << "(the options of --config " << config_file
          << " were read as if given on the command line)\n";
    return code == 0 ? exit_ok : exit_usage;
  }
  return std::nullopt;
}

int cli::run(std::ostream& out, std::ostream& err) {
  for (auto& [sub, run] : commands_)
    if (sub->parsed()) return run ? run(out, err) : exit_ok;
  err << "proofline: no subcommand given\n";
  return exit_usage;
}

void add_prover_options(CLI::App& app, runtime_options& o) {
  app.add_option("--backend", o.backend,
                 "Prover backend: auto (CUDA when a GPU is visible, else CPU), cpu, or cuda "
                 "(GPU workers on every device of --gpus; exit 2 if there is none)")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  add_gpu_options(app, o.gpus, o.gpu_memory, o.gpu_lanes);
  app.add_option("--cpu-threads", o.cpu_threads,
                 "Threads of the CPU backend and of key loading; 0 = every hardware thread")
      ->check(CLI::Range(0u, 4096u))
      ->capture_default_str();
  // The size text becomes bytes before CLI11 converts it (--config values too).
  app.add_option("--memory-budget", o.memory_budget, budget_help())
      ->transform(CLI::Validator(
          [](std::string& s) -> std::string {
            auto bytes = memory::parse_size(s);
            if (!bytes) return "expected a size in bytes or with a unit (512M, 8G, 1.5T), got " + s;
            s = std::to_string(*bytes);
            return std::string();
          },
          "", "size"))
      ->type_name("SIZE");
  app.add_flag("--no-verify", o.no_verify,
               "Write proofs without checking each by pairing first (the check costs a few "
               "ms per proof on one finalizer core; a proof that fails it is proved again)");
  app.add_option("--log-level", o.log_level,
                 "Log level on stderr: trace, debug, info, warn, error, off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}))
      ->capture_default_str();
}

void add_runtime_options(CLI::App& app, runtime_options& o) {
  add_prover_options(app, o);
  app.add_option("--synthesizers", o.synthesizers,
                 "Synthesizer actors (witness reading and a, b, c), one thread each. 0 "
                 "(default): with CUDA every core but the finalizers' and one (at least 2), "
                 "since synthesis takes ~10 times a partition's GPU time; with the CPU "
                 "backend 2")
      ->check(CLI::Range(0u, 256u))
      ->capture_default_str();
  app.add_option("--finalizers", o.finalizers,
                 "Finalizer actors (proof assembly, output files), one thread each")
      ->check(CLI::Range(1u, 256u))
      ->capture_default_str();
  app.add_option("--synthesis-ahead", o.synthesis_ahead,
                 "Partitions granted memory but not yet being proved, at most (in synthesis, "
                 "ready, or in a GPU worker's look-ahead). Default: two per GPU "
                 "worker, widening by one each time a GPU worker runs dry, up to "
                 "synthesizers + GPU workers; the few partitions in synthesis share the idle "
                 "synthesizers' threads, so the first proofs start sooner (with "
                 "--synthesis-model lc, which synthesizes on one thread: synthesizers + GPU "
                 "workers from the start). A smaller number "
                 "holds memory and lets a later high-priority job overtake sooner, at the cost "
                 "of GPU idle time when synthesis is slower than proving.")
      ->check(CLI::Range(1u, 1024u));
  app.add_option("--synthesis-ahead-max", o.synthesis_ahead_max,
                 "Let --synthesis-ahead widen by one, up to this many, each time a GPU worker "
                 "runs dry while it held synthesis back. Few partitions in synthesis share the "
                 "idle synthesizers' threads, so the first ones reach the GPU sooner.")
      ->check(CLI::Range(1u, 1024u));
  app.add_option("--synthesis-model", o.synthesis_model,
                 "How synthesis allocates: plain, or lc (the same a, b, c on one thread, "
                 "allocating linear combinations and doubling vectors like a bellperson-style "
                 "prover; for benchmarks), or lc-keep (lc, with one row's combinations in 16 "
                 "freed only at the end)")
      ->check(CLI::IsMember({"plain", "lc", "lc-keep"}))
      ->capture_default_str();
  add_log_format_option(app, o.log_format);
  add_config_option(app);
  add_metrics_options(app, o.metrics, o.metrics_public);
}

void add_run_command(cli& c, run_options& opts, cli::runner run_fn) {
  // Strings first: the parsed values move into opts just before running.
  auto raw = std::make_shared<std::array<std::string, 2>>();  // job file, out root
  CLI::App* run = &c.add("run", "Prove every job of a job file (default: the bundled example)",
                         [run_fn](std::ostream& out, std::ostream& err) {
                           return run_fn ? run_fn(out, err) : exit_ok;
                         });
  run->footer(run_footer);

  std::string& job_file = (*raw)[0];
  std::string& out_root = (*raw)[1];
  run->add_option("JOBFILE", job_file, "Job file (JSON, see below); default: the bundled example");
  run->add_option("--out-root", out_root,
                  "Directory that relative \"out\" paths resolve against (default: the job "
                  "file's directory; ./proofline-out without JOBFILE)")
      ->type_name("DIR");
  add_runtime_options(*run, opts);
  run->add_flag("--pinned-pool", opts.pinned_pool,
                "Upload partitions from a pool of pinned host memory (DMA speed). Off by "
                "default: pinning the pool runs while the first key uploads and slows that "
                "upload more than the pool saves (docs/BENCHMARKS.md)");
  run->add_flag("--resident-pool", opts.resident_pool,
                "Read witnesses into a pool of ordinary memory that stays resident between "
                "partitions (not pinned: nothing to pin at start, uploads staged as without a "
                "pool), so a partition does not fault in fresh pages; sized, as the pinned pool, "
                "for the first job's partitions, and counted in the memory budget")
      ->excludes("--pinned-pool");
  run->add_flag("--keep-witness", opts.keep_witness,
                "Jobs with a witness_generator also write each witness they compute "
                "(<out>/witness.wtns, or witness_<i>.wtns); by default none is written");
  run->add_option("--max-partitions", opts.max_partitions,
                  "The most partitions (witnesses over all jobs) the job file may name; a "
                  "larger file is refused before any job is built")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 32))
      ->capture_default_str();
  run->add_flag("--quiet,-q", opts.quiet,
                "No summary on stdout, no progress line, and only errors in the log (unless "
                "--log-level is given)");
  // Observability: reports, trace and metrics (docs/OBSERVABILITY.md).
  run->add_option("--report", opts.report_file,
                  "Write the run report (JSON: proofs/s, GPU busy fraction, hand-off gaps, "
                  "memory, purges, queue depths over time) to FILE")
      ->type_name("FILE");
  run->add_option("--trace", opts.trace_file,
                  "Write a Chrome trace-event file (open it in Perfetto or chrome://tracing): "
                  "one lane per synthesizer, GPU-worker lane, finalizer, and the memory "
                  "manager's purges")
      ->type_name("FILE");
  run->add_option("--html", opts.html_file,
                  "Write a self-contained HTML page with the summary, the lanes and each "
                  "GPU's utilization over time")
      ->type_name("FILE");
  run->add_flag("--json", opts.json,
                "Print the run report (JSON) on stdout instead of the summary table; no "
                "progress line");
  // Runs after a successful parse of `run`: the raw strings become options.
  run->parse_complete_callback([&opts, raw, run] {
    if (!(*raw)[0].empty()) opts.job_file = (*raw)[0];
    if (!(*raw)[1].empty()) opts.out_root = (*raw)[1];
    opts.log_level_given = run->count("--log-level") > 0;
  });
}

std::optional<int> parse_command_line(int argc, const char* const* argv, run_options& opts,
                                      std::ostream& out, std::ostream& err) {
  cli c;
  add_run_command(c, opts, nullptr);
  return c.parse(argc, argv, out, err);
}

}  // namespace proofline::app
