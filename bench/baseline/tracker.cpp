#include "bench/baseline/tracker.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <utility>

namespace proofline::bench::baseline {

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

void duration_stats::add(double ms) {
  ++count;
  total_ms += ms;
  max_ms = std::max(max_ms, ms);
}

job_tracker::job_tracker(std::vector<job_record> jobs, std::vector<partition_record> parts,
                         std::function<void()> trim, run_clock clock)
    : clock_(clock), trim_(std::move(trim)) {
  s_.jobs = std::move(jobs);
  s_.parts = std::move(parts);
}

std::unique_lock<std::mutex> job_tracker::lock(role who) {
  auto t0 = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> held(mu_);
  s_.waits[static_cast<int>(who)].add(ms_since(t0));
  return held;
}

void job_tracker::proving(std::size_t p, int device, int lane) {
  auto held = lock(role::gpu_worker);
  auto& rec = s_.parts.at(p);
  rec.state = part_state::proving;
  rec.device = device;
  rec.lane = lane;
}

void job_tracker::proved(std::size_t p, std::vector<gpu::span> spans) {
  auto held = lock(role::gpu_worker);
  auto& rec = s_.parts.at(p);
  rec.state = part_state::proved;
  rec.spans = std::move(spans);
}

void job_tracker::finalized(std::size_t p) {
  auto held = lock(role::finalizer);
  finish(p, part_state::done);
  if (!trim_) return;
  // With the lock held, as the prover this baseline stands for does it.
  auto t0 = std::chrono::steady_clock::now();
  trim_();
  s_.trims.add(ms_since(t0));
}

void job_tracker::failed(std::size_t p, std::string error, role who) {
  auto held = lock(who);
  s_.parts.at(p).error = std::move(error);
  finish(p, part_state::failed);
}

void job_tracker::finish(std::size_t p, part_state how) {
  auto& rec = s_.parts.at(p);
  rec.state = how;
  auto& job = s_.jobs.at(rec.job);
  ++(how == part_state::done ? job.done : job.failed);
  if (job.done + job.failed < job.partitions) return;
  job.finished_ms = clock_.now_ms();
  if (job.failed == 0)
    spdlog::info("job {} done: {} partition(s) at {:.1f} ms", job.id, job.partitions,
                 job.finished_ms);
  else
    spdlog::warn("job {} failed: {} of {} partition(s) failed", job.id, job.failed, job.partitions);
}

job_tracker::summary job_tracker::summarize() {
  std::lock_guard<std::mutex> held(mu_);
  return s_;
}

}  // namespace proofline::bench::baseline
