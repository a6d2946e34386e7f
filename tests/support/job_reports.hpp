// Job reports as the registry hands them out, built by hand for the tests of
// what reads them (tests/observe: the summary, the HTML page, the report and
// the trace).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "messages/catalogue.hpp"
#include "observe/report.hpp"

namespace proofline::test {

/// Job `id`, written to "out/<id>", in `state`, with one partition per entry
/// of `partitions` in that state, from submission to completion `total`.
inline job_report job_with(std::string id, job_state state,
                           const std::vector<partition_state>& partitions, span_ms total = {}) {
  job_report j;
  j.out = "out/" + id;
  j.id = std::move(id);
  j.state = state;
  j.partitions.resize(partitions.size());
  for (size_t i = 0; i < partitions.size(); ++i) j.partitions[i].state = partitions[i];
  j.total = total;
  return j;
}

/// A failed job whose first failed partition read `file` and found
/// `message`.
inline job_report failed_job(std::string id, const std::vector<partition_state>& partitions,
                             std::string file, std::string message, span_ms total = {}) {
  job_report j = job_with(std::move(id), job_state::failed, partitions, total);
  j.has_error = true;
  j.error = {std::move(file), std::move(message)};
  return j;
}

/// A done partition proved on `gpu` lane `lane` with the given device spans;
/// its stages end to end around them: synthesis 5..1 ms before the first
/// device span, prove() 0.5 ms either side of them, finalization 1..3 ms
/// after the last.
inline partition_report proved(uint32_t index, int gpu, int lane, std::vector<named_span> device,
                               uint64_t synthesizer = 11, uint64_t finalizer = 21) {
  partition_report p;
  p.index = index;
  p.state = partition_state::done;
  double first = device.empty() ? 0 : device.front().start;
  double last = device.empty() ? 0 : device.back().end;
  p.spans.synthesize = {first - 5, first - 1};
  p.spans.prove = {first - 0.5, last + 0.5};
  p.spans.finalize = {last + 1, last + 3};
  p.spans.device = std::move(device);
  p.spans.gpu = gpu;
  p.spans.lane = lane;
  p.spans.synthesizer = synthesizer;
  p.spans.finalizer = finalizer;
  return p;
}

/// A run of `jobs` on one CUDA device `device` with `lanes` worker lanes,
/// named "CUDA device <device>: Test GPU", and the given pool sizes.
inline observe::run_record one_gpu_run(double wall_ms, int device, unsigned lanes,
                                       unsigned synthesizers, unsigned finalizers,
                                       std::vector<job_report> jobs) {
  observe::run_record rec;
  rec.wall_ms = wall_ms;
  rec.synthesizers = synthesizers;
  rec.finalizers = finalizers;
  rec.backends.push_back(
      {"cuda", "CUDA device " + std::to_string(device) + ": Test GPU", device, lanes});
  rec.jobs = std::move(jobs);
  return rec;
}

}  // namespace proofline::test
