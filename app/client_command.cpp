#include "app/client_command.hpp"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <ostream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <fmt/format.h>

#include "actors/detail/result_file.hpp"
#include "observe/summary.hpp"
#include "memory/size.hpp"
#include "base/text.hpp"

namespace proofline::app {

using observe::print_summary;

namespace {

using json = nlohmann::ordered_json;

const char* const client_footer =
    "EXIT CODES: 0 success; 1 the job named (status JOB, cancel, await) failed, was cancelled "
    "or is unknown, or the server could not be reached within --connect-timeout or was lost; "
    "2 a bad option. `status` without JOB exits 0 whatever its jobs' states.";

const char* const await_footer =
    R"(Ctrl-C (SIGINT) or SIGTERM ends `await` at once and leaves the job running at
the server; the message on stderr says how to wait for it again or cancel it.

--json prints one JSON document on stdout once the job completes, and no
progress lines: {"server": HOST:PORT, "jobs": [{"id", "seq", "status",
"result"}]}, result in result.json's shape.

EXIT CODES: 0 the job is done; 1 it failed, was cancelled or is unknown, or the
server could not be reached within --connect-timeout or was lost; 2 a bad
option; 130 (SIGINT) or 143 (SIGTERM) interrupted, the job going on.)";

/// The newest job with this id, if the server knows one.
std::optional<job_status> find_job(const std::vector<job_status>& jobs, const std::string& id) {
  for (auto it = jobs.rbegin(); it != jobs.rend(); ++it)
    if (it->id == id) return *it;
  return std::nullopt;
}

/// The errors of failed jobs, by sequence number.
using job_errors = std::map<uint64_t, file_error>;

json status_json(const job_status& s, const job_errors& errors) {
  json j{{"id", s.id},     {"seq", s.seq},       {"status", to_string(s.state)},
         {"done", s.done}, {"failed", s.failed}, {"total", s.total}};
  auto e = errors.find(s.seq);
  j["error"] = e == errors.end() ? json(nullptr)
                                 : json{{"file", e->second.file}, {"message", e->second.message}};
  return j;
}

void print_status_table(std::ostream& out, const std::vector<job_status>& jobs,
                        const job_errors& errors) {
  std::size_t w = 3;
  // Ids and errors may hold what a client chose: control characters are
  // escaped so a row stays one line and drives no terminal.
  for (const auto& j : jobs) w = std::max(w, base::escape_controls(j.id).size());
  auto cells = [&](const std::string& id, const char* state, const std::string& done,
                   const std::string& failed, const std::string& total, const std::string& error) {
    out << id << std::string(w - id.size(), ' ')
        << fmt::format("  {:<12} {:>6} {:>6} {:>6}", state, done, failed, total);
    if (!error.empty()) out << "  " << error;
    out << "\n";
  };
  cells("job", "status", "done", "failed", "total", errors.empty() ? "" : "error");
  for (const auto& j : jobs) {
    auto e = errors.find(j.seq);
    cells(base::escape_controls(j.id), to_string(j.state), std::to_string(j.done),
          std::to_string(j.failed), std::to_string(j.total),
          e == errors.end() ? "" : base::escape_controls(e->second.message));
  }
}

/// The errors of the failed jobs among `jobs`, from their reports (one
/// progress poll that does not wait). Empty if the poll fails: the table
/// still shows the states.
job_errors failed_job_errors(net::client_session& session, const std::vector<job_status>& jobs) {
  std::vector<watch_cursor> cursors;
  for (const auto& j : jobs)
    if (j.state == job_state::failed) cursors.push_back({j.seq, j.total});
  job_errors errors;
  if (cursors.empty()) return errors;
  std::string error;
  auto progress =
      session.call<std::vector<job_progress>>(error, watch_atom::value, cursors, uint32_t{0});
  if (!progress) return errors;
  for (const auto& p : *progress)
    if (p.complete && p.report.has_error) errors[p.status.seq] = p.report.error;
  return errors;
}

json metrics_json(const cluster_metrics& m) {
  json nodes = json::array();
  for (const auto& n : m.nodes)
    nodes.push_back(json{{"id", n.id},
                         {"name", n.info.name},
                         {"backends", n.info.backends},
                         {"memory_budget", n.info.memory_budget},
                         {"slots", n.info.slots},
                         {"credit", n.credit},
                         {"leased", n.leased},
                         {"proved", n.proved},
                         {"failed", n.failed},
                         {"requeued", n.requeued},
                         {"bad_proofs", n.bad_proofs},
                         {"out_of_service", n.out_of_service}});
  json keys = json::array();
  for (const auto& k : m.keys)
    keys.push_back(json{{"path", k.path},
                        {"bytes", k.bytes},
                        {"users", k.users},
                        {"last_use_ms", k.last_use_ms},
                        {"idle_ms", k.idle_ms}});
  const auto& mem = m.memory;
  return json{{"server", m.name},
              {"jobs", {{"live", m.jobs_live},
                        {"done", m.jobs_done},
                        {"failed", m.jobs_failed},
                        {"cancelled", m.jobs_cancelled}}},
              {"partitions", {{"done", m.partitions_done}, {"failed", m.partitions_failed}}},
              {"memory", {{"budget", mem.budget},
                          {"reserved", mem.reserved},
                          {"peak_reserved", mem.peak_reserved},
                          {"queued", mem.queued},
                          {"reservations", mem.reservations},
                          {"grants", mem.grants},
                          {"cancelled", mem.cancelled},
                          {"keys", mem.keys},
                          {"pool", mem.pool},
                          {"fixed", mem.fixed},
                          {"rss", mem.rss}}},
              {"keys", keys},
              {"nodes", nodes}};
}

void print_metrics(std::ostream& out, const cluster_metrics& m) {
  const auto& mem = m.memory;
  out << "server " << m.name << "\n"
      << "jobs: " << m.jobs_live << " live, " << m.jobs_done << " done, " << m.jobs_failed
      << " failed, " << m.jobs_cancelled << " cancelled; partitions: " << m.partitions_done
      << " done, " << m.partitions_failed << " failed\n"
      << "memory: " << memory::format_bytes(mem.reserved) << " reserved of "
      << memory::format_bytes(mem.budget) << " (peak " << memory::format_bytes(mem.peak_reserved)
      << "), " << mem.reservations << " reservation(s), " << mem.queued
      << " partition(s) queued, " << mem.grants << " granted, " << mem.cancelled
      << " dropped by cancel\n";
  if (m.keys.empty()) out << "warm keys: none\n";
  for (const auto& k : m.keys) {
    out << "warm key " << k.path << ": " << memory::format_bytes(k.bytes) << ", ";
    if (k.users)
      out << "in use by " << k.users << " job(s)\n";
    else
      out << "idle for " << fmt::format("{:.1f}", k.idle_ms / 1000.0) << " s\n";
  }
  if (m.nodes.empty()) {
    out << "nodes: none\n";
    return;
  }
  out << "nodes:\n";
  for (const auto& n : m.nodes) {
    out << "  " << n.id << " " << base::escape_controls(n.info.name) << ": " << n.info.slots << " slot(s), "
        << n.leased << " leased, " << n.proved << " proved, " << n.failed << " failed, "
        << n.requeued << " taken back, " << n.bad_proofs << " bad proof(s)"
        << (n.out_of_service ? " (out of service)" : "") << "; "
        << memory::format_bytes(n.info.memory_budget);
    for (const auto& b : n.info.backends) out << "; " << b;
    out << "\n";
  }
}

using runner = int (*)(const client_command_options&, std::ostream&, std::ostream&);

CLI::App& add_one(cli& c, const char* name, const char* summary, runner run,
                  std::shared_ptr<client_command_options> opts) {
  CLI::App& s = c.add(name, summary, [opts, run](std::ostream& out, std::ostream& err) {
    return run(*opts, out, err);
  });
  s.footer(client_footer);
  net::add_client_options(s, opts->client);
  return s;
}

/// The options a command printed for the user needs to reach the same server.
std::string connect_args(const net::client_options& o) {
  std::string args;
  if (o.connect != net::default_endpoint) args += " --connect " + o.connect;
  if (o.tls.insecure) args += " --insecure";
  return args;
}

}  // namespace

