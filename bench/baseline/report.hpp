// The baseline's run report: the keys of `proofline run --report` (proofs,
// wall_s, proofs_per_s, gpus[{device, name, gpu_busy_fraction,
// handoff_gap_ms{p50, p99, max}}], memory, purge) computed with the same
// observe/utilization.hpp, plus what only the baseline has: malloc_trim calls
// and the time each role waited for the tracker's lock.
//
//   timelines(result)        each proved partition's device spans, in ms
//                            since the run started
//   report_json(...)         the report as JSON text
//   print_summary(...)       the human summary on stdout
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "bench/baseline/engine.hpp"
#include "observe/utilization.hpp"

namespace proofline::bench::baseline {

/// What the report says about the devices: one entry per backend object.
struct device_info {
  std::string name;  ///< "NVIDIA H200", or the CPU backend's description
  std::string kind;  ///< "cuda" or "cpu"
  unsigned lanes = 1;
};

/// "CUDA device 0: NVIDIA H200 (132 SMs, ...)" -> "NVIDIA H200"; anything
/// else unchanged.
std::string device_name(const std::string& describe);

/// The device spans of every partition that reached its backend, on the
/// run's clock (ms since the run started), device = backend index.
std::vector<observe::partition_timeline> timelines(const engine_result& r);

/// The report, pretty-printed JSON with a trailing newline.
std::string report_json(const engine_result& r, const std::vector<device_info>& devices,
                        const engine_config& cfg);

/// Proofs, throughput, per-device busy fraction and gaps, trims and lock waits.
void print_summary(std::ostream& out, const engine_result& r,
                   const std::vector<device_info>& devices);

}  // namespace proofline::bench::baseline
