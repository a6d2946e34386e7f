#include "net/net_client.hpp"

#include <caf/system_messages.hpp>

#include <unistd.h>

#include <iostream>
#include <map>
#include <ostream>

#include <CLI/CLI.hpp>

#include "base/text.hpp"

namespace proofline::net {

void add_client_options(CLI::App& app, client_options& o) {
  app.add_option("--connect", o.connect, "The server's HOST:PORT")
      ->type_name("HOST:PORT")
      ->capture_default_str();
  app.add_option("--connect-timeout", o.connect_timeout_s,
                 "Keep trying to connect (and to reach a server still starting) this many "
                 "seconds, then exit 1")
      ->check(CLI::Range(1u, 3600u))
      ->capture_default_str();
  add_tls_options(app, o.tls,
                  "Connect in plain text, without TLS (to a server started with --insecure)");
}

bool is_tty(const std::ostream& out) { return &out == &std::cout && isatty(STDOUT_FILENO); }

client_session::client_session(const client_options& o) : opts_(o) {}

client_session::~client_session() {
  self_.reset();
  sys_.reset();
}

std::optional<int> client_session::open(const char* cmd, std::ostream& err) {
  std::string why;
  auto ep = parse_endpoint(opts_.connect, why);
  if (!ep) {
    err << "proofline " << cmd << ": --connect: " << why << "\n";
    return base::exit_usage;
  }
  ep_ = *ep;
  std::string created;
  if (auto problem = resolve_tls(opts_.tls, /*create_missing=*/false, created,
                                 std::chrono::seconds(opts_.connect_timeout_s));
      !problem.empty()) {
    err << "proofline " << cmd << ": " << problem << "\n";
    return base::exit_usage;
  }
  configure_network(cfg_, opts_.tls, default_peer_timeout);
  sys_ = std::make_unique<caf::actor_system>(cfg_);
  control_ = connect_control(*sys_, ep_, opts_.tls.any(),
                             std::chrono::seconds(opts_.connect_timeout_s), why);
  if (!control_) {
    err << "proofline " << cmd << ": cannot connect to " << ep_.text() << " within "
        << opts_.connect_timeout_s << " s: " << why << "\n";
    return base::exit_failed;
  }
  self_ = std::make_unique<caf::scoped_actor>(*sys_);
  (*self_)->monitor(control_);
  return std::nullopt;
}

bool client_session::lost() {
  if (down_) return true;
  (*self_)->receive([&](caf::down_msg&) { down_ = true; },
                    caf::after(std::chrono::seconds(0)) >> [] {});
  return down_;
}

namespace {

/// What the client knows of one job it waits for.
struct watched_job {
  submitted_job job;
  uint32_t seen = 0;
  uint32_t total = 0;
  uint32_t done = 0;
  bool complete = false;
  job_report report;
};

void progress_line(std::ostream& out, const std::vector<watched_job>& jobs) {
  uint32_t done = 0, total = 0;
  std::string detail;
  for (const auto& j : jobs) {
    done += j.done;
    total += j.total;
    if (!j.complete)
      detail += " " + j.job.id + " " + std::to_string(j.done) + "/" + std::to_string(j.total);
  }
  std::string line = "[" + std::to_string(done) + "/" + std::to_string(total) + " proofs]" + detail;
  if (line.size() > 100) line = line.substr(0, 97) + "...";
  out << "\r" << line << "\x1b[K" << std::flush;
}

}  // namespace

std::optional<std::vector<job_report>> client_session::wait(const std::vector<submitted_job>& jobs,
                                                            std::ostream& out, bool tty,
                                                            std::string& error) {
  std::vector<watched_job> watched;
  std::map<uint64_t, size_t> by_seq;
  for (const auto& j : jobs) {
    by_seq[j.seq] = watched.size();
    watched_job w;
    w.job = j;
    watched.push_back(std::move(w));
  }
  int failures = 0;
  bool line_open = false;
  auto end_line = [&] {
    if (line_open) out << "\n";
    line_open = false;
  };
  for (;;) {
    std::vector<watch_cursor> cursors;
    for (const auto& w : watched)
      if (!w.complete) cursors.push_back({w.job.seq, w.seen});
    if (cursors.empty()) break;
    std::optional<std::vector<job_progress>> news;
    caf::error failure;
    (*self_)
        ->request(control_, std::chrono::milliseconds(watch_wait_ms) + watch_margin,
                  watch_atom::value, cursors, watch_wait_ms)
        .receive([&](std::vector<job_progress>& p) { news = std::move(p); },
                 [&](caf::error& e) { failure = e; });
    if (!news) {
      if (lost()) {
        end_line();
        error = "lost the connection to " + where() +
                ": the server stopped or cannot be reached; if it still runs, its jobs go on "
                "(`proofline await` follows them again)";
        return std::nullopt;
      }
      if (++failures > 3) {
        end_line();
        error = error_text(*sys_, failure);
        return std::nullopt;
      }
      continue;
    }
    failures = 0;
    for (auto& p : *news) {
      auto it = by_seq.find(p.status.seq);
      if (it == by_seq.end()) continue;
      auto& w = watched[it->second];
      w.seen = p.seen;
      w.total = p.status.total;
      w.done = p.status.done;
      for (const auto& part : p.finished) {
        if (part.state == partition_state::done && tty) continue;
        if (part.state == partition_state::cancelled) continue;
        end_line();
        // Ids and errors may hold what a client chose: control characters
        // are escaped so each line stays one line.
        out << "job " << base::escape_controls(w.job.id) << ": partition " << part.index << " "
            << to_string(part.state);
        if (part.state == partition_state::done)
          out << " (" << part.proof_file << ", " << w.done << "/" << w.total << ")";
        else if (part.state == partition_state::failed)
          out << ": " << base::escape_controls(part.error.message);
        out << "\n";
      }
      if (p.complete) {
        w.complete = true;
        w.report = std::move(p.report);
        end_line();
        out << "job " << base::escape_controls(w.job.id) << ": " << to_string(w.report.state)
            << "\n";
      }
    }
    if (tty) {
      progress_line(out, watched);
      line_open = true;
    }
    out.flush();
  }
  end_line();
  std::vector<job_report> reports;
  for (auto& w : watched) reports.push_back(std::move(w.report));
  return reports;
}

}  // namespace proofline::net