client_interrupt::client_interrupt(std::ostream& out, std::ostream& err) {
  const bool tty = net::is_tty(out);
  watch_.start([this, &out, &err, tty](int signo) {
    message_fn message_of;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      message_of = message_;
    }
    const std::string message = message_of ? message_of(signo) : std::string();
    // The main thread may be writing the progress line: std::cout is
    // synchronized with stdio, so the two only interleave characters, and
    // the line is erased before the message.
    if (tty) out << "\r\x1b[K" << std::flush;
    if (!message.empty()) err << message << "\n";
    err.flush();
    std::fflush(nullptr);
    std::_Exit(base::exit_signal(signo));
  });
}

void client_interrupt::say(message_fn message) {
  std::lock_guard<std::mutex> lock(mutex_);
  message_ = std::move(message);
}

std::string jobs_go_on_message(const char* cmd, int signo, const std::vector<std::string>& ids,
                               const net::client_options& o) {
  const std::string args = connect_args(o);
  std::string m = std::string("proofline ") + cmd + ": " +
                  (signo == SIGTERM ? "terminated (SIGTERM)" : "interrupted (SIGINT)") + "; ";
  if (ids.size() == 1) {
    const std::string id = base::escape_controls(ids.front());
    return m + "job " + id + " goes on at the server: `proofline await " + id + args +
           "` waits for it again, `proofline cancel " + id + args + "` stops it";
  }
  m += "the jobs go on at the server: `proofline await ID" + args +
       "` waits for one again, `proofline cancel ID" + args + "` stops one (ids:";
  for (const auto& id : ids) m += " " + base::escape_controls(id);
  return m + ")";
}

