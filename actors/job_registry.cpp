#include "actors/job_registry.hpp"

#include <cstring>

#include "witness/generator.hpp"
#include "zk/curves.hpp"
#include "zk/formats/error.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/sec.hpp>
#include <caf/spawn_options.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "actors/detail/result_file.hpp"
#include "memory/size.hpp"

namespace proofline {

namespace {

job_entry* find_job(job_registry_pointer self, uint64_t seq) {
  auto it = self->state.jobs.find(seq);
  return it == self->state.jobs.end() ? nullptr : &it->second;
}

void end_job(job_registry_pointer self, job_entry& job, job_state state);

/// Answers the drain requests once nothing is in flight any more. Without a
/// journal the jobs left are cancelled first, each with its result.json and
/// the reason, so their clients learn that they will not be proved.
void check_drained(job_registry_pointer self) {
  auto& st = self->state;
  if (st.drained.empty() || !st.drain.drained()) return;
  std::vector<job_status> live;
  for (const auto& [seq, job] : st.jobs)
    if (!job.complete()) live.push_back(make_status(job));
  auto answers = std::move(st.drained);
  st.drained.clear();
  if (!st.cfg.journal)
    for (const auto& s : live) {
      auto& job = st.jobs.at(s.seq);
      if (job.ctx) job.ctx->cancelled.store(true, std::memory_order_release);
      for (auto& p : job.parts)
        if (!terminal(p.state)) job.finish(p.index, partition_state::cancelled);
      job.error = file_error{"", "cancelled: the daemon stopped before the job was proved "
                                 "(without --state its queue is not kept)"};
      end_job(self, job, job_state::cancelled);
      tell_listeners(self, s.seq);
    }
  for (auto& rp : answers) rp.deliver(live);
}

/// A partition of job `seq` finished.
void left_flight(job_registry_pointer self, uint64_t seq) {
  self->state.drain.left(seq);
  check_drained(self);
}

/// The job ends in `state` (done, failed or cancelled): it frees its id and
/// out directory, lets go of its key, writes result.json, leaves the journal
/// and answers its awaiters.
void end_job(job_registry_pointer self, job_entry& job, job_state state) {
  job.state = state;
  job.total.end = self->state.cfg.clock.now_ms();
  self->state.live.retire(job);
  // Partitions in flight hold their own handles on the key; the key cache decides if it stays.
  if (job.ctx) self->send(self->state.cfg.keys, key_users_atom::value, job.ctx->key, int32_t{-1});
  job.ctx.reset();
  job.payload.reset();  // its witness bytes go with the last partition in flight
  auto report = make_report(job);
  write_result_file(self->state.cfg.ops.write_file, report);
  if (self->state.cfg.journal)
    self->send(self->state.cfg.journal, complete_atom::value, job.seq, report);
  if (state == job_state::failed)
    spdlog::warn("job {} failed: {}", job.spec.id, report.error.message);
  else if (state == job_state::done)
    spdlog::info("job {} done: {} partition(s) in {:.1f} ms", job.spec.id, job.parts.size(),
                 job.total.end - job.total.start);
  else
    spdlog::info("job {} cancelled", job.spec.id);
  for (auto& rp : job.awaiting) rp.deliver(report);
  job.awaiting.clear();
  for (auto& rp : job.cancel_answers) rp.deliver(make_status(job));
  job.cancel_answers.clear();
  self->state.drain.ended(job.seq);
  check_drained(self);
  self->state.finished.add(job.seq, self->state.jobs);
}

/// Completes the job once every partition is done or failed (a job being
/// cancelled: once the proofs being written have all reported).
void complete_if_finished(job_registry_pointer self, job_entry& job) {
  if (job.complete() || job.finished < job.parts.size()) return;
  if (job.cancelling) {
    end_job(self, job, job_state::cancelled);
    return;
  }
  bool failed = job.parts.empty();
  for (const auto& p : job.parts) failed |= p.state == partition_state::failed;
  end_job(self, job, failed ? job_state::failed : job_state::done);
}

/// Fails every partition not yet finished with `error` and completes the job.
void fail_job(job_registry_pointer self, job_entry& job, const file_error& error) {
  if (job.complete()) return;
  if (job.parts.empty()) job.error = error;
  for (auto& p : job.parts) {
    if (terminal(p.state)) continue;
    p.error = error;
    job.finish(p.index, partition_state::failed);
  }
  complete_if_finished(self, job);
  tell_listeners(self, job.seq);
}

caf::error no_job(uint64_t seq) {
  return caf::make_error(caf::sec::invalid_argument, "no job #" + std::to_string(seq));
}

/// Queues `orders` with the memory manager in one request, so it orders them
/// all at once; those it refuses at once (larger than the budget) fail.
void reserve(job_registry_pointer self, std::vector<work_order> orders) {
  self->request(self->state.cfg.memory, caf::infinite, reserve_atom::value, std::move(orders))
      .then([=](const std::vector<partition_failure>& refused) {
        for (const auto& f : refused) on_failed(self, f);
      });
}

void request_key(job_registry_pointer self, uint64_t seq, const std::string& path) {
  auto& waits = self->state.key_waits[path];
  waits.push_back(seq);
  if (waits.size() > 1) return;  // asked already
  self->request(self->state.cfg.keys, caf::infinite, key_atom::value, path)
      .then([=](const key_load_result& r) { on_key(self, path, r); },
            [=](caf::error& e) {
              on_key(self, path,
                     {nullptr, {path, path + ": key cache failed: " + self->system().render(e)}});
            });
}

/// Loads the constraints at `path` for job `seq` (job_spec::r1cs), then
/// asks for its key. One load per path at a time, in an actor of its own on
/// its own thread (the read takes about a second per million constraints);
/// the jobs naming the path meanwhile wait for the same answer.
void request_constraints(job_registry_pointer self, uint64_t seq, const std::string& path) {
  auto& waits = self->state.constraint_waits[path];
  waits.push_back(seq);
  if (waits.size() > 1) return;
  auto answer = [=](const constraints_load_result& r) {
    auto it = self->state.constraint_waits.find(path);
    if (it == self->state.constraint_waits.end()) return;
    auto waiting = std::move(it->second);
    self->state.constraint_waits.erase(it);
    for (auto s : waiting) {
      auto* job = find_job(self, s);
      if (!job || job->complete()) continue;  // cancelled meanwhile
      if (!r.constraints) {
        fail_job(self, *job, r.error);
        continue;
      }
      job->constraints = r.constraints;
      request_key(self, s, job->spec.zkey);
    }
  };
  auto load = self->state.cfg.ops.load_constraints;
  if (!load) {
    answer({nullptr, {path, path + ": this runtime cannot check witnesses against an .r1cs"}});
    return;
  }
  auto loader = self->spawn<caf::detached>([load](caf::event_based_actor* a) -> caf::behavior {
    return {[=](load_atom, const std::string& file) -> constraints_load_result {
      a->quit();
      try {
        return {load(file), {}};
      } catch (const zk::formats::format_error& e) {
        return {nullptr, {e.file(), e.what()}};
      } catch (const std::exception& e) {
        return {nullptr, {file, file + ": " + e.what()}};
      }
    }};
  });
  self->request(loader, caf::infinite, load_atom::value, path)
      .then(answer, [=](caf::error& e) {
        answer({nullptr, {path, path + ": the constraint loader failed: " + self->system().render(e)}});
      });
}

}  // namespace

job_registry_actor::behavior_type job_registry(job_registry_pointer self, job_registry_config cfg) {
  self->state.cfg = std::move(cfg);
  self->state.finished =
      finished_jobs{self->state.cfg.keep_finished, self->state.cfg.keep_finished_bytes};
  return {
      [=](submit_atom, const job_spec& spec) { return submit(self, spec); },
      [=](submit_atom, const local_job& job) { return submit(self, job.spec, job.payload); },
      [=](submit_atom, const std::vector<job_spec>& specs) { return submit_all(self, specs); },
      [=](cancel_atom, uint64_t seq) { return cancel_job(self, seq); },
      [=](watch_atom, const std::vector<watch_cursor>& cursors) {
        return progress_now(self, cursors);
      },
      [=](listen_atom, const job_listener_actor& l) { self->state.listeners.push_back(l); },
      [=](status_atom, uint64_t seq) { return status_of(self, seq); },
      [=](status_atom) { return status_all(self); },
      [=](await_atom, uint64_t seq) { return await_job(self, seq); },
      [=](stage_atom, uint64_t seq, uint32_t index, partition_state s) {
        on_stage(self, seq, index, s);
      },
      [=](claim_atom, uint64_t seq, uint32_t index) { return claim(self, seq, index); },
      [=](partition_done_atom, const partition_done& d) { on_done(self, d); },
      [=](partition_failed_atom, const partition_failure& f) { on_failed(self, f); },
      [=](drain_atom) { return drain(self); },
      [=](recover_atom, const std::vector<job_spec>& specs,
          const std::vector<std::vector<uint32_t>>& done) {
        return recover_jobs(self, specs, done);
      },
      [=](recover_atom, const std::vector<job_report>& finished) {
        restore_finished(self, finished);
      },
  };
}

caf::result<uint64_t> submit(job_registry_pointer self, const job_spec& spec,
                             const payload_ptr& payload) {
  if (auto conflict = self->state.live.conflict(spec, self->state.jobs); !conflict.empty())
    return caf::make_error(caf::sec::invalid_argument, conflict);
  return admit(self, spec, {}, payload);
}

caf::result<std::vector<uint64_t>> submit_all(job_registry_pointer self,
                                              const std::vector<job_spec>& specs) {
  if (auto conflict = self->state.live.conflict(specs, self->state.jobs); !conflict.empty())
    return caf::make_error(caf::sec::invalid_argument, conflict);
  std::vector<uint64_t> seqs;
  for (const auto& spec : specs) seqs.push_back(admit(self, spec));
  if (!self->state.cfg.journal) return seqs;
  // Jobs that failed on admission have nothing to recover.
  std::vector<uint64_t> live;
  std::vector<job_spec> live_specs;
  for (size_t i = 0; i < seqs.size(); ++i)
    if (auto* job = find_job(self, seqs[i]); job && !job->complete()) {
      live.push_back(seqs[i]);
      live_specs.push_back(specs[i]);
    }
  auto rp = self->make_response_promise<std::vector<uint64_t>>();
  self->request(self->state.cfg.journal, caf::infinite, record_atom::value, live, live_specs)
      .then([=](const std::vector<uint64_t>&) mutable { rp.deliver(seqs); },
            [=](caf::error& e) mutable { rp.deliver(std::move(e)); });
  return rp;
}

caf::result<std::vector<uint64_t>> recover_jobs(job_registry_pointer self,
                                                const std::vector<job_spec>& specs,
                                                const std::vector<std::vector<uint32_t>>& done) {
  std::vector<uint64_t> seqs;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (auto conflict = self->state.live.conflict(specs[i], self->state.jobs);
        !conflict.empty()) {
      spdlog::error("journal: {}; not recovered", conflict);
      seqs.push_back(0);  // answers stay aligned with `specs`
      continue;
    }
    seqs.push_back(admit(self, specs[i], i < done.size() ? done[i] : std::vector<uint32_t>{}));
  }
  return seqs;
}

