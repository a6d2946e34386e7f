#include "actors/finalizer.hpp"

#include "actors/detail/spawn.hpp"

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/spawn_options.hpp>

#include <spdlog/spdlog.h>

#include <stdexcept>

#include "memory/thread_arena.hpp"
#include "zk/formats/error.hpp"

namespace proofline {

namespace {

/// A proof that failed its pairing self-check.
struct proof_check_failed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Step boundaries of one partition for FIN_TIMING, ms on the run clock.
struct fin_steps {
  double start = 0, assembled = 0, released = 0, requested = 0, written = 0;
};

class finalizer_state {
 public:
  static inline const char* name = "finalizer";
  using pointer = finalizer_actor::stateful_pointer<finalizer_state>;

  explicit finalizer_state(pointer self) : self(self) {}

  finalizer_actor::behavior_type make_behavior(finalizer_config config);

 private:
  // ---- handlers
  /// Assembles and checks one proof, frees its buffers, then asks the
  /// registry whether it may be written.
  void finalize_partition(proved_partition& p);

  // ---- helpers
  /// On the actor's own thread (its first message): binds the thread to the
  /// finalizer's arena and names it.
  void prepare_thread();
  /// The arena this finalizer's own allocations land in, or -1.
  int own_arena() const;
  void log_timing(const partition_ref& part, const fin_steps& t, double verify_ms, bool ok) const;
  /// The registry answered the claim for a checked proof: written and
  /// reported done (or failed, when a write fails) if granted, else dropped.
  void write_claimed(partition_ref part, const finalized_files& files, fin_steps t, bool granted);

