#include "actors/finalizer.hpp"

#include <caf/event_based_actor.hpp>

#include <spdlog/spdlog.h>

#include "zk/formats/error.hpp"

namespace proofline {

finalizer_actor::behavior_type finalizer(finalizer_pointer self, finalizer_config cfg) {
  self->state.cfg = std::move(cfg);
  return {
      // Taken by mutable reference: the sender moved the message in, so this
      // does not copy (CAF copies only a shared message, and then only the
      // handles), and it lets finalize_partition drop the buffers.
      [=](finalize_atom, proved_partition& p) { finalize_partition(self, p); },
  };
}

void finalize_partition(finalizer_pointer self, proved_partition& p) {
  auto& cfg = self->state.cfg;
  partition_ref part = p.part;
  const job_context& job = *part.job;
  part.spans.finalize.start = cfg.clock.now_ms();
  std::string proof_name = job.proof_name(part.index);
  std::string public_name = job.public_name(part.index);
  file_error error;
  bool ok = false;
  try {
    auto files = cfg.finalize(job.key, p.data, p.result);
    cfg.write_file(job.out_path(proof_name), files.proof_json);
    cfg.write_file(job.out_path(public_name), files.public_json);
    ok = true;
  } catch (const zk::formats::format_error& e) {
    error = {e.file(), e.what()};
  } catch (const std::exception& e) {
    // write_file_atomic's errors already start with the path.
    error = {job.out_path(proof_name), e.what()};
  }
  p.data.reset();
  p.result.reset();
  int arena = p.arena;
  p.reservation->release_all();
  p.reservation.reset();
  self->send(cfg.memory, purge_atom::value, arena);
  part.spans.finalize.end = cfg.clock.now_ms();
  if (ok) {
    ++self->state.finalized;
    self->send(cfg.registry, done_atom::value,
               partition_done{job.seq, part.index, part.spans, proof_name, public_name});
  } else {
    self->send(cfg.registry, failed_atom::value,
               partition_failure{job.seq, part.index, part.spans, std::move(error)});
  }
}

}  // namespace proofline
