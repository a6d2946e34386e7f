// The one definition of "GPU busy" and "hand-off gap" (docs/OBSERVABILITY.md).
//
//   timed_span / partition_timeline   device spans of one partition, in ms
//   is_transfer(name)                 host<->device copies are not kernels
//   summarize(timelines)              per device: busy fraction, gaps
//   percentile(values, p)             nearest-rank percentile
//
// Busy time is the measure of the union of a device's spans over the wall
// time from its first span's start to its last span's end: uploads overlap
// compute, so spans are never summed. A hand-off gap is
// max(0, first kernel start of partition k+1 - last kernel end of partition k)
// on one device, partitions ordered by their first kernel start; transfers
// are left out of gaps so that an upload prefetched under the previous
// partition's compute does not hide the idle time of the compute engine.
//
// Used by proofline's run report and by the glibc baseline under bench/, so
// both sides of the benchmark measure the same thing. Plain C++17.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace proofline::observe {

/// One interval of device work, milliseconds on a common clock.
struct timed_span {
  std::string name;  ///< "upload", "ntt_a", "msm_h", "download", ...
  double start_ms = 0;
  double end_ms = 0;
};

/// The device spans of one partition proved on one device, in the order the
/// backend reported them.
struct partition_timeline {
  int device = 0;
  std::vector<timed_span> spans;
};

/// True for copies between host and device, which are not kernels: names
/// starting with "upload", "download", "h2d" or "d2h". O(1).
bool is_transfer(const std::string& span_name);

/// The utilization of one device over a set of partitions.
struct device_utilization {
  int device = 0;
  uint64_t partitions = 0;
  double first_ms = 0, last_ms = 0;  ///< first span start, last span end
  double wall_ms = 0;                ///< last_ms - first_ms
  double busy_ms = 0;                ///< measure of the union of all spans (never summed)
  double busy_fraction = 0;          ///< busy_ms / wall_ms (0 when wall_ms == 0)
  /// Per consecutive pair of partitions on this device, ordered by their
  /// first kernel start: max(0, first kernel start of k+1 - last kernel end of k).
  /// Partitions without any kernel span take no part in the gaps.
  std::vector<double> gaps_ms;
  double gap_p50_ms = 0, gap_p99_ms = 0, gap_max_ms = 0;  ///< nearest-rank; 0 if no gaps
};

/// Groups timelines by device (ascending device ids) and summarizes each.
/// Timelines with no spans count as partitions but add no time. Spans with
/// end < start are treated as empty. O(S log S) in the number of spans.
std::vector<device_utilization> summarize(const std::vector<partition_timeline>& timelines);

/// Nearest-rank percentile (p in [0,100], clamped) of unsorted values: the
/// smallest value with at least p% of the values at or below it; the minimum
/// for p = 0; 0 for no values. O(n log n).
double percentile(std::vector<double> values, double p);

}  // namespace proofline::observe