void restore_finished(job_registry_pointer self, const std::vector<job_report>& reports) {
  auto& st = self->state;
  for (const auto& r : reports) {
    uint64_t seq = st.next_seq++;
    st.jobs[seq] = restored_entry(seq, r);
    st.finished.add(seq, st.jobs);
  }
}

uint64_t admit(job_registry_pointer self, const job_spec& spec,
               const std::vector<uint32_t>& done, const payload_ptr& payload) {
  auto& st = self->state;
  uint64_t seq = st.next_seq++;
  job_entry& job = st.jobs[seq] = make_entry(seq, spec, st.cfg.clock.now_ms());
  job.payload = payload;
  st.live.add(job);

  if (auto problem = spec_problem(spec, payload.get()); !problem.empty()) {
    fail_job(self, job, {"", problem});
    return seq;
  }
  if (!done.empty()) {
    mark_recovered(job, done);
    if (job.finished == job.parts.size()) {
      complete_if_finished(self, job);
      return seq;
    }
  } else if (auto n = spec.out.empty() ? 0 : clear_previous_outputs(spec.out)) {
    spdlog::info("job {}: removed {} output file(s) of an earlier job from {}", spec.id, n,
                 spec.out);
  }
  spdlog::debug("job {} (#{}): {} partition(s), priority {}, key {}", spec.id, seq,
                spec.witnesses.size(), to_string(spec.prio), spec.zkey);
  if (!spec.r1cs.empty())
    request_constraints(self, seq, spec.r1cs);  // then the key
  else
    request_key(self, seq, spec.zkey);
  return seq;
}

