#include "observe/trace.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "observe/utilization.hpp"

namespace proofline::observe {

namespace {

using json = nlohmann::json;

/// "job/index", the label of a partition's span.
std::string partition_label(const std::string& job, uint32_t index) {
  return job + "/" + std::to_string(index);
}

lane_span stage_span(const partition_record& p, const char* category, const span_ms& s) {
  return {partition_label(p.job, p.index), category, s.start,
          std::max(s.start, s.end),        p.job,    p.index};
}

/// Lanes being filled, keyed by (group, name) in insertion order.
class lane_set {
 public:
  std::vector<lane_span>& at(const std::string& group, const std::string& name) {
    for (auto& l : lanes_)
      if (l.group == group && l.name == name) return l.spans;
    lanes_.push_back({group, name, {}});
    return lanes_.back().spans;
  }

  /// Sorts each lane and moves spans that overlap an earlier one to extra
  /// tracks right after it ("name #2", "name #3", ...).
  std::vector<lane> finish() {
    std::vector<lane> out;
    for (auto& l : lanes_) {
      std::sort(l.spans.begin(), l.spans.end(), [](const lane_span& a, const lane_span& b) {
        return a.start_ms != b.start_ms ? a.start_ms < b.start_ms : a.end_ms > b.end_ms;
      });
      std::vector<lane> tracks;
      std::vector<double> ends;
      for (auto& s : l.spans) {
        size_t t = 0;
        while (t < tracks.size() && ends[t] > s.start_ms) ++t;
        if (t == tracks.size()) {
          tracks.push_back({l.group, t == 0 ? l.name : l.name + " #" + std::to_string(t + 1), {}});
          ends.push_back(s.end_ms);
        }
        ends[t] = s.end_ms;
        tracks[t].spans.push_back(std::move(s));
      }
      if (tracks.empty()) tracks.push_back({l.group, l.name, {}});
      for (auto& t : tracks) out.push_back(std::move(t));
    }
    return out;
  }