  // ---- data
  pointer self;
  finalizer_config cfg;
  uint64_t finalized = 0;
};

finalizer_actor::behavior_type finalizer_state::make_behavior(finalizer_config config) {
  cfg = std::move(config);
  return {
      // Taken by mutable reference: the sender moved the message in, so this
      // does not copy (CAF copies only a shared message, and then only the
      // handles), and it lets finalize_partition drop the buffers.
      [this](finalize_atom, proved_partition& p) {
        prepare_thread();
        finalize_partition(p);
      },
  };
}

void finalizer_state::prepare_thread() {
  cfg.thread.bind();
}

int finalizer_state::own_arena() const {
  return cfg.thread.bound_arena();
}

void finalizer_state::log_timing(const partition_ref& part, const fin_steps& t, double verify_ms,
                                 bool ok) const {
  // One key=value line per partition (--log-level debug). release_us covers
  // dropping the buffers (freed here when this held the last handle) and the
  // reservation; purge_request_us only the messages: purges run elsewhere;
  // write_us the wait for the registry's claim and the writes.
  spdlog::debug(
      "FIN_TIMING job={} partition={} finalizer={} assembly_us={:.0f} write_us={:.0f} "
      "release_us={:.0f} purge_request_us={:.0f} total_us={:.0f} verify_us={:.0f} ok={}",
      part.job->spec.id, part.index, cfg.thread.name,
      (t.assembled - t.start) * 1000.0, (t.written - t.requested) * 1000.0,
      (t.released - t.assembled) * 1000.0, (t.requested - t.released) * 1000.0,
      (t.written - t.start) * 1000.0, verify_ms * 1000.0, ok ? 1 : 0);
}

void finalizer_state::write_claimed(partition_ref part, const finalized_files& files,
                                    fin_steps t, bool granted) {
  const job_context& job = *part.job;
  if (!granted) {  // the job was cancelled meanwhile: its record lists no proof here
    t.written = cfg.clock.now_ms();
    log_timing(part, t, files.verify_ms, false);
    return;
  }
  const std::string proof_name = job.proof_name(part.index);
  const std::string public_name = job.public_name(part.index);
  file_error error;
  try {
    if (!job.returns_outputs()) {
      cfg.write_file(job.out_path(proof_name), files.proof_json);
      cfg.write_file(job.out_path(public_name), files.public_json);
    }
  } catch (const std::exception& e) {
    // write_file_atomic's errors already start with the path.
    error = {job.out_path(proof_name), e.what()};
  }
  t.written = part.spans.finalize.end = cfg.clock.now_ms();
  const bool ok = error.message.empty();
  log_timing(part, t, files.verify_ms, ok);
  if (!ok) {
    self->send(cfg.registry, partition_failed_atom::value,
               partition_failure{job.seq, part.index, part.spans, std::move(error), false});
    return;
  }
  ++finalized;
  partition_done done;
  done.job_seq = job.seq;
  done.index = part.index;
  done.spans = part.spans;
  done.proof_file = proof_name;
  done.public_file = public_name;
  done.verified = files.verified;
  done.verify_ms = files.verify_ms;
  if (job.returns_outputs()) {  // the proof goes back in the job's report, not to a file
    done.proof_file.clear();
    done.public_file.clear();
    done.proof_json = files.proof_json;
    done.public_json = files.public_json;
  }
  self->send(cfg.registry, partition_done_atom::value, std::move(done));
}

void finalizer_state::finalize_partition(proved_partition& p) {
  partition_ref part = p.part;
  const job_context& job = *part.job;
  fin_steps t;
  t.start = part.spans.finalize.start = cfg.clock.now_ms();
  part.spans.finalizer = self->id();
  file_error error;
  bool ok = false, retryable = false, check_failed = false;
  auto files = std::make_shared<finalized_files>();
  bool cancelled = job.cancelled.load(std::memory_order_acquire);  // then nothing is assembled
  if (!cancelled) try {
    *files = cfg.finalize(job.key, p.data, p.result);
    if (files->checked && !files->verified) {
      // A bad proof is never written; the registry has the partition proved again.
      const std::string backend =
          !part.spans.backend.empty() ? "backend " + part.spans.backend
          : part.spans.gpu >= 0       ? "backend " + std::to_string(part.spans.gpu)
                                      : std::string("the backend");
      throw proof_check_failed("partition " + std::to_string(part.index) + ": the proof from " +
                               backend + " failed its pairing check (" + files->problem + ")");
    }
    ok = true;
  } catch (const zk::formats::format_error& e) {
    error = {e.file(), e.what()};
  } catch (const proof_check_failed& e) {
    error = {job.out_path(job.proof_name(part.index)), e.what()};
    retryable = check_failed = true;
  } catch (const std::exception& e) {
    error = {job.out_path(job.proof_name(part.index)), e.what()};
  }
  t.assembled = cfg.clock.now_ms();
  p.data.reset();
  p.result.reset();
  int arena = p.arena;
  p.reservation->release_all();
  p.reservation.reset();
  t.released = cfg.clock.now_ms();
  self->send(cfg.memory, purge_atom::value, arena);
  if (int mine = own_arena(); mine >= 0 && mine != arena)
    self->send(cfg.memory, purge_atom::value, mine);
  t.requested = t.written = part.spans.finalize.end = cfg.clock.now_ms();
  if (cancelled) {
    log_timing(part, t, 0, false);
    return;
  }
  if (!ok) {
    log_timing(part, t, files->verify_ms, false);
    partition_failure f{job.seq, part.index, part.spans, std::move(error), retryable};
    f.check_failed = check_failed;
    self->send(cfg.registry, partition_failed_atom::value, std::move(f));
    return;
  }
  // Written only once the registry lets it (claim_atom): a job cancelled
  // meanwhile gets no proof its record does not list.
  self->request(cfg.registry, caf::infinite, claim_atom::value, job.seq, part.index)
      .then([=](bool granted) { write_claimed(part, *files, t, granted); },
            [](caf::error&) {});  // the registry is gone: shutting down
}

}  // namespace

finalizer_actor spawn_finalizer(caf::actor_system& sys, finalizer_config cfg) {
  const bool on_own_thread = cfg.thread.own_thread;
  return spawn_stateful<finalizer_state>(sys, std::move(cfg), on_own_thread);
}

}  // namespace proofline