void on_key(job_registry_pointer self, const std::string& path, const key_load_result& r) {
  auto it = self->state.key_waits.find(path);
  if (it == self->state.key_waits.end()) return;
  auto waiting = std::move(it->second);
  self->state.key_waits.erase(it);
  if (r.key) {
    // The answer counts one user; each job that took the key is one.
    auto users = static_cast<int32_t>(start_jobs(self, waiting, r.key));
    if (users != 1) self->send(self->state.cfg.keys, key_users_atom::value, r.key, users - 1);
    return;
  }
  for (auto seq : waiting)
    if (auto* job = find_job(self, seq)) fail_job(self, *job, r.error);
}

namespace {

/// Opens a job's witness generator and checks it against the job's key;
/// sets `bytes` to what one witness computation takes. Empty message: fits.
file_error check_generator(const std::string& path, const zk::groth16::proving_key_base& key,
                           uint64_t& bytes) {
  try {
    auto gen = witness::generator::open(path);
    std::vector<uint8_t> prime(key.info.n8r);
    zk::visit_curve(key.info.curve, [&](auto curve) {
      using C = decltype(curve);
      const auto m = C::fr::modulus();
      std::memcpy(prime.data(), m.l, std::min<size_t>(prime.size(), sizeof(m.l)));
    });
    std::string problem = gen->check_key(prime.data(), static_cast<uint32_t>(prime.size()),
                                         key.info.n_vars, key.path);
    if (!problem.empty()) return {path, path + ": " + problem};
    bytes = gen->reservation_bytes();
    return {};
  } catch (const zk::formats::format_error& e) {
    return {e.file(), e.what()};
  } catch (const std::exception& e) {
    return {path, path + ": " + e.what()};
  }
}

}  // namespace

