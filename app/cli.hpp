// The command line of `proofline`: subcommands, options, help text and exit
// codes (0 success, 1 a job failed, 2 usage error). CLI11 parses; its own
// exit codes are mapped onto these.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

namespace proofline::app {

/// Exit codes of `proofline`.
inline constexpr int exit_ok = 0;      ///< every job done (or help/version printed)
inline constexpr int exit_failed = 1;  ///< at least one job failed
inline constexpr int exit_usage = 2;   ///< bad command line, bad job file, backend unavailable

/// What `proofline run` was asked to do.
struct run_options {
  std::optional<std::string> job_file;  ///< none: the bundled example
  std::optional<std::string> out_root;  ///< relative `out` paths resolve here
  std::string backend = "auto";         ///< auto | cpu | cuda
  unsigned synthesizers = 2;
  unsigned finalizers = 2;
  unsigned cpu_threads = 0;      ///< 0: every hardware thread
  unsigned synthesis_ahead = 0;  ///< pacing; 0: adaptive (see runtime_config::pacing)
  uint64_t memory_budget = 0;    ///< bytes; 0: default_memory_budget()
  std::string log_level = "info";
  bool log_level_given = false;
  bool quiet = false;
};

/// Parses argv. Returns nullopt when the command should run, else the exit
/// code to return at once (help and version: 0, printed on `out`; usage
/// errors: 2, message on `err`).
std::optional<int> parse_command_line(int argc, const char* const* argv, run_options& opts,
                                      std::ostream& out, std::ostream& err);

/// The default memory budget: 70% of MemTotal (/proc/meminfo) minus 1 GiB
/// for proving keys and the runtime, and at least 256 MiB.
uint64_t default_memory_budget();

/// Physical memory in bytes from /proc/meminfo (0 if unreadable).
uint64_t physical_memory();

/// The version string, "proofline 0.1.0".
std::string version_text();

}  // namespace proofline::app
