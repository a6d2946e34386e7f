#include "actors/gpu_worker.hpp"

#include "actors/detail/spawn.hpp"

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/spawn_options.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <utility>

#include "gpu/device_lost.hpp"

namespace proofline {

namespace {

/// The backend as result.json names it: "cuda:0", "cpu:fallback".
std::string backend_label(const gpu_worker_config& cfg) {
  return std::string(cfg.backend->kind()) + ":" +
         (cfg.fallback ? std::string("fallback") : std::to_string(cfg.device));
}

/// The backend's spans (microseconds on the steady clock since its epoch)
/// as milliseconds since the run started.
std::vector<named_span> to_run_time(const std::vector<gpu::span>& spans, const run_clock& clock) {
  const double epoch_us =
      std::chrono::duration<double, std::micro>(clock.epoch().time_since_epoch()).count();
  std::vector<named_span> out;
  out.reserve(spans.size());
  for (const auto& s : spans)
    out.push_back({s.name, (s.start_us - epoch_us) / 1000.0, (s.end_us - epoch_us) / 1000.0});
  return out;
}

class gpu_worker_state {
 public:
  static inline const char* name = "gpu_worker";
  using pointer = gpu_worker_actor::stateful_pointer<gpu_worker_state>;

  explicit gpu_worker_state(pointer self) : self(self) {}

  gpu_worker_actor::behavior_type make_behavior(gpu_worker_config config);

 private:
  // ---- handlers
  /// Proves the oldest held partition, if any, and schedules the next.
  void prove_next();
  /// Makes `key` ready on the device (gpu::backend::prepare) and tells the
  /// scheduler whether it is (a failure: the device cannot hold the key; a
  /// gpu::device_lost: the device is lost).
  void prepare_key(const zk::groth16::key_ptr& key);
  /// A partition arrived from the scheduler: hold it, start proving if idle.
  void on_partition(const synthesized_partition& p);

  // ---- helpers
  /// Requests partitions until `lookahead` are held or on their way.
  void refill();
  /// After a partition of `key`: if its window tables were built since it was
  /// prepared, sends the key cache its preparation again with them.
  void report_tables(const zk::groth16::key_ptr& key);
  /// The GPU_TIMING line of a proved partition: each device span's duration
  /// (upload, each NTT, each MSM, download), key=value, at debug level.
  void log_gpu_timing(const partition_ref& part) const;