size_t start_jobs(job_registry_pointer self, const std::vector<uint64_t>& seqs,
                  const zk::groth16::key_ptr& key) {
  std::vector<work_order> orders;
  size_t started = 0;
  for (auto seq : seqs) {
    auto* job = find_job(self, seq);
    if (!job || job->complete() || self->state.drain.on()) continue;
    auto ctx = std::make_shared<job_context>();
    ctx->seq = seq;
    ctx->spec = job->spec;
    ctx->key = key;
    ctx->payload = job->payload;
    if (!job->spec.witness_generator.empty()) {
      // Loaded once per process (dlopen keeps it) and checked against the
      // key before any memory is reserved: a wrong generator fails the job.
      file_error problem = check_generator(job->spec.witness_generator, *key, ctx->generator_bytes);
      if (!problem.message.empty()) {
        fail_job(self, *job, problem);
        continue;
      }
    }
    if (const auto& cs = job->constraints) {
      const std::string problem =
          constraints_problem(cs->path, cs->curve, cs->n_vars, job->spec.zkey, key->info);
      if (!problem.empty()) {
        fail_job(self, *job, {cs->path, problem});
        continue;
      }
      ctx->constraints = cs;
    }
    job->ctx = ctx;
    ++started;
    for (uint32_t i = 0; i < job->parts.size(); ++i)
      if (!terminal(job->parts[i].state))  // not recovered as done
        orders.push_back(make_order(ctx, i, {}, self->state.cfg.footprint));
  }
  if (orders.empty()) return started;
  if (self->state.cfg.partitions_queued) self->state.cfg.partitions_queued(key, orders.size());
  spdlog::debug("reserving {} partition(s) of {} each", orders.size(),
                memory::format_bytes(orders.front().bytes));
  reserve(self, std::move(orders));
  return started;
}

