#include "observe/utilization.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

namespace proofline::observe {

namespace {

bool starts_with(const std::string& s, const char* prefix) {
  return s.compare(0, std::char_traits<char>::length(prefix), prefix) == 0;
}

/// Measure of the union of [start, end) intervals: sort by start, merge
/// overlapping or touching runs, add the lengths of the merged runs.
double union_length(std::vector<std::pair<double, double>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  double total = 0;
  bool open = false;
  double run_start = 0, run_end = 0;
  for (const auto& [start, end] : intervals) {
    if (open && start <= run_end) {
      run_end = std::max(run_end, end);
      continue;
    }
    if (open) total += run_end - run_start;
    run_start = start;
    run_end = end;
    open = true;
  }
  if (open) total += run_end - run_start;
  return total;
}

/// First kernel start and last kernel end of one partition.
struct kernel_extent {
  double first_start = 0;
  double last_end = 0;
};

device_utilization summarize_device(int device,
                                    const std::vector<const partition_timeline*>& parts) {
  device_utilization u;
  u.device = device;
  u.partitions = parts.size();

  std::vector<std::pair<double, double>> intervals;
  std::vector<kernel_extent> kernels;
  double first = std::numeric_limits<double>::infinity();
  double last = -std::numeric_limits<double>::infinity();
  for (const partition_timeline* part : parts) {
    bool has_kernel = false;
    kernel_extent k{std::numeric_limits<double>::infinity(),
                    -std::numeric_limits<double>::infinity()};
    for (const timed_span& s : part->spans) {
      const double end = std::max(s.start_ms, s.end_ms);
      intervals.emplace_back(s.start_ms, end);
      first = std::min(first, s.start_ms);
      last = std::max(last, end);
      if (is_transfer(s.name)) continue;
      has_kernel = true;
      k.first_start = std::min(k.first_start, s.start_ms);
      k.last_end = std::max(k.last_end, end);
    }
    if (has_kernel) kernels.push_back(k);
  }
  if (intervals.empty()) return u;

  u.first_ms = first;
  u.last_ms = last;
  u.wall_ms = last - first;
  u.busy_ms = union_length(std::move(intervals));
  u.busy_fraction = u.wall_ms > 0 ? u.busy_ms / u.wall_ms : 0;

  std::sort(kernels.begin(), kernels.end(), [](const kernel_extent& x, const kernel_extent& y) {
    return x.first_start < y.first_start;
  });
  for (std::size_t i = 1; i < kernels.size(); ++i)
    u.gaps_ms.push_back(std::max(0.0, kernels[i].first_start - kernels[i - 1].last_end));
  if (!u.gaps_ms.empty()) {
    u.gap_p50_ms = percentile(u.gaps_ms, 50);
    u.gap_p99_ms = percentile(u.gaps_ms, 99);
    u.gap_max_ms = *std::max_element(u.gaps_ms.begin(), u.gaps_ms.end());
  }
  return u;
}

}  // namespace

bool is_transfer(const std::string& span_name) {
  return starts_with(span_name, "upload") || starts_with(span_name, "download") ||
         starts_with(span_name, "h2d") || starts_with(span_name, "d2h");
}

std::vector<device_utilization> summarize(const std::vector<partition_timeline>& timelines) {
  std::map<int, std::vector<const partition_timeline*>> by_device;  // ascending ids
  for (const partition_timeline& t : timelines) by_device[t.device].push_back(&t);
  std::vector<device_utilization> out;
  out.reserve(by_device.size());
  for (const auto& [device, parts] : by_device) out.push_back(summarize_device(device, parts));
  return out;
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double q = std::clamp(p, 0.0, 100.0);
  // Nearest rank: the ceil(q * n / 100)-th smallest value, at least the
  // first. q * n is exact for whole q, so 99% of 100 values is rank 99.
  const auto n = static_cast<double>(values.size());
  auto rank = static_cast<std::size_t>(std::ceil(q * n / 100.0));
  rank = std::clamp<std::size_t>(rank, 1, values.size());
  return values[rank - 1];
}

}  // namespace proofline::observe
