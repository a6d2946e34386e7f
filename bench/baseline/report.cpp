#include "bench/baseline/report.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "memory/arena.hpp"

namespace proofline::bench::baseline {

namespace {

using json = nlohmann::json;

/// Rounds to 1 µs (values in ms), so reports stay readable.
double round_us(double ms) { return std::round(ms * 1000.0) / 1000.0; }

json stats_json(const duration_stats& s) {
  return {{"count", s.count}, {"total_ms", round_us(s.total_ms)}, {"max_ms", round_us(s.max_ms)}};
}

const char* state_name(part_state s) {
  switch (s) {
    case part_state::queued:
      return "queued";
    case part_state::proving:
      return "proving";
    case part_state::proved:
      return "proved";
    case part_state::done:
      return "done";
    case part_state::failed:
      return "failed";
  }
  return "?";
}

/// The utilization of device `d`, or zeros when it proved nothing.
observe::device_utilization utilization_of(const std::vector<observe::device_utilization>& all, int d) {
  for (const auto& u : all)
    if (u.device == d) return u;
  observe::device_utilization none;
  none.device = d;
  return none;
}

}  // namespace

std::string device_name(const std::string& describe) {
  const std::string prefix = "CUDA device ";
  auto colon = describe.find(": ");
  if (describe.compare(0, prefix.size(), prefix) != 0 || colon == std::string::npos)
    return describe;
  std::string name = describe.substr(colon + 2);
  return name.substr(0, name.find(" ("));  // without "(132 SMs, ...)"
}

std::vector<observe::partition_timeline> timelines(const engine_result& r) {
  std::vector<observe::partition_timeline> out;
  for (const auto& rec : r.tracker.parts) {
    if (rec.device < 0 || rec.spans.empty()) continue;
    observe::partition_timeline t;
    t.device = rec.device;
    for (const auto& s : rec.spans)
      t.spans.push_back(
          {s.name, (s.start_us - r.run_epoch_us) / 1000.0, (s.end_us - r.run_epoch_us) / 1000.0});
    out.push_back(std::move(t));
  }
  return out;
}

std::string report_json(const engine_result& r, const std::vector<device_info>& devices,
                        const engine_config& cfg) {
  const double wall_s = r.wall_ms / 1000.0;
  json j;
  j["engine"] = "baseline";
  j["allocator"] = memory::jemalloc_available() ? "jemalloc" : "glibc malloc";
  j["proofs"] = r.proofs;
  j["failed"] = r.failed;
  // Unrounded, as proofline reports them: a CI-sized run lasts tens of ms, where
  // a wall time rounded to the ms would move proofs / wall_s by several percent.
  j["wall_s"] = wall_s;
  j["proofs_per_s"] = wall_s > 0 ? static_cast<double>(r.proofs) / wall_s : 0.0;
  j["load_s"] = round_us(r.load_ms / 1000.0);

  auto lines = timelines(r);
  // Start-up as proofline reports it: the first device span, in ms since the
  // run began (key loading included).
  double first_gpu_ms = -1;
  for (const auto& t : lines)
    for (const auto& s : t.spans)
      if (first_gpu_ms < 0 || s.start_ms < first_gpu_ms) first_gpu_ms = s.start_ms;
  j["startup"] = {{"first_gpu_work_ms", round_us(std::max(first_gpu_ms, 0.0))}};
  auto util = observe::summarize(lines);
  json gpus = json::array();
  for (std::size_t d = 0; d < devices.size(); ++d) {
    auto u = utilization_of(util, static_cast<int>(d));
    gpus.push_back({{"device", d},
                    {"name", devices[d].name},
                    {"kind", devices[d].kind},
                    {"lanes", devices[d].lanes},
                    {"partitions", u.partitions},
                    {"gpu_busy_fraction", round_us(u.busy_fraction)},
                    {"busy_ms", round_us(u.busy_ms)},
                    {"span_wall_ms", round_us(u.wall_ms)},
                    {"handoff_gap_ms",
                     {{"p50", round_us(u.gap_p50_ms)},
                      {"p99", round_us(u.gap_p99_ms)},
                      {"max", round_us(u.gap_max_ms)},
                      {"count", u.gaps_ms.size()}}}});
  }
  j["gpus"] = gpus;

  auto heap = [](const glibc_heap& h) {
    return json{{"ok", h.ok},
                {"arenas", h.arenas},
                {"arena_bytes", h.arena_bytes},
                {"free_bytes", h.free_bytes},
                {"free_chunks", h.free_chunks},
                {"fragmentation", round_us(h.fragmentation())},
                {"mmap_bytes", h.mmap_bytes},
                {"mmap_chunks", h.mmap_chunks},
                {"read_ms", round_us(h.read_ms)}};
  };
  j["memory"] = {{"peak_rss_bytes", r.peak_rss},
                 {"pool_bytes", r.pool_bytes},
                 {"pool_pinned", r.pool_pinned},
                 {"glibc_heap_peak", r.heap_samples ? heap(r.heap_peak) : json(nullptr)},
                 {"glibc_heap_samples", r.heap_samples},
                 {"glibc_heap_read_ms", round_us(r.heap_read_ms)},
                 {"glibc_heap_end", heap(r.heap_end)}};
  const auto& trims = r.tracker.trims;
  j["purge"] = {{"kind", cfg.trim ? "malloc_trim(0) under the tracker lock" : "none"},
                {"count", trims.count},
                {"total_ms", round_us(trims.total_ms)},
                {"max_ms", round_us(trims.max_ms)},
                {"returned_bytes", r.trim_returned_bytes},
                {"threads", trims.count ? json::array({"finalizers (bl.final*)"}) : json::array()}};
  j["tracker_wait_ms"] = {{"synthesizers", stats_json(r.tracker.waits[0])},
                          {"gpu_workers", stats_json(r.tracker.waits[1])},
                          {"finalizers", stats_json(r.tracker.waits[2])}};
  unsigned lanes = 0;
  for (const auto& d : devices) lanes += d.lanes;
  j["config"] = {{"synthesizers", cfg.synthesizers},
                 {"finalizers", cfg.finalizers},
                 {"lanes", lanes},
                 {"in_flight", r.in_flight},
                 {"trim", cfg.trim},
                 {"synthesis_model", cfg.synthesis_model},
                 {"heap_stats", cfg.heap_stats},
                 {"pinned_pool", cfg.pinned_pool}};

  json parts = json::array();
  json errors = json::array();
  for (std::size_t k = 0; k < r.tracker.parts.size(); ++k) {
    const auto& rec = r.tracker.parts[k];
    const auto& job = r.tracker.jobs.at(rec.job);
    json spans = json::array();
    for (const auto& s : rec.spans)
      spans.push_back({s.name, round_us((s.start_us - r.run_epoch_us) / 1000.0),
                       round_us((s.end_us - r.run_epoch_us) / 1000.0)});
    parts.push_back({{"job", job.id},
                     {"partition", rec.index},
                     {"status", state_name(rec.state)},
                     {"device", rec.device},
                     {"lane", rec.lane},
                     {"ready_ms", k < r.ready_ms.size() ? round_us(r.ready_ms[k]) : -1.0},
                     {"spans_ms", spans}});
    if (!rec.error.empty())
      errors.push_back({{"job", job.id}, {"partition", rec.index}, {"message", rec.error}});
  }
  j["partitions"] = parts;
  j["errors"] = errors;
  return j.dump(2) + "\n";
}

void print_summary(std::ostream& out, const engine_result& r,
                   const std::vector<device_info>& devices) {
  const double wall_s = r.wall_ms / 1000.0;
  out << "baseline: " << r.proofs << " proof(s), " << r.failed << " failed, in "
      << fmt::format("{:.3f} s ({:.2f} proofs/s; keys loaded in {:.3f} s)", wall_s,
                     wall_s > 0 ? static_cast<double>(r.proofs) / wall_s : 0.0, r.load_ms / 1000.0)
      << "\n";
  auto util = observe::summarize(timelines(r));
  for (std::size_t d = 0; d < devices.size(); ++d) {
    auto u = utilization_of(util, static_cast<int>(d));
    out << "device " << d << " (" << devices[d].name << ", " << devices[d].lanes
        << " lane(s)): " << u.partitions << " partition(s), busy "
        << fmt::format("{:.1f}% of {:.1f} ms; hand-off gap p50 {:.3f} ms, p99 {:.3f} ms, "
                       "max {:.3f} ms",
                       100.0 * u.busy_fraction, u.wall_ms, u.gap_p50_ms, u.gap_p99_ms,
                       u.gap_max_ms)
        << "\n";
  }
  const auto& t = r.tracker.trims;
  const auto& w = r.tracker.waits[static_cast<int>(role::gpu_worker)];
  out << "tracker: " << t.count << " malloc_trim(0) under the lock, "
      << fmt::format(
             "{:.1f} ms in all, max {:.1f} ms; GPU workers waited {:.1f} ms for the lock "
             "(max {:.1f} ms)",
             t.total_ms, t.max_ms, w.total_ms, w.max_ms)
      << "\n";
  const auto& h = r.heap_samples ? r.heap_peak : r.heap_end;
  out << "glibc heap (" << (r.heap_samples ? "peak of the samples" : "at the end") << "): "
      << h.arenas << " arenas, "
      << fmt::format("{:.2f} GiB from the system, {:.2f} GiB of it free ({:.1f}%), "
                     "{:.2f} GiB mapped whole",
                     h.arena_bytes / 1073741824.0, h.free_bytes / 1073741824.0,
                     100.0 * h.fragmentation(), h.mmap_bytes / 1073741824.0)
      << "\n";
  for (const auto& rec : r.tracker.parts)
    if (!rec.error.empty())
      out << "failed: " << r.tracker.jobs.at(rec.job).id << " partition " << rec.index << ": "
          << rec.error << "\n";
}

}  // namespace proofline::bench::baseline
