#include "actors/synthesizer.hpp"

#include <caf/event_based_actor.hpp>

#include <spdlog/spdlog.h>

#include "zk/formats/error.hpp"

namespace proofline {

synthesizer_actor::behavior_type synthesizer(synthesizer_pointer self, synthesizer_config cfg) {
  self->state.cfg = std::move(cfg);
  self->send(self, pull_atom::value);
  return {
      [=](pull_atom) { ask_for_work(self); },
  };
}

void ask_for_work(synthesizer_pointer self) {
  if (self->state.asking) return;
  self->state.asking = true;
  self->request(self->state.cfg.memory, caf::infinite, pull_atom::value)
      .then([=](const grant& g) { on_grant(self, g); },
            [=](caf::error&) { self->quit(); });  // the memory manager is gone: shutting down
}

void on_grant(synthesizer_pointer self, const grant& g) {
  self->state.asking = false;
  synthesize_granted(self, g);
  ask_for_work(self);
}

void synthesize_granted(synthesizer_pointer self, const grant& g) {
  auto& cfg = self->state.cfg;
  partition_ref part = g.part;
  const std::string& witness = part.witness();
  self->send(cfg.registry, stage_atom::value, part.job->seq, part.index,
             partition_state::synthesizing);
  part.spans.synthesize.start = cfg.clock.now_ms();
  gpu::partition_ptr data;
  file_error error;
  try {
    data = cfg.synthesize(part.job->key, witness, cfg.source);
    if (!data) error = {witness, witness + ": synthesis produced no partition"};
  } catch (const zk::formats::format_error& e) {
    error = {e.file(), e.what()};
  } catch (const std::exception& e) {
    error = {witness, witness + ": " + e.what()};
  }
  part.spans.synthesize.end = cfg.clock.now_ms();
  if (!data) {
    g.reservation->release_all();
    self->send(cfg.scheduler, skip_atom::value, part.ticket);
    self->send(cfg.registry, failed_atom::value,
               partition_failure{part.job->seq, part.index, part.spans, std::move(error)});
    return;
  }
  ++self->state.synthesized;
  spdlog::debug("synthesized {} partition {} in {:.1f} ms", part.job->spec.id, part.index,
                part.spans.synthesize.end - part.spans.synthesize.start);
  self->send(cfg.scheduler, ready_atom::value,
             synthesized_partition{std::move(part), g.reservation, g.bulk, std::move(data),
                                   cfg.source.arena});
}

}  // namespace proofline
