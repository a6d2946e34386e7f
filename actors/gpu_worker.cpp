#include "actors/gpu_worker.hpp"

#include <caf/event_based_actor.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include "gpu/device_lost.hpp"

namespace proofline {

gpu_worker_actor::behavior_type gpu_worker(gpu_worker_pointer self, gpu_worker_config cfg) {
  if (cfg.lookahead == 0) cfg.lookahead = 1;
  self->state.cfg = std::move(cfg);
  spdlog::debug("gpu worker: {}", self->state.cfg.backend->describe());
  refill(self);
  return {
      [=](run_atom) { prove_next(self); },
      [=](prepare_atom, const zk::groth16::key_ptr& key) { prepare_key(self, key); },
      [=](evict_key_atom, const zk::groth16::key_ptr& key) {
        self->state.cfg.backend->evict(key.get());
      },
  };
}

void refill(gpu_worker_pointer self) {
  auto& st = self->state;
  while (st.held.size() + st.requested < st.cfg.lookahead) {
    ++st.requested;
    self->request(st.cfg.scheduler, caf::infinite, partition_pull_atom::value,
                  static_cast<int32_t>(st.cfg.device))
        .then([=](const synthesized_partition& p) { on_partition(self, p); },
              // The scheduler is gone (shutting down) or took this device out
              // of service; what this worker holds is queued again there.
              [=](caf::error&) { self->quit(); });
  }
}

void on_partition(gpu_worker_pointer self, const synthesized_partition& p) {
  auto& st = self->state;
  --st.requested;
  st.held.push_back(p);
  if (!st.running) {
    st.running = true;
    self->send(self, run_atom::value);
  }
}

void prove_next(gpu_worker_pointer self) {
  auto& st = self->state;
  if (st.held.empty()) {
    // Ran dry after proving something: the next partition was not ready in
    // time. The memory manager decides whether wider pacing would help.
    if (st.running && st.proved > 0) self->send(st.cfg.memory, starved_atom::value);
    st.running = false;
    return;
  }
  synthesized_partition p = std::move(st.held.front());
  st.held.pop_front();
  refill(self);  // the next partition travels while this one computes
  if (p.part.job->cancelled.load(std::memory_order_acquire)) {
    p.reservation->release_all();  // cancelled job: drop it, free its memory
    self->send(st.cfg.scheduler, worker_done_atom::value, p.part.job->seq, p.part.index);
    self->send(self, run_atom::value);
    return;
  }

  auto& cfg = st.cfg;
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
    ++st.proved;
    self->send(cfg.scheduler, worker_done_atom::value, part.job->seq, part.index);
    if (spdlog::should_log(spdlog::level::debug)) log_gpu_timing(self, part);
    zk::groth16::key_ptr key = part.job->key;
    auto& fin = cfg.finalizers[st.next_finalizer++ % cfg.finalizers.size()];
    self->send(fin, finalize_atom::value,
               proved_partition{std::move(part), std::move(reservation), std::move(p.data),
                                std::move(result), p.arena});
    // After the proof is on its way: asking the backend about tables takes its lock.
    if (!st.without_tables.empty()) report_tables(self, key);
  }
  self->send(self, run_atom::value);
}

std::string backend_label(const gpu_worker_config& cfg) {
  return std::string(cfg.backend->kind()) + ":" +
         (cfg.fallback ? std::string("fallback") : std::to_string(cfg.device));
}

void log_gpu_timing(gpu_worker_pointer self, const partition_ref& part) {
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
  const auto& cfg = self->state.cfg;
  spdlog::debug("GPU_TIMING job={} partition={} backend={} gpu={} lane={}{} prove_us={:.0f}",
                part.job->spec.id, part.index, cfg.backend->kind(), part.spans.gpu,
                part.spans.lane, fields, (part.spans.prove.end - part.spans.prove.start) * 1000.0);
}

void prepare_key(gpu_worker_pointer self, const zk::groth16::key_ptr& key) {
  auto& cfg = self->state.cfg;
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
      self->state.without_tables.emplace_back(key, p);
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

void report_tables(gpu_worker_pointer self, const zk::groth16::key_ptr& key) {
  auto& st = self->state;
  auto& list = st.without_tables;
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
    auto stats = st.cfg.backend->key_stats(key.get());
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
    p.spans = to_run_time(stats.spans, st.cfg.clock);
    self->send(st.cfg.keys, prepared_atom::value, key, p);
    list.erase(it);
    return;
  }
}

std::vector<named_span> to_run_time(const std::vector<gpu::span>& spans, const run_clock& clock) {
  const double epoch_us =
      std::chrono::duration<double, std::micro>(clock.epoch().time_since_epoch()).count();
  std::vector<named_span> out;
  out.reserve(spans.size());
  for (const auto& s : spans)
    out.push_back({s.name, (s.start_us - epoch_us) / 1000.0, (s.end_us - epoch_us) / 1000.0});
  return out;
}

}  // namespace proofline
