#include "actors/synthesizer.hpp"

#include "actors/detail/spawn.hpp"

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/spawn_options.hpp>

#include <algorithm>

#include <spdlog/spdlog.h>

#include "memory/thread_arena.hpp"
#include "zk/formats/error.hpp"

namespace proofline {

namespace {

class synthesizer_state {
 public:
  static inline const char* name = "synthesizer";
  using pointer = synthesizer_actor::stateful_pointer<synthesizer_state>;

  explicit synthesizer_state(pointer self) : self(self) {}

  synthesizer_actor::behavior_type make_behavior(synthesizer_config config);

 private:
  // ---- handlers
  /// The first message, on the actor's own thread: binds the thread to the
  /// synthesizer's arena and names it, then asks for work.
  void start();
  /// A grant arrived: synthesize it, then ask for the next.
  void on_grant(const grant& g);

  // ---- helpers
  /// Asks the memory manager for work unless a request is already out.
  void ask_for_work();
  /// Synthesizes one granted partition and hands it on (or reports its failure).
  void synthesize_granted(const grant& g);

  // ---- data
  pointer self;
  synthesizer_config cfg;
  bool asking = false;  ///< a grant request is outstanding
  uint64_t synthesized = 0;
};

synthesizer_actor::behavior_type synthesizer_state::make_behavior(synthesizer_config config) {
  cfg = std::move(config);
  if (cfg.thread.arena && cfg.thread.arena->valid()) cfg.source = cfg.thread.arena->buffers();
  self->send(self, seek_work_atom::value);
  return {
      [this](seek_work_atom) { start(); },
  };
}

void synthesizer_state::start() {
  cfg.thread.bind();
  ask_for_work();
}

void synthesizer_state::ask_for_work() {
  if (asking) return;
  asking = true;
  self->request(cfg.memory, caf::infinite, grant_request_atom::value)
      .then([=](const grant& g) { on_grant(g); },
            [=](caf::error&) { self->quit(); });  // the memory manager is gone: shutting down
}

void synthesizer_state::on_grant(const grant& g) {
  asking = false;
  synthesize_granted(g);
  ask_for_work();
}

void synthesizer_state::synthesize_granted(const grant& g) {
  partition_ref part = g.part;
  if (part.job->cancelled.load(std::memory_order_acquire)) {
    // Cancelled job: drop the partition; nothing waits for its ticket.
    g.reservation->release_all();
    self->send(cfg.scheduler, skip_atom::value, part.ticket);
    return;
  }
  const std::string& witness = part.witness();
  self->send(cfg.scheduler, granted_atom::value, part.ticket, part.job->seq);
  self->send(cfg.registry, stage_atom::value, part.job->seq, part.index,
             partition_state::synthesizing);
  part.spans.synthesize.start = cfg.clock.now_ms();
  part.spans.synthesizer = self->id();
  synthesis_timing t;
  gpu::partition_ptr data;
  file_error error;
  try {
    // witness, a, b, c into the pool block when there is one (no copy before
    // the upload); otherwise into this synthesizer's arena.
    const job_payload::bytes bytes = part.job->witness_bytes(part.index);
    const job_spec& spec = part.job->spec;
    std::string keep;
    if (!spec.witness_generator.empty() && spec.keep_witness && !part.job->returns_outputs())
      keep = part.job->out_path(spec.single ? "witness.wtns"
                                            : "witness_" + std::to_string(part.index) + ".wtns");
    synthesis_request req{{witness, bytes.data, bytes.size, part.job->generator.get(), keep,
                           part.job->constraints.get()},
                          g.block ? g.block->buffers() : cfg.source,
                          std::max<uint32_t>(1, g.threads)};
    data = cfg.synthesize(part.job->key, req, t);
    if (!data) error = {witness, witness + ": synthesis produced no partition"};
  } catch (const zk::formats::format_error& e) {
    error = {e.file(), e.what()};
  } catch (const std::exception& e) {
    error = {witness, witness + ": " + e.what()};
  }
  part.spans.synthesize.end = cfg.clock.now_ms();
  if (t.recorded && t.generated) {
    // Witness generation runs first inside the synthesis.
    part.spans.witness.start = part.spans.synthesize.start;
    part.spans.witness.end = std::min(part.spans.synthesize.end,
                                      part.spans.synthesize.start + t.read_witness_us / 1000.0);
  }
  if (!data) {
    g.reservation->release_all();
    self->send(cfg.scheduler, skip_atom::value, part.ticket);
    self->send(cfg.registry, partition_failed_atom::value,
               partition_failure{part.job->seq, part.index, part.spans, std::move(error)});
    return;
  }
  ++synthesized;
  // thread.allocated counts every allocation, freed or not: above the peak
  // that was reserved, so only a clear excess is reported.
  if (t.generated && t.generator_bytes > part.job->generator_bytes + part.job->generator_bytes / 2)
    spdlog::warn("{}: the witness generator allocated {} bytes for partition {} of job \"{}\", "
                 "above the {} bytes reserved for it",
                 part.job->spec.witness_generator, t.generator_bytes, part.index,
                 part.job->spec.id, part.job->generator_bytes);
  // One key=value line per partition (--log-level debug): where synthesis
  // spent its time; -1 where the synthesize op does not report its steps.
  spdlog::debug(
      "SYNTH_TIMING job={} partition={} synthesizer={} {}={:.0f} abc_us={:.0f} "
      "abc_threads={} total_us={:.0f} pool={} witness_bytes={}",
      part.job->spec.id, part.index, cfg.thread.name,
      t.generated ? "witness_gen_us" : "read_witness_us", t.recorded ? t.read_witness_us : -1.0,
      t.recorded ? t.abc_us : -1.0, t.recorded ? t.threads : 1u,
      (part.spans.synthesize.end - part.spans.synthesize.start) * 1000.0, g.block ? 1 : 0,
      t.generator_bytes);
  self->send(cfg.scheduler, ready_atom::value,
             synthesized_partition{std::move(part), g.reservation, g.bulk, std::move(data),
                                   cfg.source.arena});
}

}  // namespace

synthesizer_actor spawn_synthesizer(caf::actor_system& sys, synthesizer_config cfg) {
  const bool on_own_thread = cfg.thread.own_thread;
  return spawn_stateful<synthesizer_state>(sys, std::move(cfg), on_own_thread);
}

}  // namespace proofline
