#include "observe/report.hpp"

#include <tuple>
#include <algorithm>
#include <ctime>
#include <map>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace proofline::observe {

namespace {

using json = nlohmann::json;

/// Numbers actor ids 0, 1, ... in ascending order (spawn order); 0 is no actor.
std::map<uint64_t, int> rank_ids(const std::vector<uint64_t>& ids) {
  std::map<uint64_t, int> ranks;
  for (uint64_t id : ids)
    if (id != 0) ranks.emplace(id, 0);
  int next = 0;
  for (auto& [id, rank] : ranks) rank = next++;
  return ranks;
}

stage_times stage_of(const std::vector<partition_record>& parts, span_ms partition_spans::*stage) {
  std::vector<double> ms;
  stage_times t;
  for (const auto& p : parts) {
    const span_ms& s = p.spans.*stage;
    if (!s.recorded() || s.end < s.start) continue;
    ms.push_back(s.end - s.start);
    t.total_ms += s.end - s.start;
  }
  t.count = ms.size();
  if (!ms.empty()) {
    t.p50_ms = percentile(ms, 50);
    t.p99_ms = percentile(ms, 99);
    t.max_ms = *std::max_element(ms.begin(), ms.end());
  }
  return t;
}

json stage_json(const stage_times& t) {
  return {{"count", t.count},
          {"p50_ms", t.p50_ms},
          {"p99_ms", t.p99_ms},
          {"max_ms", t.max_ms},
          {"total_ms", t.total_ms}};
}

/// A JSON number, or null for a value that is not there.
json maybe(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

}  // namespace

std::vector<partition_record> partitions_of(const run_record& rec) {
  std::vector<uint64_t> synth_ids, fin_ids;
  for (const auto& j : rec.jobs)
    for (const auto& p : j.partitions) {
      synth_ids.push_back(p.spans.synthesizer);
      fin_ids.push_back(p.spans.finalizer);
    }
  auto synth = rank_ids(synth_ids);
  auto fin = rank_ids(fin_ids);
  std::vector<partition_record> out;
  for (const auto& j : rec.jobs)
    for (const auto& p : j.partitions) {
      partition_record r;
      r.job = j.id;
      r.index = p.index;
      r.state = p.state;
      r.spans = p.spans;
      if (auto it = synth.find(p.spans.synthesizer); it != synth.end()) r.synthesizer = it->second;
      if (auto it = fin.find(p.spans.finalizer); it != fin.end()) r.finalizer = it->second;
      out.push_back(std::move(r));
    }
  return out;
}

std::vector<partition_timeline> timelines_of(const run_record& rec) {
  std::vector<partition_timeline> out;
  for (const auto& j : rec.jobs)
    for (const auto& p : j.partitions) {
      if (p.spans.gpu < 0) continue;  // never reached a backend
      partition_timeline t;
      t.device = p.spans.gpu;
      for (const auto& s : p.spans.device) t.spans.push_back({s.name, s.start, s.end});
      out.push_back(std::move(t));
    }
  return out;
}

std::optional<double> nvml_busy_fraction(const std::vector<gpu::nvml_sample>& samples,
                                         unsigned nvml_index, double from_ms, double to_ms,
                                         uint64_t* count, double lookback_ms) {
  auto mean = [&](double from) {
    double sum = 0;
    uint64_t n = 0;
    for (const auto& s : samples)
      if (s.device == nvml_index && s.t_ms >= from && s.t_ms <= to_ms) {
        sum += s.gpu_percent;
        ++n;
      }
    return std::make_pair(sum, n);
  };
  auto [sum, n] = mean(from_ms + lookback_ms);
  if (n == 0 && lookback_ms > 0) std::tie(sum, n) = mean(from_ms);
  if (count) *count = n;
  if (n == 0) return std::nullopt;
  return sum / static_cast<double>(n) / 100.0;
}

std::vector<queue_sample> thin_queue_samples(const std::vector<queue_sample>& samples,
                                             size_t max_points) {
  if (max_points == 0) return {};
  if (samples.size() <= max_points) return samples;
  std::vector<queue_sample> out;
  out.reserve(max_points);
  // Stretch i covers samples [i * n / max_points, (i + 1) * n / max_points).
  const size_t n = samples.size();
  for (size_t i = 0; i < max_points; ++i) {
    size_t lo = i * n / max_points, hi = (i + 1) * n / max_points;
    queue_sample q = samples[lo];
    for (size_t k = lo + 1; k < hi; ++k) {
      q.ready = std::max(q.ready, samples[k].ready);
      q.waiting_memory = std::max(q.waiting_memory, samples[k].waiting_memory);
      q.reserved = std::max(q.reserved, samples[k].reserved);
      q.rss = std::max(q.rss, samples[k].rss);
    }
    out.push_back(q);
  }
  return out;
}

std::vector<partition_timeline> key_timelines_of(const run_record& rec) {
  std::vector<partition_timeline> out;
  for (const auto& k : rec.keys)
    for (const auto& d : k.devices) {
      if (d.spans.empty()) continue;
      partition_timeline t;
      t.device = d.gpu;
      for (const auto& s : d.spans) t.spans.push_back({s.name, s.start, s.end});
      out.push_back(std::move(t));
    }
  return out;
}

startup_report startup_of(const run_record& rec) {
  startup_report s;
  auto earliest = [](std::optional<double>& at, double t) {
    if (!at || t < *at) at = t;
  };
  for (const auto& j : rec.jobs)
    for (const auto& p : j.partitions) {
      for (const auto& d : p.spans.device) earliest(s.first_gpu_work_ms, d.start);
      if (p.state == partition_state::done && p.spans.finalize.recorded())
        earliest(s.first_proof_ms, p.spans.finalize.end);
    }
  for (const auto& k : rec.keys) {
    key_startup_report kr;
    kr.path = k.path;
    kr.bytes = k.bytes;
    kr.read_ms = std::max(0.0, k.read.end - k.read.start);
    for (const auto& d : k.devices) {
      kr.prepare_ms = std::max(kr.prepare_ms, d.prepare.end - d.prepare.start);
      kr.to_device_ms = std::max(kr.to_device_ms, d.to_device_ms);
      kr.tables_ms = std::max(kr.tables_ms, d.tables_ms);
      kr.tables_bytes = std::max(kr.tables_bytes, d.tables_bytes);
      kr.device_bytes = std::max(kr.device_bytes, d.device_bytes);
      kr.abc_bytes = std::max(kr.abc_bytes, d.abc_bytes);
      for (const auto& sp : d.spans) earliest(s.first_gpu_work_ms, sp.start);
    }
    s.keys.push_back(std::move(kr));
  }
  if (rec.memory) {
    s.pool_bytes = rec.memory->pool;
    s.pool_pinned = rec.memory->pool_pinned;
    s.pool_pin_ms = rec.memory->pool_pin_ms;
  }
  return s;
}

std::string iso8601_utc(std::chrono::system_clock::time_point t) {
  using namespace std::chrono;
  auto ms = duration_cast<milliseconds>(t.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms % 1000));
}