std::string jobs_json(const std::string& server, const std::vector<submitted_job>& jobs,
                      const std::vector<job_report>* reports) {
  json arr = json::array();
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    json j{{"id", jobs[i].id}, {"seq", jobs[i].seq}, {"status", nullptr}, {"result", nullptr}};
    if (reports && i < reports->size()) {
      const auto& r = (*reports)[i];
      j["status"] = to_string(r.state);
      j["result"] = json::parse(result_json(r));
    }
    arr.push_back(std::move(j));
  }
  return json{{"server", server}, {"jobs", std::move(arr)}}.dump(2);
}

void add_client_commands(cli& c) {
  auto status = std::make_shared<client_command_options>();
  auto& s = add_one(c, "status", "Jobs of a running `proofline serve` and where they stand",
                    status_command, status);
  s.add_option("JOB", status->job, "Only this job (the newest with this id)");
  s.add_flag("--json", status->client.json, "Print JSON: [{id, seq, status, done, failed, total, error}]; error is null or "
             "{file, message}");

  auto cancel = std::make_shared<client_command_options>();
  add_one(c, "cancel",
          "Cancel a live job of a running `proofline serve` (result.json: \"cancelled\")",
          cancel_command, cancel)
      .add_option("JOB", cancel->job, "The job's id")
      ->required();

  auto await = std::make_shared<client_command_options>();
  auto& a = add_one(c, "await",
                    "Wait for a job of a running `proofline serve`, then print its summary",
                    await_command, await);
  a.footer(await_footer);
  a.add_option("JOB", await->job, "The job's id")->required();
  a.add_flag("--json", await->client.json,
             "Print one JSON document once the job completes (its status and result.json), "
             "no progress lines");

  auto metrics = std::make_shared<client_command_options>();
  add_one(c, "metrics", "Memory, jobs and cluster nodes of a running `proofline serve`",
          metrics_command, metrics)
      .add_flag("--json", metrics->client.json, "Print JSON");
}