  // ---- data
  pointer self;
  gpu_worker_config cfg;
  std::deque<synthesized_partition> held;  // received, not yet started
  unsigned requested = 0;                  // pulls outstanding at the scheduler
  bool running = false;                    // a run message is queued or being handled
  size_t next_finalizer = 0;
  uint64_t proved = 0;
  /// Keys prepared here on plain points: the backend may build their window
  /// tables later, between partitions; once it has, the preparation goes to
  /// the key cache again with the build's time and span.
  std::vector<std::pair<std::weak_ptr<const zk::groth16::proving_key_base>, key_preparation>>
      without_tables;
};

gpu_worker_actor::behavior_type gpu_worker_state::make_behavior(gpu_worker_config config) {
  cfg = std::move(config);
  if (cfg.lookahead == 0) cfg.lookahead = 1;
  spdlog::debug("gpu worker: {}", cfg.backend->describe());
  refill();
  return {
      [this](run_atom) { prove_next(); },
      [this](prepare_atom, const zk::groth16::key_ptr& key) { prepare_key(key); },
      [this](evict_key_atom, const zk::groth16::key_ptr& key) { cfg.backend->evict(key.get()); },
  };
}

void gpu_worker_state::refill() {
  while (held.size() + requested < cfg.lookahead) {
    ++requested;
    self->request(cfg.scheduler, caf::infinite, partition_pull_atom::value,
                  static_cast<int32_t>(cfg.device))
        .then([=](const synthesized_partition& p) { on_partition(p); },
              // The scheduler is gone (shutting down) or took this device out
              // of service; what this worker holds is queued again there.
              [=](caf::error&) { self->quit(); });
  }
}

void gpu_worker_state::on_partition(const synthesized_partition& p) {
  --requested;
  held.push_back(p);
  if (!running) {
    running = true;
    self->send(self, run_atom::value);
  }
}

void gpu_worker_state::prove_next() {
  if (held.empty()) {
    // Ran dry after proving something: the next partition was not ready in
    // time. The memory manager decides whether wider pacing would help.
    if (running && proved > 0) self->send(cfg.memory, starved_atom::value);
    running = false;
    return;
  }
  synthesized_partition p = std::move(held.front());
  held.pop_front();
  refill();  // the next partition travels while this one computes
  if (p.part.job->cancelled.load(std::memory_order_acquire)) {
    p.reservation->release_all();  // cancelled job: drop it, free its memory
    self->send(cfg.scheduler, worker_done_atom::value, p.part.job->seq, p.part.index);
    self->send(self, run_atom::value);
    return;
  }

  partition_ref part = p.part;
  self->send(cfg.memory, taken_atom::value, p.reservation->id());
  self->send(cfg.registry, stage_atom::value, part.job->seq, part.index, partition_state::proving);
  gpu::prove_hooks hooks;
  std::vector<gpu::span> device_spans;
  hooks.spans = &device_spans;
  auto reservation = p.reservation;
  uint64_t bulk = p.bulk;
  hooks.inputs_consumed = [reservation, bulk] { reservation->release(bulk); };
  part.spans.prove.start = cfg.clock.now_ms();
  gpu::result_ptr result;
  std::string problem;
  bool lost = false;
  try {
    result = cfg.backend->prove(part.job->key, p.data, hooks);
    if (!result) problem = "the backend returned no result";
  } catch (const gpu::device_lost& e) {
    problem = e.what();
    lost = true;
  } catch (const std::exception& e) {
    problem = e.what();
  }
  part.spans.prove.end = cfg.clock.now_ms();
  part.spans.gpu = cfg.device;
  part.spans.lane = cfg.lane;
  part.spans.backend = backend_label(cfg);
  part.spans.device = to_run_time(device_spans, cfg.clock);

  if (!result) {
    reservation->release_all();
    const std::string& witness = part.witness();
    // A backend fault, not an input problem (those fail in synthesis): no
    // file is at fault, though the message names the witness it was proving;
    // retryable. The scheduler drops its copy, counts the failure against
    // the device and passes it to the registry, which places the retry.
    file_error err{"", witness + ": " + cfg.backend->describe() + ": " + problem};
    partition_failure f{part.job->seq, part.index, part.spans, std::move(err), true};
    f.device_lost = lost;
    self->send(cfg.scheduler, worker_failed_atom::value, std::move(f));
    if (lost) {
      // The device is unusable until the process ends: nothing more is
      // proved here. The scheduler queues what this worker holds for the
      // other backends (not retries: those partitions did not fail).
      spdlog::error("{} ({}): device lost: {}; its partitions go to other backends",
                    part.spans.backend, cfg.backend->describe(), problem);
      self->quit();
      return;
    }
  } else {
    ++proved;
    self->send(cfg.scheduler, worker_done_atom::value, part.job->seq, part.index);
    if (spdlog::should_log(spdlog::level::debug)) log_gpu_timing(part);
    zk::groth16::key_ptr key = part.job->key;
    auto& fin = cfg.finalizers[next_finalizer++ % cfg.finalizers.size()];
    self->send(fin, finalize_atom::value,
               proved_partition{std::move(part), std::move(reservation), std::move(p.data),
                                std::move(result), p.arena});
    // After the proof is on its way: asking the backend about tables takes its lock.
    if (!without_tables.empty()) report_tables(key);
  }
  self->send(self, run_atom::value);
}

void gpu_worker_state::log_gpu_timing(const partition_ref& part) const {
  // "upload_us=... ntt_a_us=... msm_h_us=... download_us=..." in the order
  // the backend reported them; a name reported twice is summed.
  std::vector<std::pair<std::string, double>> steps;
  for (const auto& s : part.spans.device) {
    auto it = std::find_if(steps.begin(), steps.end(),
                           [&](const auto& step) { return step.first == s.name; });
    double us = std::max(0.0, s.end - s.start) * 1000.0;
    if (it == steps.end())
      steps.emplace_back(s.name, us);
    else
      it->second += us;
  }
  std::string fields;
  for (const auto& [name, us] : steps) fields += fmt::format(" {}_us={:.0f}", name, us);
  spdlog::debug("GPU_TIMING job={} partition={} backend={} gpu={} lane={}{} prove_us={:.0f}",
                part.job->spec.id, part.index, cfg.backend->kind(), part.spans.gpu,
                part.spans.lane, fields, (part.spans.prove.end - part.spans.prove.start) * 1000.0);
}

void gpu_worker_state::prepare_key(const zk::groth16::key_ptr& key) {
  key_preparation p;
  p.gpu = cfg.device;
  p.prepare.start = cfg.clock.now_ms();
  try {
    auto stats = cfg.backend->prepare_measured(key);
    p.prepare.end = cfg.clock.now_ms();
    p.to_device_ms = stats.to_device_ms;
    p.tables_ms = stats.tables_ms;
    p.tables_bytes = stats.tables_bytes;
    p.device_bytes = stats.device_bytes;
    p.abc_bytes = stats.abc_bytes;
    p.spans = to_run_time(stats.spans, cfg.clock);
    spdlog::debug("gpu {}: key {} ready in {:.1f} ms", cfg.device, key->path,
                  p.prepare.end - p.prepare.start);
    if (cfg.keys) self->send(cfg.keys, prepared_atom::value, key, p);
    if (cfg.keys && stats.resident && !stats.tables)
      without_tables.emplace_back(key, p);
    self->send(cfg.scheduler, residency_atom::value, key, static_cast<int32_t>(cfg.device), true,
               std::string());
  } catch (const gpu::device_lost& e) {
    // A sticky device error while preparing: the device is out of service;
    // the scheduler answers this worker's pulls with an error (it quits).
    spdlog::error("gpu {}: device lost: {}", cfg.device, e.what());
    self->send(cfg.scheduler, residency_atom::value, key, static_cast<int32_t>(cfg.device), false,
               std::string(e.what()));
    self->send(cfg.scheduler, lost_atom::value, static_cast<int32_t>(cfg.device));
  } catch (const std::exception& e) {
    // This device cannot hold the key (device memory, a CUDA fault): the
    // scheduler gives its partitions to the devices that can.
    self->send(cfg.scheduler, residency_atom::value, key, static_cast<int32_t>(cfg.device), false,
               std::string(e.what()));
  }
}

void gpu_worker_state::report_tables(const zk::groth16::key_ptr& key) {
  auto& list = without_tables;
  for (auto it = list.begin(); it != list.end();) {
    auto held = it->first.lock();
    if (!held) {
      it = list.erase(it);  // the key is gone
      continue;
    }
    if (held != key) {
      ++it;
      continue;
    }
    // A lock and an event query in the backend, once per partition of a key
    // that has no tables yet.
    auto stats = cfg.backend->key_stats(key.get());
    if (!stats.resident) {
      it = list.erase(it);  // evicted: a later preparation reports afresh
      continue;
    }
    if (!stats.tables) return;
    key_preparation p = it->second;
    p.tables_ms = stats.tables_ms;
    p.tables_bytes = stats.tables_bytes;
    p.device_bytes = stats.device_bytes;
    p.abc_bytes = stats.abc_bytes;
    p.spans = to_run_time(stats.spans, cfg.clock);
    self->send(cfg.keys, prepared_atom::value, key, p);
    list.erase(it);
    return;
  }
}

}  // namespace

gpu_worker_actor spawn_gpu_worker(caf::actor_system& sys, gpu_worker_config cfg) {
  const bool on_own_thread = cfg.detached;
  return spawn_stateful<gpu_worker_state>(sys, std::move(cfg), on_own_thread);
}

}  // namespace proofline
