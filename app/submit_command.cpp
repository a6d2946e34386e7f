#include "app/submit_command.hpp"

#include <csignal>
#include <filesystem>
#include <istream>
#include <iterator>
#include <memory>
#include <optional>
#include <ostream>
#include <set>

#include <CLI/CLI.hpp>
#include <iostream>

#include "app/client_command.hpp"
#include "jobs/job_file.hpp"
#include "observe/summary.hpp"
#include "memory/size.hpp"
#include "zk/formats/whole_file.hpp"
#include "base/text.hpp"

namespace proofline::app {

using jobs::parse_job_file;

using observe::print_summary;

namespace {

namespace fs = std::filesystem;

const char* const submit_footer = R"(The server reads the job file's paths (relative ones against the job file's
directory, which the client sends as an absolute path) and writes the outputs;
every path must lie under one of the server's --allow-root directories. In a
cluster the paths must be on storage every node sees; --inline sends the
witness files' bytes with the jobs instead (up to 1 GiB in all; proving keys
always come from shared storage). Job ids must differ from those of the
server's live jobs.

JOBFILE `-` reads the job file from standard input; its relative paths then
resolve against the current directory.

The jobs go on at the server if this client stops or loses the connection;
`proofline await JOB` waits for one again, `proofline cancel JOB` stops one.
Ctrl-C (SIGINT) or SIGTERM ends `submit` at once and says so on stderr, naming
the jobs and these commands.

Progress: a line per finished partition, and "[3/8 proofs, ETA 4.1 s] JOB 2/4
..." whenever more are finished (the ETA from the rate of partitions finished
since the first); on a terminal, that line is redrawn in place instead. --json
prints one JSON document on stdout instead of progress and summary:
{"server": HOST:PORT, "jobs": [{"id", "seq", "status", "result"}]}, status
and result (in result.json's shape) null with --no-wait.

EXIT CODES: 0 every job done (or, with --no-wait, accepted); 1 a job failed or
was cancelled, or the server could not be reached within --connect-timeout or
was lost; 2 a bad option, an invalid job file, or a submission the server
refused (the message says why); 130 (SIGINT) or 143 (SIGTERM) interrupted,
the jobs going on at the server.)";

/// Standard input, at most max_text_file_bytes of it (as a job file read
/// from disk). Throws naming `shown`.
std::string read_stdin(std::istream& in, const std::string& shown) {
  std::string text;
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof buf);
    text.append(buf, static_cast<std::size_t>(in.gcount()));
    if (text.size() > net::max_text_file_bytes)
      throw std::runtime_error(shown + ": more than " +
                               memory::format_bytes(net::max_text_file_bytes) +
                               ", more than a job file may hold; not read further");
  }
  if (in.bad()) throw std::runtime_error(shown + ": cannot be read");
  return text;
}

}  // namespace

void add_submit_command(cli& c) {
  auto opts = std::make_shared<submit_options>();
  CLI::App& s = c.add("submit", "Submit a job file to a running `proofline serve` and wait",
                      [opts](std::ostream& out, std::ostream& err) {
                        return submit_command(*opts, std::cin, out, err);
                      });
  s.footer(submit_footer);
  s.add_option("JOBFILE", opts->job_file,
               "Job file (JSON, as for run); - reads it from standard input, relative paths "
               "then resolving against the current directory")
      ->required();
  net::add_client_options(s, opts->client);
  s.add_flag("--no-wait", opts->no_wait, "Print the accepted job ids and return at once");
  s.add_flag("--inline", opts->inline_witnesses,
             "Send the witness files' bytes with the jobs (no shared storage for witnesses)");
  s.add_flag("--quiet,-q", opts->quiet, "No progress lines and no summary");
  s.add_flag("--json", opts->json,
             "Print one JSON document on stdout (the accepted jobs, and each one's status and "
             "result.json once done), no progress lines");
}

