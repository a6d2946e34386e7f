#include "net/net_client.hpp"

#include <caf/system_messages.hpp>

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <ostream>

#include <CLI/CLI.hpp>

#include "base/finish_rate.hpp"
#include "base/text.hpp"
#include "net/client_progress.hpp"

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
  uint32_t failed = 0;
  bool complete = false;
  job_report report;
};

/// The terminal's width in columns when stdout is one, else 0.
std::size_t terminal_width() {
  winsize ws{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1) return ws.ws_col - 1u;
  return 0;
}

std::string progress_text(const std::vector<watched_job>& jobs, const base::finish_rate& rate,
                          double now_ms, std::size_t width) {
  std::vector<job_count> counts;
  uint64_t total = 0;
  for (const auto& j : jobs) {
    counts.push_back({j.job.id, j.done, j.total, j.complete});
    total += j.total;
  }
  return client_progress_line(counts, rate.eta_ms(now_ms, total), width);
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
  // On a terminal the progress line is redrawn in place and erased before
  // any other line; elsewhere it is a plain line whenever the count grows.
  bool line_open = false;
  auto end_line = [&] {
    if (line_open) out << "\r\x1b[K";
    line_open = false;
  };
  const auto started = std::chrono::steady_clock::now();
  auto now_ms = [&] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
        .count();
  };
  base::finish_rate rate;
  uint64_t shown_finished = 0;
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
      w.failed = p.status.failed;
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
    uint64_t finished = 0;
    bool all_complete = true;
    for (const auto& w : watched) {
      finished += w.done + w.failed;
      all_complete &= w.complete;
    }
    const double now = now_ms();
    rate.observe(now, finished);
    if (tty && !all_complete) {
      out << "\r" << progress_text(watched, rate, now, terminal_width()) << "\x1b[K";
      line_open = true;
    } else if (!tty && !all_complete && finished > shown_finished) {
      out << progress_text(watched, rate, now, 0) << "\n";
    }
    shown_finished = std::max(shown_finished, finished);
    out.flush();
  }
  end_line();
  std::vector<job_report> reports;
  for (auto& w : watched) reports.push_back(std::move(w.report));
  return reports;
}

}  // namespace proofline::net