run_report build_report(const run_record& rec) {
  run_report r;
  r.job_file = rec.job_file;
  r.started_at = rec.started_at;
  r.wall_ms = rec.wall_ms;
  r.jobs = rec.jobs.size();
  for (const auto& j : rec.jobs) {
    job_row row;
    row.id = j.id;
    row.status = to_string(j.state);
    row.total = j.partitions.size();
    for (const auto& p : j.partitions) row.done += p.state == partition_state::done;
    row.out = j.out;
    row.has_error = j.has_error;
    row.error = j.error;
    r.job_table.push_back(std::move(row));
    r.jobs_done += j.state == job_state::done;
    r.jobs_failed += j.state == job_state::failed;
    r.jobs_cancelled += j.state == job_state::cancelled;
    for (const auto& p : j.partitions) {
      ++r.partitions;
      r.proofs += p.state == partition_state::done;
      r.failed += p.state == partition_state::failed;
    }
  }
  r.proofs_per_s = r.wall_ms > 0 ? static_cast<double>(r.proofs) / (r.wall_ms / 1000.0) : 0;
  r.backend = rec.backends.empty() ? "" : rec.backends.front().kind;

  // Every backend gets an entry, even one that proved nothing (busy 0).
  auto timelines = timelines_of(rec);
  auto utils = summarize(timelines);
  auto key_timelines = key_timelines_of(rec);
  timelines.insert(timelines.end(), key_timelines.begin(), key_timelines.end());
  auto with_keys = summarize(timelines);
  size_t devices = rec.backends.size();
  for (const auto& u : utils) devices = std::max(devices, static_cast<size_t>(u.device) + 1);
  for (size_t d = 0; d < devices; ++d) {
    gpu_report g;
    g.device = static_cast<int>(d);
    g.util.device = g.device;
    for (const auto& u : utils)
      if (u.device == g.device) g.util = u;
    g.busy_fraction_with_keys = g.util.busy_fraction;
    g.busy_ms_with_keys = g.util.busy_ms;
    for (const auto& u : with_keys)
      if (u.device == g.device) {
        g.busy_fraction_with_keys = u.busy_fraction;
        g.busy_ms_with_keys = u.busy_ms;
      }
    for (const auto& k : rec.keys)
      for (const auto& kp : k.devices)
        if (kp.gpu == g.device) {
          ++g.keys_prepared;
          g.key_prepare_ms += std::max(0.0, kp.prepare.end - kp.prepare.start);
          g.key_to_device_ms += kp.to_device_ms;
        }
    if (d < rec.backends.size()) {
      const auto& b = rec.backends[d];
      g.kind = b.kind;
      g.cuda_device = b.cuda_device;
      g.name = b.description;
    }
    if (rec.nvml_available && g.cuda_device >= 0)
      if (auto idx = gpu::nvml_index_of_cuda_device(g.cuda_device, rec.nvml_devices)) {
        for (const auto& nd : rec.nvml_devices)
          if (nd.index == *idx && !nd.name.empty()) g.name = nd.name;
        if (g.util.wall_ms > 0)
          g.nvml_busy_fraction = nvml_busy_fraction(rec.nvml_samples, *idx, g.util.first_ms,
                                                    g.util.last_ms, &g.nvml_samples,
                                                    nvml_lookback_ms);
      }
    r.gpus.push_back(std::move(g));
  }

  auto parts = partitions_of(rec);
  r.synthesize = stage_of(parts, &partition_spans::synthesize);
  r.witness = stage_of(parts, &partition_spans::witness);
  r.prove = stage_of(parts, &partition_spans::prove);
  r.finalize = stage_of(parts, &partition_spans::finalize);
  r.memory = rec.memory;
  r.nvml_available = rec.nvml_available;
  r.nvml_why = rec.nvml_why;
  if (!r.nvml_available && r.nvml_why.empty()) r.nvml_why = "NVML was not sampled";
  r.queues = thin_queue_samples(rec.queues, max_report_queue_points);
  r.startup = startup_of(rec);
  double first = 0, last = 0;
  uint64_t proved = 0;
  for (const auto& g : r.gpus) {
    if (g.util.partitions == 0 || g.util.wall_ms <= 0) continue;
    first = proved ? std::min(first, g.util.first_ms) : g.util.first_ms;
    last = proved ? std::max(last, g.util.last_ms) : g.util.last_ms;
    proved += g.util.partitions;
  }
  if (proved) r.cpu = cpu_over(rec.queues, first, last, proved);
  return r;
}