int status_command(const client_command_options& o, std::ostream& out, std::ostream& err) {
  net::client_session session(o.client);
  if (auto code = session.open("status", err)) return *code;
  std::string error;
  auto jobs = session.call<std::vector<job_status>>(error, status_atom::value);
  if (!jobs) {
    err << "proofline status: " << error << "\n";
    return exit_failed;
  }
  if (!o.job.empty()) {
    auto j = find_job(*jobs, o.job);
    if (!j) {
      err << "proofline status: no job \"" << o.job << "\" on " << session.where() << "\n";
      return exit_failed;
    }
    jobs = std::vector<job_status>{*j};
  }
  const auto errors = failed_job_errors(session, *jobs);
  if (o.client.json) {
    json arr = json::array();
    for (const auto& j : *jobs) arr.push_back(status_json(j, errors));
    out << arr.dump(2) << "\n";
  } else {
    print_status_table(out, *jobs, errors);
  }
  if (!o.job.empty()) {
    auto state = jobs->front().state;
    if (state == job_state::failed || state == job_state::cancelled) return exit_failed;
  }
  return exit_ok;
}

int cancel_command(const client_command_options& o, std::ostream& out, std::ostream& err) {
  net::client_session session(o.client);
  if (auto code = session.open("cancel", err)) return *code;
  std::string error;
  auto status = session.call<job_status>(error, cancel_atom::value, o.job);
  if (!status) {
    err << "proofline cancel: " << error << "\n";
    return exit_failed;
  }
  out << "job " << base::escape_controls(status->id) << " cancelled (" << status->done << " of " << status->total
      << " partition(s) were done)\n";
  return exit_ok;
}

int await_command(const client_command_options& o, std::ostream& out, std::ostream& err) {
  net::client_session session(o.client);
  if (auto code = session.open("await", err)) return *code;
  std::string error;
  auto jobs = session.call<std::vector<job_status>>(error, status_atom::value);
  if (!jobs) {
    err << "proofline await: " << error << "\n";
    return exit_failed;
  }
  auto j = find_job(*jobs, o.job);
  if (!j) {
    err << "proofline await: no job \"" << o.job << "\" on " << session.where() << "\n";
    return exit_failed;
  }
  // A signal from here on leaves the job running at the server, and says so.
  std::optional<client_interrupt> interrupt;
  interrupt.emplace(out, err);
  interrupt->say([id = j->id, client = o.client](int signo) {
    return jobs_go_on_message("await", signo, {id}, client);
  });
  const std::vector<submitted_job> awaited{{j->id, j->seq}};
  std::ostream null_out(nullptr);
  auto reports = session.wait(awaited, o.client.json ? null_out : out,
                              !o.client.json && net::is_tty(out), error);
  // The job is complete (or the server lost): a signal from here on ends
  // the client the default way.
  interrupt.reset();
  if (!reports) {
    err << "proofline await: " << error << "\n";
    return exit_failed;
  }
  const bool done = reports->front().state == job_state::done;
  if (o.client.json) {
    out << jobs_json(session.where(), awaited, &*reports) << "\n";
    return done ? exit_ok : exit_failed;
  }
  // The job's own time at the server (submission to completion), not this wait's.
  const auto& total = reports->front().total;
  double job_ms = total.recorded() && total.end >= total.start ? total.end - total.start : 0.0;
  out << "\n";
  print_summary(out, *reports, job_ms);
  return done ? exit_ok : exit_failed;
}

int metrics_command(const client_command_options& o, std::ostream& out, std::ostream& err) {
  net::client_session session(o.client);
  if (auto code = session.open("metrics", err)) return *code;
  std::string error;
  auto m = session.call<cluster_metrics>(error, metrics_atom::value);
  if (!m) {
    err << "proofline metrics: " << error << "\n";
    return exit_failed;
  }
  if (o.client.json)
    out << metrics_json(*m).dump(2) << "\n";
  else
    print_metrics(out, *m);
  return exit_ok;
}

}  // namespace proofline::app