 private:
  std::vector<lane> lanes_;
};

}  // namespace

std::vector<std::pair<double, double>> union_of(std::vector<std::pair<double, double>> spans) {
  std::sort(spans.begin(), spans.end());
  std::vector<std::pair<double, double>> out;
  for (const auto& [start, end] : spans) {
    double e = std::max(start, end);
    if (!out.empty() && start <= out.back().second)
      out.back().second = std::max(out.back().second, e);
    else
      out.emplace_back(start, e);
  }
  return out;
}

std::string group_name(const run_record& rec, int device) {
  bool cpu = device >= 0 && static_cast<size_t>(device) < rec.backends.size() &&
             rec.backends[device].kind == "cpu";
  if (cpu)
    return rec.backends.size() == 1 ? "CPU backend" : "CPU backend " + std::to_string(device);
  return "GPU " + std::to_string(device);
}

std::vector<lane> build_lanes(const run_record& rec) {
  auto parts = partitions_of(rec);
  lane_set lanes;

  // Synthesizers: every configured one gets a lane, used or not.
  int synthesizers = static_cast<int>(rec.synthesizers);
  for (const auto& p : parts) synthesizers = std::max(synthesizers, p.synthesizer + 1);
  for (int i = 0; i < synthesizers; ++i)
    lanes.at("synthesizers", "synthesizer " + std::to_string(i));
  for (const auto& p : parts)
    if (p.synthesizer >= 0 && p.spans.synthesize.recorded())
      lanes.at("synthesizers", "synthesizer " + std::to_string(p.synthesizer))
          .push_back(stage_span(p, "synthesize", p.spans.synthesize));
  // Witness generation (jobs with a witness generator), inside synthesize on its own lane.
  for (const auto& p : parts)
    if (p.synthesizer >= 0 && p.spans.witness.recorded())
      lanes.at("synthesizers", "synthesizer " + std::to_string(p.synthesizer) + " witness")
          .push_back(stage_span(p, "witness", p.spans.witness));

  // Backends: a busy lane (union of device spans), then per worker lane its
  // device spans and its prove() calls, then the keys' preparation.
  int devices = static_cast<int>(rec.backends.size());
  for (const auto& p : parts) devices = std::max(devices, p.spans.gpu + 1);
  for (const auto& k : rec.keys)
    for (const auto& kp : k.devices) devices = std::max(devices, kp.gpu + 1);
  for (int d = 0; d < devices; ++d) {
    std::string group = group_name(rec, d);
    std::vector<std::pair<double, double>> all;
    for (const auto& p : parts)
      if (p.spans.gpu == d)
        for (const auto& s : p.spans.device) all.emplace_back(s.start, s.end);
    auto& busy = lanes.at(group, "busy");
    for (const auto& [start, end] : union_of(std::move(all)))
      busy.push_back({"busy", "busy", start, end, "", -1});
    unsigned worker_lanes =
        static_cast<size_t>(d) < rec.backends.size() ? std::max(1u, rec.backends[d].lanes) : 1u;
    for (const auto& p : parts)
      if (p.spans.gpu == d)
        worker_lanes = std::max(worker_lanes, static_cast<unsigned>(p.spans.lane + 1));
    for (unsigned l = 0; l < worker_lanes; ++l) {
      lanes.at(group, "lane " + std::to_string(l) + " device");
      lanes.at(group, "lane " + std::to_string(l) + " prove()");
    }
    for (const auto& p : parts) {
      if (p.spans.gpu != d) continue;
      std::string lane = "lane " + std::to_string(std::max(0, p.spans.lane));
      auto& device = lanes.at(group, lane + " device");
      for (const auto& s : p.spans.device)
        device.push_back({s.name, is_transfer(s.name) ? "transfer" : "device", s.start,
                          std::max(s.start, s.end), p.job, p.index});
      if (p.spans.prove.recorded())
        lanes.at(group, lane + " prove()").push_back(stage_span(p, "prove", p.spans.prove));
    }
    // Key preparation (uploading a key's points, building its tables) runs
    // on streams of its own, beside the worker lanes.
    bool key_work = false;
    for (const auto& k : rec.keys)
      for (const auto& kp : k.devices)
        if (kp.gpu == d && !kp.spans.empty()) key_work = true;
    if (key_work) {
      auto& keys = lanes.at(group, "key preparation");
      for (const auto& k : rec.keys)
        for (const auto& kp : k.devices)
          if (kp.gpu == d)
            for (const auto& s : kp.spans)
              keys.push_back({s.name, "key", s.start, std::max(s.start, s.end), "", -1});
    }
  }

  int finalizers = static_cast<int>(rec.finalizers);
  for (const auto& p : parts) finalizers = std::max(finalizers, p.finalizer + 1);
  for (int i = 0; i < finalizers; ++i) lanes.at("finalizers", "finalizer " + std::to_string(i));
  for (const auto& p : parts)
    if (p.finalizer >= 0 && p.spans.finalize.recorded())
      lanes.at("finalizers", "finalizer " + std::to_string(p.finalizer))
          .push_back(stage_span(p, "finalize", p.spans.finalize));

  auto& purges = lanes.at("memory manager", "purges");
  for (const auto& pr : rec.purges)
    purges.push_back({"purge arena " + std::to_string(pr.arena), "purge", pr.start_ms,
                      std::max(pr.start_ms, pr.end_ms), "", -1});
  return lanes.finish();
}

std::string trace_json(const run_record& rec) {
  auto lanes = build_lanes(rec);
  json events = json::array();
  auto us = [](double ms) { return ms * 1000.0; };

  // A process per group, a thread per lane, both in display order. Metadata
  // events carry ts 0: some importers expect every event to have one.
  std::map<std::string, int> pids;
  std::map<std::string, int> next_tid;
  auto pid_of = [&](const std::string& group) {
    auto [it, fresh] = pids.emplace(group, static_cast<int>(pids.size()) + 1);
    if (fresh) {
      events.push_back({{"ph", "M"},
                        {"ts", 0},
                        {"name", "process_name"},
                        {"pid", it->second},
                        {"args", {{"name", group}}}});
      events.push_back({{"ph", "M"},
                        {"ts", 0},
                        {"name", "process_sort_index"},
                        {"pid", it->second},
                        {"args", {{"sort_index", it->second}}}});
    }
    return it->second;
  };
  for (const auto& l : lanes) {
    int pid = pid_of(l.group);
    int tid = ++next_tid[l.group];
    events.push_back({{"ph", "M"},
                      {"ts", 0},
                      {"name", "thread_name"},
                      {"pid", pid},
                      {"tid", tid},
                      {"args", {{"name", l.name}}}});
    events.push_back({{"ph", "M"},
                      {"ts", 0},
                      {"name", "thread_sort_index"},
                      {"pid", pid},
                      {"tid", tid},
                      {"args", {{"sort_index", tid}}}});
    for (const auto& s : l.spans) {
      json e = {{"ph", "X"},
                {"name", s.name},
                {"cat", s.category},
                {"pid", pid},
                {"tid", tid},
                {"ts", us(s.start_ms)},
                {"dur", us(s.end_ms - s.start_ms)}};
      if (s.partition >= 0) e["args"] = {{"job", s.job}, {"partition", s.partition}};
      events.push_back(std::move(e));
    }
  }

  // Counters: queue depths and memory on the pipeline's own process; NVML
  // utilization on its GPU's.
  if (!rec.queues.empty()) {
    int pid = pid_of("pipeline");
    for (const auto& q : rec.queues) {
      events.push_back(
          {{"ph", "C"},
           {"name", "queued partitions"},
           {"pid", pid},
           {"ts", us(q.t_ms)},
           {"args", {{"ready to prove", q.ready}, {"waiting to start", q.waiting_memory}}}});
      events.push_back({{"ph", "C"},
                        {"name", "memory (MiB)"},
                        {"pid", pid},
                        {"ts", us(q.t_ms)},
                        {"args",
                         {{"reserved", static_cast<double>(q.reserved) / (1 << 20)},
                          {"resident", static_cast<double>(q.rss) / (1 << 20)}}}});
    }
  }
  for (size_t d = 0; d < rec.backends.size(); ++d) {
    if (rec.backends[d].cuda_device < 0) continue;
    auto idx = gpu::nvml_index_of_cuda_device(rec.backends[d].cuda_device, rec.nvml_devices);
    if (!idx) continue;
    int pid = pid_of(group_name(rec, static_cast<int>(d)));
    for (const auto& s : rec.nvml_samples)
      if (s.device == *idx)
        events.push_back({{"ph", "C"},
                          {"name", "NVML utilization %"},
                          {"pid", pid},
                          {"ts", us(s.t_ms)},
                          {"args", {{"gpu", s.gpu_percent}}}});
  }

  json trace = {{"traceEvents", std::move(events)},
                {"displayTimeUnit", "ms"},
                {"otherData", {{"generator", "proofline"}, {"clock", "ms since run start"}}}};
  return trace.dump();
}

}  // namespace proofline::observe