std::optional<double> cpu_at(const std::vector<queue_sample>& samples, double t_ms) {
  const auto after = std::lower_bound(samples.begin(), samples.end(), t_ms,
                                      [](const queue_sample& q, double t) { return q.t_ms < t; });
  if (after == samples.end()) return std::nullopt;
  if (after->t_ms == t_ms) return after->cpu_ms < 0 ? std::nullopt : std::optional<double>(after->cpu_ms);
  if (after == samples.begin()) return std::nullopt;
  const auto before = std::prev(after);
  if (before->cpu_ms < 0 || after->cpu_ms < 0) return std::nullopt;
  const double f = (t_ms - before->t_ms) / (after->t_ms - before->t_ms);
  return before->cpu_ms + f * (after->cpu_ms - before->cpu_ms);
}

std::optional<cpu_report> cpu_over(const std::vector<queue_sample>& samples, double first_ms, double last_ms,
                                   uint64_t partitions) {
  if (last_ms <= first_ms || partitions == 0) return std::nullopt;
  const auto from = cpu_at(samples, first_ms), to = cpu_at(samples, last_ms);
  if (!from || !to) return std::nullopt;
  cpu_report c;
  c.window_ms = last_ms - first_ms;
  c.cpu_ms = std::max(0.0, *to - *from);
  c.partitions = partitions;
  c.per_partition_ms = c.cpu_ms / static_cast<double>(partitions);
  c.cores = c.cpu_ms / c.window_ms;
  return c;
}