int submit_command(const submit_options& o, std::istream& in, std::ostream& out,
                   std::ostream& err) {
  // 1. The job file, checked here first (the server checks it again). Read
  //    from standard input, it stands in the current directory: the server
  //    resolves its relative paths against the directory of the name sent.
  const bool from_stdin = o.job_file == "-";
  const std::string shown = from_stdin ? "- (standard input)" : o.job_file;
  job_submission sub;
  std::vector<job_spec> specs;
  try {
    fs::path abs = from_stdin ? fs::current_path() / "(standard input)"
                              : fs::absolute(o.job_file).lexically_normal();
    sub.name = abs.string();
    sub.text = from_stdin ? read_stdin(in, shown) : net::read_text(o.job_file);
    std::string base = abs.parent_path().string();
    specs = parse_job_file(sub.text, shown, base, base);
  } catch (const std::exception& e) {
    err << "proofline submit: " << e.what() << "\n";
    return exit_usage;
  }
  if (o.inline_witnesses) {
    sub.inline_witnesses = true;
    std::set<std::string> paths;
    for (const auto& s : specs) paths.insert(s.witnesses.begin(), s.witnesses.end());
    // Every size first, so that witnesses over the cap are refused before
    // any is read; each is then read within what is left of the cap (a file
    // that grew meanwhile is refused by its size too).
    uint64_t total = 0;
    for (const auto& p : paths) {
      std::error_code ec;
      if (!fs::is_regular_file(p, ec)) continue;  // the read below says what it is
      const uint64_t size = fs::file_size(p, ec);
      if (ec) continue;
      total += size;
      if (total > max_inline_bytes) {
        err << "proofline submit: --inline: " << p << ": " << size << " bytes bring the witnesses to "
            << total << " bytes, more than the " << memory::format_bytes(max_inline_bytes)
            << " one submission may carry; put them on shared storage instead\n";
        return exit_usage;
      }
    }
    uint64_t read = 0;
    for (const auto& p : paths) {
      try {
        sub.witnesses.push_back({p, zk::formats::read_whole_file_bytes(p, max_inline_bytes - read)});
      } catch (const std::exception& e) {
        err << "proofline submit: --inline: " << e.what() << "\n";
        return exit_usage;
      }
      read += sub.witnesses.back().bytes.size();
    }
  }

  // 2. Connect and submit. A signal from here on ends the client at once,
  //    saying what the server may have or has of the jobs.
  net::client_session session(o.client);
  if (auto code = session.open("submit", err)) return *code;
  std::optional<client_interrupt> interrupt;
  interrupt.emplace(out, err);
  interrupt->say([where = session.where(), client = o.client](int signo) {
    return std::string("proofline submit: ") +
           (signo == SIGTERM ? "terminated (SIGTERM)" : "interrupted (SIGINT)") +
           " before " + where + " answered; it may have accepted the jobs: `proofline status" +
           (client.connect != net::default_endpoint ? " --connect " + client.connect : "") +
           (client.tls.insecure ? " --insecure" : "") + "` lists them";
  });
  std::string error;
  auto accepted = session.call<std::vector<submitted_job>>(error, submit_atom::value, sub);
  if (!accepted) {
    err << "proofline submit: " << session.where() << " refused " << shown << ": " << error
        << "\n";
    return error.rfind("lost the connection", 0) == 0 ? exit_failed : exit_usage;
  }
  std::vector<std::string> ids;
  for (const auto& j : *accepted) ids.push_back(j.id);
  interrupt->say([ids, client = o.client](int signo) {
    return jobs_go_on_message("submit", signo, ids, client);
  });
  if (o.no_wait) {
    if (o.json)
      out << jobs_json(session.where(), *accepted, nullptr) << "\n";
    else
      for (const auto& j : *accepted) out << base::escape_controls(j.id) << "\n";
    return exit_ok;
  }

  // 3. Progress, then the summary (or the JSON document).
  auto started = std::chrono::steady_clock::now();
  std::ostream null_out(nullptr);
  const bool lines = !o.quiet && !o.json;
  auto reports = session.wait(*accepted, lines ? out : null_out, lines && net::is_tty(out), error);
  // The jobs are complete (or the server lost): a signal from here on ends
  // the client the default way, with nothing at the server to speak of.
  interrupt.reset();
  if (!reports) {
    err << "proofline submit: " << error << "\n";
    return exit_failed;
  }
  double wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  bool all_done = true;
  for (const auto& r : *reports) all_done &= r.state == job_state::done;
  if (o.json) {
    out << jobs_json(session.where(), *accepted, &*reports) << "\n";
  } else if (!o.quiet) {
    out << "\n";
    print_summary(out, *reports, wall_ms);
  }
  return all_done ? exit_ok : exit_failed;
}

}  // namespace proofline::app
