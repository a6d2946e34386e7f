// The run as lanes of spans, and as a Chrome trace-event file (`--trace FILE`,
// opens in Perfetto and chrome://tracing).
//
//   lane_span, lane     one interval; one horizontal track of disjoint intervals
//   build_lanes(rec)    the lanes of a run, shared by the trace and the HTML
//                       report: one per synthesizer; per GPU a "busy" lane (the
//                       union of its device spans, so gaps show), per GPU-worker
//                       lane its device spans and its host-side prove() calls,
//                       and a "key preparation" lane when keys were uploaded
//                       or got tables there; one per finalizer; the memory
//                       manager's purges
//   union_of(spans)     merged intervals of a set of spans
//   trace_json(rec)     trace-event JSON: a process per group, a thread per
//                       lane, complete ("X") events, counters for the queues,
//                       memory and NVML utilization
//
// Device spans are what the backend reported (CUDA events on a GPU), never
// host guesses; the prove() lanes are the host's view, kept apart so both show.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "observe/report.hpp"

namespace proofline::observe {

/// One interval drawn on a lane, in ms since the run started.
struct lane_span {
  std::string name;      ///< "batch/2" for a partition's stage, "ntt_a" for a device span
  std::string category;  ///< synthesize, prove, device, transfer, busy, finalize, purge, key
  double start_ms = 0;
  double end_ms = 0;
  std::string job;         ///< the job's id, empty for spans of no partition
  int64_t partition = -1;  ///< the partition's index, -1 for none
};

/// One track: spans sorted by start that never overlap.
struct lane {
  std::string group;  ///< "synthesizers", "GPU 0", "finalizers", "memory manager"
  std::string name;   ///< "synthesizer 0", "busy", "lane 0 device", "purges", ...
  std::vector<lane_span> spans;
};

/// The lanes of a run in display order. Spans that would overlap on one
/// track (none should) go to an extra track named "<name> #2", so every lane
/// stays disjoint as the trace format needs. O(S log S).
std::vector<lane> build_lanes(const run_record& rec);

/// The union of [start, end) intervals as sorted, disjoint intervals.
std::vector<std::pair<double, double>> union_of(std::vector<std::pair<double, double>> spans);

/// The display name of backend `device` of `rec`: "GPU 0" on CUDA, "CPU
/// backend" for a CPU backend (whose spans stand for the GPU's).
std::string group_name(const run_record& rec, int device);

/// Chrome trace-event JSON of the run (compact).
std::string trace_json(const run_record& rec);

}  // namespace proofline::observe
