#include "actors/gpu_worker.hpp"

#include <caf/event_based_actor.hpp>

#include <spdlog/spdlog.h>

namespace proofline {

gpu_worker_actor::behavior_type gpu_worker(gpu_worker_pointer self, gpu_worker_config cfg) {
  if (cfg.lookahead == 0) cfg.lookahead = 1;
  self->state.cfg = std::move(cfg);
  spdlog::debug("gpu worker: {}", self->state.cfg.backend->describe());
  refill(self);
  return {
      [=](run_atom) { prove_next(self); },
  };
}

void refill(gpu_worker_pointer self) {
  auto& st = self->state;
  while (st.held.size() + st.requested < st.cfg.lookahead) {
    ++st.requested;
    self->request(st.cfg.scheduler, caf::infinite, pull_atom::value)
        .then([=](const synthesized_partition& p) { on_partition(self, p); },
              [=](caf::error&) { self->quit(); });  // the scheduler is gone: shutting down
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

  auto& cfg = st.cfg;
  partition_ref part = p.part;
  self->send(cfg.memory, taken_atom::value, p.reservation->id());
  self->send(cfg.registry, stage_atom::value, part.job->seq, part.index, partition_state::proving);
  gpu::prove_hooks hooks;
  auto reservation = p.reservation;
  uint64_t bulk = p.bulk;
  hooks.inputs_consumed = [reservation, bulk] { reservation->release(bulk); };
  part.spans.prove.start = cfg.clock.now_ms();
  gpu::result_ptr result;
  std::string problem;
  try {
    result = cfg.backend->prove(part.job->key, p.data, hooks);
    if (!result) problem = "the backend returned no result";
  } catch (const std::exception& e) {
    problem = e.what();
  }
  part.spans.prove.end = cfg.clock.now_ms();

  if (!result) {
    reservation->release_all();
    const std::string& witness = part.witness();
    file_error err{witness, witness + ": " + cfg.backend->describe() + ": " + problem};
    self->send(cfg.registry, failed_atom::value,
               partition_failure{part.job->seq, part.index, part.spans, std::move(err)});
  } else {
    ++st.proved;
    spdlog::debug("proved {} partition {} in {:.1f} ms", part.job->spec.id, part.index,
                  part.spans.prove.end - part.spans.prove.start);
    auto& fin = cfg.finalizers[st.next_finalizer++ % cfg.finalizers.size()];
    self->send(fin, finalize_atom::value,
               proved_partition{std::move(part), std::move(reservation), std::move(p.data),
                                std::move(result), p.arena});
  }
  self->send(self, run_atom::value);
}

}  // namespace proofline