std::string report_json(const run_report& r, int indent) {
  json j;
  j["job_file"] = r.job_file;
  j["started_at"] = r.started_at;
  j["proofs"] = r.proofs;
  j["failed"] = r.failed;
  j["partitions"] = r.partitions;
  j["jobs"] = {{"total", r.jobs},
               {"done", r.jobs_done},
               {"failed", r.jobs_failed},
               {"cancelled", r.jobs_cancelled}};
  json table = json::array();
  for (const auto& row : r.job_table)
    table.push_back({{"id", row.id},
                     {"status", row.status},
                     {"partitions", {{"done", row.done}, {"total", row.total}}},
                     {"out", row.out},
                     {"error", row.has_error ? json{{"file", row.error.file},
                                                    {"message", row.error.message}}
                                             : json(nullptr)}});
  j["job_table"] = std::move(table);
  j["wall_s"] = r.wall_ms / 1000.0;
  j["proofs_per_s"] = r.proofs_per_s;
  j["backend"] = r.backend;
  // Where busy time comes from: CUDA events on a GPU, the steady clock around
  // each step on the CPU backend.
  j["busy_source"] =
      r.backend == "cuda" ? "device spans (CUDA events)" : "backend spans (steady clock)";
  json gpus = json::array();
  for (const auto& g : r.gpus) {
    const auto& u = g.util;
    gpus.push_back({{"device", g.device},
                    {"cuda_device", g.cuda_device >= 0 ? json(g.cuda_device) : json(nullptr)},
                    {"name", g.name},
                    {"kind", g.kind},
                    {"partitions", u.partitions},
                    {"gpu_busy_fraction", u.busy_fraction},
                    {"busy_ms", u.busy_ms},
                    {"window_ms", u.wall_ms},
                    {"first_span_ms", u.first_ms},
                    {"last_span_ms", u.last_ms},
                    {"nvml_busy_fraction", maybe(g.nvml_busy_fraction)},
                    {"nvml_samples", g.nvml_samples},
                    {"handoff_gap_ms",
                     {{"p50", u.gap_p50_ms},
                      {"p99", u.gap_p99_ms},
                      {"max", u.gap_max_ms},
                      {"count", u.gaps_ms.size()}}},
                    {"gpu_busy_fraction_with_keys", g.busy_fraction_with_keys},
                    {"busy_ms_with_keys", g.busy_ms_with_keys},
                    {"keys_prepared", g.keys_prepared},
                    {"key_prepare_ms", g.key_prepare_ms},
                    {"key_to_device_ms", g.key_to_device_ms}});
  }
  j["gpus"] = std::move(gpus);
  json keys = json::array();
  for (const auto& k : r.startup.keys)
    keys.push_back({{"path", k.path},
                    {"bytes", k.bytes},
                    {"read_ms", k.read_ms},
                    {"prepare_ms", k.prepare_ms},
                    {"to_device_ms", k.to_device_ms},
                    {"tables_ms", k.tables_ms},
                    {"tables_bytes", k.tables_bytes},
                    {"device_bytes", k.device_bytes},
                    {"abc_bytes", k.abc_bytes}});
  j["startup"] = {{"first_gpu_work_ms", maybe(r.startup.first_gpu_work_ms)},
                  {"first_proof_ms", maybe(r.startup.first_proof_ms)},
                  {"keys", std::move(keys)},
                  {"pool",
                   {{"bytes", r.startup.pool_bytes},
                    {"pinned", r.startup.pool_pinned},
                    {"pin_ms", r.startup.pool_pin_ms}}}};
  j["stages"] = {{"synthesize", stage_json(r.synthesize)},
                 {"prove", stage_json(r.prove)},
                 {"finalize", stage_json(r.finalize)}};
  if (r.witness.count > 0) j["stages"]["witness"] = stage_json(r.witness);
  j["nvml"] = {{"available", r.nvml_available},
               {"reason", r.nvml_available ? json(nullptr) : json(r.nvml_why)}};
  if (r.memory) {
    const auto& m = *r.memory;
    j["memory"] = {{"budget_bytes", m.budget},     {"peak_reserved_bytes", m.peak_reserved},
                   {"peak_rss_bytes", m.peak_rss}, {"pool_bytes", m.pool},
                   {"pool_pinned", m.pool_pinned}, {"fixed_bytes", m.fixed},
                   {"peak_key_bytes", m.peak_keys}};
    j["purge"] = {{"count", m.purges_run},        {"requests", m.purges},
                  {"total_ms", m.purge_ms_total}, {"max_ms", m.purge_ms_max},
                  {"bytes", m.purged_bytes},      {"threads", m.purge_threads}};
  } else {
    j["memory"] = nullptr;
    j["purge"] = nullptr;
  }
  if (r.cpu)
    j["cpu"] = {{"window_ms", r.cpu->window_ms},
                {"cpu_ms", r.cpu->cpu_ms},
                {"partitions", r.cpu->partitions},
                {"per_partition_ms", r.cpu->per_partition_ms},
                {"cores", r.cpu->cores}};
  else
    j["cpu"] = nullptr;
  json queues = json::array();
  for (const auto& q : r.queues)
    queues.push_back({{"t_s", q.t_ms / 1000.0},
                      {"ready_partitions", q.ready},
                      {"waiting_for_memory", q.waiting_memory},
                      {"reserved_bytes", q.reserved},
                      {"rss_bytes", q.rss},
                      {"cpu_s", q.cpu_ms < 0 ? json(nullptr) : json(q.cpu_ms / 1000.0)}});
  j["queues"] = std::move(queues);
  return j.dump(indent);
}

}  // namespace proofline::observe
