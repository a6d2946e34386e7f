// The figures one metrics scrape reports and their Prometheus text
// exposition (format version 0.0.4), written by hand: a few families with
// HELP and TYPE lines, escaped label values and cumulative histogram
// buckets. observe/metrics_http serves it.
//
//   duration_histogram  cumulative buckets of proof durations
//   metrics_snapshot    everything one scrape reports
//   prometheus_text     the snapshot as exposition text
//   label_value         one label value, escaped
//
// Metrics (all prefixed proofline_):
//   partitions_total{status}                 counter: done, failed
//   jobs{state}                              gauge: queued ... cancelled
//   proof_duration_seconds                   histogram: synthesis start to files written
//   queue_partitions{queue}                  gauge: ready (for a GPU), memory (waiting for budget)
//   gpu_busy_seconds_total{device,name}      counter: union of device spans
//   gpu_busy_ratio{device,name}              gauge: busy over first span .. last span
//   gpu_partitions_total{device,name}        counter
//   gpu_nvml_utilization_ratio{device,name}  gauge: NVML's latest sample
//   memory_{budget,reserved,peak_reserved,resident,peak_resident}_bytes   gauges
//   purges_total, purge_seconds_total        counters
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "messages/catalogue.hpp"

namespace proofline::observe {

/// Proof durations in cumulative buckets (Prometheus histogram).
struct duration_histogram {
  /// Upper bounds in seconds: a small partition proves in tens of ms on a
  /// GPU, a 2^20 domain in about a second, a large one on the CPU in minutes.
  static constexpr std::array<double, 12> bounds_s{0.05, 0.1, 0.25, 0.5, 1,   2.5,
                                                   5,    10,  30,   60,  120, 300};
  std::array<uint64_t, bounds_s.size()> buckets{};  ///< per bucket, not cumulative
  uint64_t count = 0;
  double sum_s = 0;

  void add(double seconds);
};

/// One backend's figures so far.
struct gpu_metrics {
  int device = 0;
  std::string name;
  double busy_s = 0;    ///< union of its device spans
  double window_s = 0;  ///< first span start to last span end
  uint64_t partitions = 0;
  std::optional<double> nvml_ratio;  ///< NVML's latest utilization.gpu, 0..1
};

/// Everything one scrape reports.
struct metrics_snapshot {
  uint64_t partitions_done = 0;
  uint64_t partitions_failed = 0;
  std::map<std::string, uint64_t> jobs;  ///< by job_state name
  duration_histogram proof_duration;
  uint64_t ready = 0;           ///< partitions ready, waiting for a GPU worker
  uint64_t waiting_memory = 0;  ///< partitions waiting for memory
  std::vector<gpu_metrics> gpus;
  std::optional<memory_stats> memory;
};

/// The snapshot in Prometheus' text format, with HELP and TYPE lines.
std::string prometheus_text(const metrics_snapshot& m);

/// Escapes a label value: backslash, double quote and newline.
std::string label_value(const std::string& v);

}  // namespace proofline::observe