void on_stage(job_registry_pointer self, uint64_t seq, uint32_t index, partition_state s) {
  auto* job = find_job(self, seq);
  if (!job || index >= job->parts.size() || terminal(job->parts[index].state)) return;
  job->parts[index].state = s;
  if (s == partition_state::synthesizing && job->state == job_state::queued)
    job->state = job_state::synthesizing;
  else if (s == partition_state::proving &&
           (job->state == job_state::queued || job->state == job_state::synthesizing))
    job->state = job_state::proving;
}

bool claim(job_registry_pointer self, uint64_t seq, uint32_t index) {
  auto* job = find_job(self, seq);
  if (!job || job->complete() || job->cancelling || index >= job->parts.size() ||
      terminal(job->parts[index].state))
    return false;
  job->writing.insert(index);
  return true;
}

void on_done(job_registry_pointer self, const partition_done& d) {
  auto* job = find_job(self, d.job_seq);
  if (!job || job->complete() || d.index >= job->parts.size()) return;
  job->writing.erase(d.index);
  auto& p = job->parts[d.index];
  if (terminal(p.state)) return;
  record_done(p, d);
  if (self->state.cfg.journal)
    self->send(self->state.cfg.journal, record_done_atom::value, d.job_seq, d.index);
  job->finish(d.index, partition_state::done);
  complete_if_finished(self, *job);
  tell_listeners(self, d.job_seq);
  left_flight(self, d.job_seq);
}

/// Failure `f` of a partition of `job`, or, when the partition's proofs
/// failed their pairing check on two backends (retry_policy.hpp's
/// witness_at_fault), an input error naming its witness, not retried.
partition_failure judged(job_registry_pointer self, job_entry& job, const partition_failure& f) {
  if (!f.check_failed) return f;
  auto& failed_on = job.check_failed_on[f.index];
  failed_on.push_back(f.spans.backend.empty() ? "its backend" : f.spans.backend);
  const auto& t = self->state.cfg.retries;
  const bool only_backend = f.spans.gpu >= 0 && t.devices == 1 && !t.fallback;
  if (!witness_at_fault(failed_on, only_backend)) return f;
  std::string backends;
  for (std::size_t i = 0; i < failed_on.size(); ++i)
    backends += (i == 0 ? "" : i + 1 == failed_on.size() ? " and " : ", ") + failed_on[i];
  const std::string witness =
      f.index < job.spec.witnesses.size() ? job.spec.witnesses[f.index] : std::string("witness");
  partition_failure w = f;
  w.retryable = false;
  w.device_lost = false;
  w.error = {witness, fmt::format("{}: the witness does not satisfy the circuit of {}: its "
                                  "proofs failed the pairing check on {}, not a backend fault",
                                  witness, job.spec.zkey, backends)};
  return w;
}

void on_failed(job_registry_pointer self, const partition_failure& failure) {
  auto* job = find_job(self, failure.job_seq);
  if (!job || job->complete() || failure.index >= job->parts.size()) return;
  job->writing.erase(failure.index);
  if (terminal(job->parts[failure.index].state)) return;
  const partition_failure f = judged(self, *job, failure);
  auto& p = job->parts[f.index];
  std::optional<placement> again;
  if (f.retryable && job->ctx && !job->ctx->cancelled.load(std::memory_order_acquire))
    again = next_placement(self->state.cfg.retries, p.retries, f.spans.gpu, f.device_lost);
  if (again && self->state.drain.on()) {  // not queued again: the journal keeps it
    p.state = partition_state::queued;
    self->state.drain.held(f.job_seq);
    check_drained(self);
    return;
  }
  if (again) {
    ++p.retries;
    p.state = partition_state::queued;
    spdlog::warn("job {} partition {}: {}; proving it again on {} (retry {})", job->spec.id,
                 f.index, f.error.message, placement_text(*again, f.spans.gpu, f.spans.backend),
                 p.retries);
    reserve(self, {make_order(job->ctx, f.index, *again, self->state.cfg.footprint)});
    return;
  }
  record_failure(p, f);
  job->finish(f.index, partition_state::failed);
  spdlog::warn("job {} partition {}: {}", job->spec.id, f.index, f.error.message);
  complete_if_finished(self, *job);
  tell_listeners(self, f.job_seq);
  left_flight(self, f.job_seq);
}

