#include "observe/prometheus.hpp"

#include <fmt/format.h>

namespace proofline::observe {

namespace {

std::string number(double v) { return fmt::format("{:.9g}", v); }

/// One metric family: HELP and TYPE lines, then samples.
class family {
 public:
  family(std::string& out, const std::string& name, const char* type, const char* help)
      : out_(out), name_(name) {
    out_ += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
  }
  void sample(const std::string& labels, const std::string& value, const std::string& suffix = "") {
    out_ += name_ + suffix + (labels.empty() ? "" : "{" + labels + "}") + " " + value + "\n";
  }

 private:
  std::string& out_;
  std::string name_;
};

std::string gpu_labels(const gpu_metrics& g) {
  return "device=\"" + std::to_string(g.device) + "\",name=\"" + label_value(g.name) + "\"";
}

}  // namespace

void duration_histogram::add(double seconds) {
  for (size_t i = 0; i < bounds_s.size(); ++i)
    if (seconds <= bounds_s[i]) {
      ++buckets[i];
      break;
    }
  ++count;  // above the last bound: counted in +Inf only
  sum_s += seconds;
}

std::string label_value(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string prometheus_text(const metrics_snapshot& m) {
  std::string out;
  {
    family f(out, "proofline_partitions_total", "counter",
             "Partitions finished, by status (a partition is one proof).");
    f.sample("status=\"done\"", std::to_string(m.partitions_done));
    f.sample("status=\"failed\"", std::to_string(m.partitions_failed));
  }
  {
    family f(out, "proofline_jobs", "gauge", "Jobs by state.");
    for (const auto& [state, n] : m.jobs)
      f.sample("state=\"" + label_value(state) + "\"", std::to_string(n));
  }
  {
    family f(out, "proofline_proof_duration_seconds", "histogram",
             "Time from a partition's synthesis start to its proof written.");
    const auto& h = m.proof_duration;
    uint64_t cumulative = 0;
    for (size_t i = 0; i < h.bounds_s.size(); ++i) {
      cumulative += h.buckets[i];
      f.sample("le=\"" + number(h.bounds_s[i]) + "\"", std::to_string(cumulative), "_bucket");
    }
    f.sample("le=\"+Inf\"", std::to_string(h.count), "_bucket");
    f.sample("", number(h.sum_s), "_sum");
    f.sample("", std::to_string(h.count), "_count");
  }
  {
    family f(out, "proofline_queue_partitions", "gauge",
             "Partitions queued: ready for a GPU worker, or waiting for memory.");
    f.sample("queue=\"ready\"", std::to_string(m.ready));
    f.sample("queue=\"memory\"", std::to_string(m.waiting_memory));
  }
  if (!m.gpus.empty()) {
    {
      family f(out, "proofline_gpu_busy_seconds_total", "counter",
               "Time the device was busy: the union of its device spans (CUDA events).");
      for (const auto& g : m.gpus) f.sample(gpu_labels(g), number(g.busy_s));
    }
    {
      family f(out, "proofline_gpu_busy_ratio", "gauge",
               "Busy time over the time from the device's first span to its last.");
      for (const auto& g : m.gpus)
        f.sample(gpu_labels(g), number(g.window_s > 0 ? g.busy_s / g.window_s : 0));
    }
    {
      family f(out, "proofline_gpu_partitions_total", "counter", "Partitions proved per device.");
      for (const auto& g : m.gpus) f.sample(gpu_labels(g), std::to_string(g.partitions));
    }
    bool nvml = false;
    for (const auto& g : m.gpus) nvml |= g.nvml_ratio.has_value();
    if (nvml) {
      family f(out, "proofline_gpu_nvml_utilization_ratio", "gauge",
               "NVML utilization.gpu of the device at its latest sample (0..1).");
      for (const auto& g : m.gpus)
        if (g.nvml_ratio) f.sample(gpu_labels(g), number(*g.nvml_ratio));
    }
  }
  if (m.memory) {
    const auto& s = *m.memory;
    auto gauge = [&](const char* name, const char* help, uint64_t v) {
      family(out, name, "gauge", help).sample("", std::to_string(v));
    };
    gauge("proofline_memory_budget_bytes", "The memory budget.", s.budget);
    gauge("proofline_memory_reserved_bytes", "Bytes reserved in the memory ledger.", s.reserved);
    gauge("proofline_memory_peak_reserved_bytes", "The most bytes ever reserved.", s.peak_reserved);
    gauge("proofline_memory_resident_bytes", "Resident set size of the process.", s.rss);
    gauge("proofline_memory_peak_resident_bytes", "Peak resident set size of the process.",
          s.peak_rss);
    family(out, "proofline_purges_total", "counter", "Arena purges run (requests coalesce).")
        .sample("", std::to_string(s.purges_run));
    family(out, "proofline_purge_seconds_total", "counter",
           "Time spent in arena purges, on the memory manager's thread.")
        .sample("", number(s.purge_ms_total / 1000.0));
  }
  return out;
}

}  // namespace proofline::observe
