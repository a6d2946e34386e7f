#include "observe/summary.hpp"
#include "base/text.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <csignal>
#include <cstdio>
#include <ostream>
#include <string>

#include "memory/arena.hpp"
#include "memory/size.hpp"

namespace proofline::observe {

using base::escape_controls;
using base::fixed;
using memory::format_bytes;

void print_summary(std::ostream& out, const std::vector<job_report>& reports, double wall_ms) {
  const std::vector<std::string> head{"job", "status", "partitions", "time", "output", "error"};
  std::vector<std::vector<std::string>> rows;
  std::size_t proofs = 0, done = 0, failed = 0, cancelled = 0;
  for (const auto& r : reports) {
    std::size_t ok = 0;
    for (const auto& p : r.partitions) ok += p.state == partition_state::done;
    proofs += ok;
    (r.state == job_state::done ? done : r.state == job_state::cancelled ? cancelled : failed) += 1;
    double secs = r.total.recorded() && r.total.end >= r.total.start
                      ? (r.total.end - r.total.start) / 1000.0
                      : 0.0;
    // Ids, paths and errors may hold what a client chose: control
    // characters are escaped so a row stays one line on the terminal.
    rows.push_back({escape_controls(r.id), to_string(r.state),
                    std::to_string(ok) + "/" + std::to_string(r.partitions.size()),
                    fixed(secs, 3) + " s", escape_controls(r.out),
                    r.has_error ? escape_controls(r.error.message) : ""});
  }

  std::vector<std::size_t> width(head.size());
  for (std::size_t c = 0; c < head.size(); ++c) {
    width[c] = head[c].size();
    for (const auto& row : rows) width[c] = std::max(width[c], row[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      s += cells[c];
      if (c + 1 < cells.size()) s += std::string(width[c] - cells[c].size() + 2, ' ');
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    out << s << '\n';
  };
  line(head);
  for (const auto& row : rows) line(row);

  double secs = wall_ms / 1000.0;
  out << '\n'
      << reports.size() << (reports.size() == 1 ? " job" : " jobs") << ": " << done << " done, "
      << failed << " failed";
  if (cancelled) out << ", " << cancelled << " cancelled";
  out << "; " << proofs << (proofs == 1 ? " proof" : " proofs") << " in "
      << fixed(secs, 3) << " s wall time ("
      << fixed(secs > 0 ? static_cast<double>(proofs) / secs : 0.0, 2) << " proofs/s)\n";
  print_synthesis_wait(out, reports, wall_ms);
}

void print_synthesis_wait(std::ostream& out, const std::vector<job_report>& reports,
                          double wall_ms) {
  // Per backend, the union of its prove() spans; a gap in it that ends when
  // a partition's synthesis ended (the next work was not ready before) is
  // time the backend waited for synthesis.
  std::map<int32_t, std::vector<std::pair<double, double>>> proves;
  std::vector<double> synth_ends, witness_ms;
  double total_synthesis = 0;
  for (const auto& r : reports)
    for (const auto& p : r.partitions) {
      const auto& sp = p.spans;
      if (sp.witness.recorded() && sp.witness.end >= sp.witness.start)
        witness_ms.push_back(sp.witness.end - sp.witness.start);
      if (sp.synthesize.recorded()) {
        synth_ends.push_back(sp.synthesize.end);
        total_synthesis += std::max(0.0, sp.synthesize.end - sp.synthesize.start);
      }
      if (sp.prove.recorded() && sp.gpu >= 0) proves[sp.gpu].emplace_back(sp.prove.start, sp.prove.end);
    }
  if (witness_ms.empty()) return;  // only jobs that compute their witnesses get the line
  std::sort(synth_ends.begin(), synth_ends.end());
  double waited = 0;
  for (auto& [gpu, spans] : proves) {
    std::sort(spans.begin(), spans.end());
    double busy_until = spans.front().second;
    for (size_t i = 1; i < spans.size(); ++i) {
      const auto [start, end] = spans[i];
      if (start > busy_until) {
        // A synthesis that ended inside the gap: the backend waited for it.
        auto it = std::lower_bound(synth_ends.begin(), synth_ends.end(), busy_until);
        if (it != synth_ends.end() && *it <= start + 1e-6) waited += start - busy_until;
      }
      busy_until = std::max(busy_until, end);
    }
  }
  std::sort(witness_ms.begin(), witness_ms.end());
  const double total_witness = std::accumulate(witness_ms.begin(), witness_ms.end(), 0.0);
  const double share = wall_ms > 0 ? waited / (wall_ms * std::max<size_t>(1, proves.size())) : 0;
  out << "witness generation: " << witness_ms.size() << " witnesses, "
      << fixed(total_witness / 1000.0, 3) << " s in all (p50 "
      << fixed(witness_ms[witness_ms.size() / 2], 1) << " ms); the backends waited "
      << fixed(waited / 1000.0, 3) << " s for synthesis ("
      << fixed(share * 100.0, 1) << "% of their time)";
  if (share <= 0.05) {
    out << ": synthesis kept them fed\n";
    return;
  }
  // The stage inside synthesis that took most of its time bounds the run.
  const double generation = total_synthesis > 0 ? total_witness / total_synthesis : 1.0;
  if (generation >= 0.5)
    out << ": witness generation bounds throughput (" << fixed(generation * 100.0, 0)
        << "% of the synthesizers' time; more --synthesizers or cores would help)\n";
  else
    out << ": synthesis bounds throughput, witness generation " << fixed(generation * 100.0, 0)
        << "% of it, the rest reading witnesses and a, b, c (more --synthesizers or cores "
           "would help)\n";
}

void print_interrupted(std::ostream& out, const std::vector<job_report>& reports, int signo) {
  std::string ids;
  std::size_t jobs = 0, left = 0, kept = 0;
  for (const auto& r : reports) {
    if (r.state != job_state::cancelled) continue;
    ids += (jobs++ ? ", " : "") + escape_controls(r.id);
    for (const auto& p : r.partitions) {
      left += p.state == partition_state::cancelled;
      kept += p.state == partition_state::done;
    }
  }
  out << (signo == SIGINT ? "interrupted (SIGINT)" : signo == SIGTERM ? "terminated (SIGTERM)"
                                                                      : "stopped by a signal");
  if (jobs == 0) {
    out << ": no job was left to cancel\n";
    return;
  }
  out << ": cancelled " << jobs << (jobs == 1 ? " job (" : " jobs (") << ids << "); " << left
      << (left == 1 ? " partition" : " partitions") << " not proved, " << kept
      << (kept == 1 ? " finished proof" : " finished proofs")
      << " kept; each result.json lists which\n";
}

void print_gpu_figures(std::ostream& out, const run_report& r) {
  for (const auto& g : r.gpus) {
    const auto& u = g.util;
    // "GPU 0 (NVIDIA H200)"; the CPU backend's description names it already.
    std::string who = "GPU " + std::to_string(g.device);
    if (g.kind == "cpu")
      who = g.name.empty() ? "CPU backend" : g.name;
    else if (!g.name.empty())
      who += " (" + g.name + ")";
    out << who << ": busy " << fixed(u.busy_fraction * 100.0, 1) << "% of "
        << fixed(u.wall_ms / 1000.0, 3) << " s";
    if (g.nvml_busy_fraction)
      out << " (NVML " << fixed(*g.nvml_busy_fraction * 100.0, 1) << "% over " << g.nvml_samples
          << " samples)";
    out << ", " << u.partitions << (u.partitions == 1 ? " partition" : " partitions")
        << "; hand-off gap p50 " << fixed(u.gap_p50_ms, 3) << " ms, p99 "
        << fixed(u.gap_p99_ms, 3) << " ms, max " << fixed(u.gap_max_ms, 3) << " ms ("
        << u.gaps_ms.size() << (u.gaps_ms.size() == 1 ? " gap" : " gaps") << ")";
    if (g.keys_prepared)
      out << "; " << g.keys_prepared << (g.keys_prepared == 1 ? " key" : " keys")
          << " prepared in " << fixed(g.key_prepare_ms, 1) << " ms";
    out << "\n";
  }
  if (r.backend == "cuda" && !r.nvml_available) out << "NVML: no samples (" << r.nvml_why << ")\n";
  if (r.cpu)
    out << "CPU while the " << (r.backend == "cpu" ? "backend" : "GPUs") << " proved: "
        << fixed(r.cpu->cores, 2) << " cores on average, " << fixed(r.cpu->per_partition_ms, 1)
        << " ms of CPU time a partition (user + system, every thread, over "
        << fixed(r.cpu->window_ms / 1000.0, 3) << " s)\n";
}

void print_startup(std::ostream& out, const startup_report& s, bool gpu) {
  auto ms = [](const std::optional<double>& v) { return v ? fixed(*v, 1) + " ms" : "none"; };
  out << "start-up: first " << (gpu ? "GPU" : "proving") << " work " << ms(s.first_gpu_work_ms) << ", first proof "
      << ms(s.first_proof_ms);
  for (const auto& k : s.keys) {
    out << "; key " << k.path << " read " << fixed(k.read_ms, 1) << " ms, prepared "
        << fixed(k.prepare_ms, 1) << " ms";
    if (k.to_device_ms > 0 || k.tables_ms > 0)
      out << " (to device " << fixed(k.to_device_ms, 1) << " ms, tables " << fixed(k.tables_ms, 1)
          << " ms)";
  }
  if (s.pool_bytes) {
    out << "; pool " << fixed(static_cast<double>(s.pool_bytes) / (1 << 20), 0) << " MiB";
    if (s.pool_pinned)
      out << " pinned in " << fixed(s.pool_pin_ms, 1) << " ms";
    else
      out << " not pinned";
  }
  out << "\n";
}

std::string memory_summary_line(const memory_stats& s) {
  std::string out = "memory: budget " + format_bytes(s.budget) + ", peak reserved " +
                    format_bytes(s.peak_reserved) + ", peak RSS " + format_bytes(s.peak_rss);
  std::string held;
  auto add = [&](const std::string& part) { held += (held.empty() ? "" : ", ") + part; };
  if (s.pool) add("pool " + format_bytes(s.pool) + (s.pool_pinned ? " pinned" : " unpinned"));
  if (s.fixed) add("backend buffers " + format_bytes(s.fixed));
  if (s.peak_keys) add("proving keys " + format_bytes(s.peak_keys) + " at peak");
  if (!held.empty()) out += " (held: " + held + ")";
  out += "; " + std::to_string(s.purges_run) + " purge(s) for " + std::to_string(s.purges) +
         " request(s)";
  if (s.purges_run) {
    out += ", " + fixed(s.purge_ms_total) + " ms (max " + fixed(s.purge_ms_max) + " ms), " +
           format_bytes(s.purged_bytes) + " returned, on thread";
    if (s.purge_threads.size() > 1) out += "s";
    for (size_t i = 0; i < s.purge_threads.size(); ++i)
      out += (i ? ", " : " ") + (s.purge_threads[i].empty() ? "?" : s.purge_threads[i]);
  }
  return out;
}

std::string jemalloc_line(unsigned created) {
  if (!memory::jemalloc_available()) return {};
  unsigned arenas = 0;
  memory::arena_stats sum;
  const unsigned last = memory::automatic_arenas() + created;
  for (unsigned i = 0; i < last; ++i) {
    auto s = memory::read_arena_stats(i);
    if (!s) continue;
    ++arenas;
    sum.active += s->active;
    sum.dirty += s->dirty;
    sum.muzzy += s->muzzy;
    sum.retained += s->retained;
  }
  const double gib = 1024.0 * 1024.0 * 1024.0;
  return "jemalloc at the end: " + std::to_string(arenas) + " arenas, active " +
         fixed(sum.active / gib, 3) + " GiB, dirty " + fixed(sum.dirty / gib, 3) + " GiB, muzzy " +
         fixed(sum.muzzy / gib, 3) + " GiB, retained " + fixed(sum.retained / gib, 3) + " GiB";
}

}  // namespace proofline::observe