caf::result<job_status> status_of(job_registry_pointer self, uint64_t seq) {
  if (auto* job = find_job(self, seq)) return make_status(*job);
  return no_job(seq);
}

std::vector<job_status> status_all(job_registry_pointer self) {
  std::vector<job_status> out;
  for (const auto& [seq, job] : self->state.jobs) out.push_back(make_status(job));
  return out;
}

caf::result<job_report> await_job(job_registry_pointer self, uint64_t seq) {
  auto* job = find_job(self, seq);
  if (!job) return no_job(seq);
  if (job->complete()) return make_report(*job);
  auto rp = self->make_response_promise<job_report>();
  job->awaiting.push_back(rp);
  return rp;
}

caf::result<job_status> cancel_job(job_registry_pointer self, uint64_t seq) {
  auto* job = find_job(self, seq);
  if (!job) return no_job(seq);
  if (job->complete() || job->cancelling)
    return caf::make_error(caf::sec::invalid_argument,
                           "job \"" + job->spec.id + "\" already finished (" +
                               (job->cancelling ? std::string("cancelled") : to_string(job->state)) +
                               ")");
  // Stages in flight see the flag and drop the job's partitions; their
  // reservations then return its memory. Proofs being written (claimed)
  // are not dropped: the job completes once they report, so its record
  // lists every proof that reaches the disk.
  if (job->ctx) job->ctx->cancelled.store(true, std::memory_order_release);
  for (auto& p : job->parts)
    if (!terminal(p.state) && !job->writing.count(p.index))
      job->finish(p.index, partition_state::cancelled);
  std::string id = job->spec.id;
  self->request(self->state.cfg.memory, caf::infinite, drop_queued_atom::value, seq)
      .then([=](uint64_t dropped) {
        spdlog::debug("job {}: the memory manager dropped {} queued partition(s)", id, dropped);
      });
  if (!job->writing.empty()) {
    job->cancelling = true;
    auto rp = self->make_response_promise<job_status>();
    job->cancel_answers.push_back(rp);
    spdlog::debug("job {}: cancelled once {} proof(s) being written are", id,
                  job->writing.size());
    tell_listeners(self, seq);
    return rp;
  }
  end_job(self, *job, job_state::cancelled);
  tell_listeners(self, seq);
  return make_status(*job);
}

caf::result<std::vector<job_status>> drain(job_registry_pointer self) {
  auto& st = self->state;
  auto rp = self->make_response_promise<std::vector<job_status>>();
  st.drained.push_back(rp);
  if (!st.drain.on()) {
    // Every reserve request went out before this cancel, so the memory manager
    // drops all of a job's queued partitions; its other unfinished ones are granted.
    std::vector<uint64_t> started;
    for (const auto& [seq, job] : st.jobs)
      if (!job.complete() && job.ctx) started.push_back(seq);
    st.drain.start(started.size());
    auto answered = [self](uint64_t seq, uint64_t dropped) {
      auto* job = find_job(self, seq);
      if (job && !job->complete())
        self->state.drain.answered(seq, job->parts.size() - job->finished, dropped);
      else
        self->state.drain.answered();
      check_drained(self);
    };
    for (auto seq : started)
      self->request(st.cfg.memory, caf::infinite, drop_queued_atom::value, seq)
          .then([=](uint64_t dropped) { answered(seq, dropped); },
                [=](caf::error&) { answered(seq, 0); });
  }
  check_drained(self);
  return rp;
}

caf::result<std::vector<job_progress>> progress_now(job_registry_pointer self,
                                                    const std::vector<watch_cursor>& cursors) {
  std::vector<job_progress> out;
  for (const auto& c : cursors) {
    auto* job = find_job(self, c.seq);
    if (!job) return no_job(c.seq);
    out.push_back(make_progress(*job, c.seen));
  }
  return out;
}

void tell_listeners(job_registry_pointer self, uint64_t seq) {
  for (const auto& l : self->state.listeners) self->send(l, news_atom::value, seq);
}

}  // namespace proofline
