#include "actors/job_registry.hpp"

#include "actors/detail/spawn.hpp"

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/sec.hpp>
#include <caf/typed_response_promise.hpp>

#include <map>

#include <spdlog/spdlog.h>

#include "actors/constraint_loader.hpp"
#include "actors/detail/drain_count.hpp"
#include "actors/detail/generator_check.hpp"
#include "actors/detail/job_entry.hpp"
#include "actors/detail/result_file.hpp"
#include "memory/size.hpp"

namespace proofline {

namespace {

caf::error no_job(uint64_t seq) {
  return caf::make_error(caf::sec::invalid_argument, "no job #" + std::to_string(seq));
}

class job_registry_state {
 public:
  static inline const char* name = "job_registry";
  using pointer = job_registry_actor::stateful_pointer<job_registry_state>;

  explicit job_registry_state(pointer self) : self(self) {}

  job_registry_actor::behavior_type make_behavior(job_registry_config config);

 private:
  // ---- handlers (messages/interfaces.hpp says what each message means)
  caf::result<uint64_t> submit(const job_spec& spec, const payload_ptr& payload = nullptr);
  /// Accepts all of `specs` or none (an id live already, or given twice).
  caf::result<std::vector<uint64_t>> submit_all(const std::vector<job_spec>& specs);
  caf::result<std::vector<uint64_t>> recover_jobs(const std::vector<job_spec>& specs,
                                                  const std::vector<std::vector<uint32_t>>& done);
  void restore_finished(const std::vector<job_report>& reports);
  caf::result<job_status> cancel_job(uint64_t seq);
  caf::result<std::vector<job_progress>> progress_now(const std::vector<watch_cursor>& cursors);
  void on_stage(uint64_t seq, uint32_t index, partition_state s);
  bool claim(uint64_t seq, uint32_t index);
  void on_done(const partition_done& d);
  void on_failed(const partition_failure& failure);
  caf::result<job_status> status_of(uint64_t seq);
  std::vector<job_status> status_all();
  caf::result<job_report> await_job(uint64_t seq);
  caf::result<std::vector<job_status>> start_drain();

  // ---- helpers
  /// Enters a job whose id is free; returns its sequence number. The
  /// partitions in `done` are finished already (a recovered job, whose out
  /// directory is then left as it is); the others are queued.
  uint64_t admit(const job_spec& spec, const std::vector<uint32_t>& done = {},
                 const payload_ptr& payload = nullptr);
  /// The key cache answered for `path`: starts or fails the jobs waiting for it.
  void on_key(const std::string& path, const key_load_result& r);
  /// Queues the partitions of jobs whose key just arrived, in one reserve
  /// request, so the memory manager orders them all at once. Returns how many
  /// jobs took the key (each is one user of it at the key cache).
  size_t start_jobs(const std::vector<uint64_t>& seqs, const zk::groth16::key_ptr& key);
  /// Tells every listener that job `seq` has news (a finished partition, or
  /// the job complete).
  void tell_listeners(uint64_t seq);
  job_entry* find_job(uint64_t seq);
  /// Answers the drain requests once no partition is in flight any more.
  void check_drained();
  /// A partition of job `seq` left the pipeline (done, failed or dropped).
  void left_flight(uint64_t seq);
  void end_job(job_entry& job, job_state state);
  /// Completes `job` once every partition has finished and no claimed proof
  /// is still being written.
  void complete_if_finished(job_entry& job);
  void fail_job(job_entry& job, const file_error& error);
  void reserve(std::vector<work_order> orders);
  void request_key(uint64_t seq, const std::string& path);
  /// Loads the constraints at `path` for job `seq` (job_spec::r1cs), then
  /// asks for its key. One load per path at a time, in a constraint loader
  /// on its own thread; the jobs naming the path meanwhile wait for the same
  /// answer.
  void request_constraints(uint64_t seq, const std::string& path);
  /// Failure `f` of a partition of `job`, or, when the partition's proofs
  /// failed their pairing check on two backends (retry_policy.hpp's
  /// witness_at_fault), an input error naming its witness, not retried.
  partition_failure judged(job_entry& job, const partition_failure& f);

  // ---- data
  pointer self;
  job_registry_config cfg;
  uint64_t next_seq = 1;
  std::map<uint64_t, job_entry> jobs;
  std::map<std::string, std::vector<uint64_t>> key_waits;  ///< jobs waiting for a key, by path
  /// Jobs waiting for their constraints (job_spec::r1cs), by path.
  std::map<std::string, std::vector<uint64_t>> constraint_waits;
  live_names live;  ///< ids and out directories of the jobs not yet complete
  finished_jobs finished;  ///< completed jobs, oldest first (cfg.keep_finished, keep_finished_bytes)
  std::vector<job_listener_actor> listeners;  ///< told of every job's news (control's watches)
  drain_count drain;  ///< serve stopping (drain_atom)
  std::vector<caf::typed_response_promise<std::vector<job_status>>> drained;  ///< drain requests
};

job_entry* job_registry_state::find_job(uint64_t seq) {
  auto it = jobs.find(seq);
  return it == jobs.end() ? nullptr : &it->second;
}

void job_registry_state::check_drained() {
  if (drained.empty() || !drain.drained()) return;
  std::vector<job_status> live;
  for (const auto& [seq, job] : jobs)
    if (!job.complete()) live.push_back(make_status(job));
  auto answers = std::move(drained);
  drained.clear();
  if (!cfg.journal)
    for (const auto& s : live) {
      auto& job = jobs.at(s.seq);
      if (job.ctx) job.ctx->cancelled.store(true, std::memory_order_release);
      for (auto& p : job.parts)
        if (!terminal(p.state)) job.finish(p.index, partition_state::cancelled);
      job.error = file_error{"", "cancelled: the daemon stopped before the job was proved "
                                 "(without --state its queue is not kept)"};
      end_job(job, job_state::cancelled);
      tell_listeners(s.seq);
    }
  for (auto& rp : answers) rp.deliver(live);
}

void job_registry_state::left_flight(uint64_t seq) {
  drain.left(seq);
  check_drained();
}

void job_registry_state::end_job(job_entry& job, job_state state) {
  job.state = state;
  job.total.end = cfg.clock.now_ms();
  live.retire(job);
  // Partitions in flight hold their own handles on the key; the key cache decides if it stays.
  if (job.ctx) self->send(cfg.keys, key_users_atom::value, job.ctx->key, int32_t{-1});
  job.ctx.reset();
  job.payload.reset();  // its witness bytes go with the last partition in flight
  auto report = make_report(job);
  write_result_file(cfg.ops.write_file, report);
  if (cfg.journal)
    self->send(cfg.journal, complete_atom::value, job.seq, report);
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
  drain.ended(job.seq);
  check_drained();
  finished.add(job.seq, jobs);
}

void job_registry_state::complete_if_finished(job_entry& job) {
  if (job.complete() || job.finished < job.parts.size()) return;
  if (job.cancelling) {
    end_job(job, job_state::cancelled);
    return;
  }
  bool failed = job.parts.empty();
  for (const auto& p : job.parts) failed |= p.state == partition_state::failed;
  end_job(job, failed ? job_state::failed : job_state::done);
}

void job_registry_state::fail_job(job_entry& job, const file_error& error) {
  if (job.complete()) return;
  if (job.parts.empty()) job.error = error;
  for (auto& p : job.parts) {
    if (terminal(p.state)) continue;
    p.error = error;
    job.finish(p.index, partition_state::failed);
  }
  complete_if_finished(job);
  tell_listeners(job.seq);
}

void job_registry_state::reserve(std::vector<work_order> orders) {
  self->request(cfg.memory, caf::infinite, reserve_atom::value, std::move(orders))
      .then([=](const std::vector<partition_failure>& refused) {
        for (const auto& f : refused) on_failed(f);
      });
}

void job_registry_state::request_key(uint64_t seq, const std::string& path) {
  auto& waits = key_waits[path];
  waits.push_back(seq);
  if (waits.size() > 1) return;  // asked already
  self->request(cfg.keys, caf::infinite, key_atom::value, path)
      .then([=](const key_load_result& r) { on_key(path, r); },
            [=](caf::error& e) {
              on_key(path,
                     {nullptr, {path, path + ": key cache failed: " + self->system().render(e)}});
            });
}

void job_registry_state::request_constraints(uint64_t seq, const std::string& path) {
  auto& waits = constraint_waits[path];
  waits.push_back(seq);
  if (waits.size() > 1) return;
  auto answer = [=](const constraints_load_result& r) {
    auto it = constraint_waits.find(path);
    if (it == constraint_waits.end()) return;
    auto waiting = std::move(it->second);
    constraint_waits.erase(it);
    for (auto s : waiting) {
      auto* job = find_job(s);
      if (!job || job->complete()) continue;  // cancelled meanwhile
      if (!r.constraints) {
        fail_job(*job, r.error);
        continue;
      }
      job->constraints = r.constraints;
      request_key(s, job->spec.zkey);
    }
  };
  auto load = cfg.ops.load_constraints;
  if (!load) {
    answer({nullptr, {path, path + ": this runtime cannot check witnesses against an .r1cs"}});
    return;
  }
  auto loader = spawn_constraint_loader(self->system(), load);
  self->request(loader, caf::infinite, load_atom::value, path)
      .then(answer, [=](caf::error& e) {
        answer({nullptr, {path, path + ": the constraint loader failed: " + self->system().render(e)}});
      });
}

job_registry_actor::behavior_type job_registry_state::make_behavior(job_registry_config config) {
  cfg = std::move(config);
  finished = finished_jobs{cfg.keep_finished, cfg.keep_finished_bytes};
  return {
      [this](submit_atom, const job_spec& spec) { return submit(spec); },
      [this](submit_atom, const local_job& job) { return submit(job.spec, job.payload); },
      [this](submit_atom, const std::vector<job_spec>& specs) { return submit_all(specs); },
      [this](cancel_atom, uint64_t seq) { return cancel_job(seq); },
      [this](watch_atom, const std::vector<watch_cursor>& cursors) {
        return progress_now(cursors);
      },
      [this](listen_atom, const job_listener_actor& l) { listeners.push_back(l); },
      [this](status_atom, uint64_t seq) { return status_of(seq); },
      [this](status_atom) { return status_all(); },
      [this](await_atom, uint64_t seq) { return await_job(seq); },
      [this](stage_atom, uint64_t seq, uint32_t index, partition_state s) {
        on_stage(seq, index, s);
      },
      [this](claim_atom, uint64_t seq, uint32_t index) { return claim(seq, index); },
      [this](partition_done_atom, const partition_done& d) { on_done(d); },
      [this](partition_failed_atom, const partition_failure& f) { on_failed(f); },
      [this](drain_atom) { return start_drain(); },
      [this](recover_atom, const std::vector<job_spec>& specs,
             const std::vector<std::vector<uint32_t>>& done) { return recover_jobs(specs, done); },
      [this](recover_atom, const std::vector<job_report>& reports) { restore_finished(reports); },
  };
}

caf::result<uint64_t> job_registry_state::submit(const job_spec& spec,
                                                 const payload_ptr& payload) {
  if (auto conflict = live.conflict(spec, jobs); !conflict.empty())
    return caf::make_error(caf::sec::invalid_argument, conflict);
  return admit(spec, {}, payload);
}

caf::result<std::vector<uint64_t>> job_registry_state::submit_all(
    const std::vector<job_spec>& specs) {
  if (auto conflict = live.conflict(specs, jobs); !conflict.empty())
    return caf::make_error(caf::sec::invalid_argument, conflict);
  std::vector<uint64_t> seqs;
  for (const auto& spec : specs) seqs.push_back(admit(spec));
  if (!cfg.journal) return seqs;
  // Jobs that failed on admission have nothing to recover.
  std::vector<uint64_t> kept;
  std::vector<job_spec> live_specs;
  for (size_t i = 0; i < seqs.size(); ++i)
    if (auto* job = find_job(seqs[i]); job && !job->complete()) {
      kept.push_back(seqs[i]);
      live_specs.push_back(specs[i]);
    }
  auto rp = self->make_response_promise<std::vector<uint64_t>>();
  self->request(cfg.journal, caf::infinite, record_atom::value, kept, live_specs)
      .then([=](const std::vector<uint64_t>&) mutable { rp.deliver(seqs); },
            [=](caf::error& e) mutable { rp.deliver(std::move(e)); });
  return rp;
}

caf::result<std::vector<uint64_t>> job_registry_state::recover_jobs(
    const std::vector<job_spec>& specs, const std::vector<std::vector<uint32_t>>& done) {
  std::vector<uint64_t> seqs;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (auto conflict = live.conflict(specs[i], jobs);
        !conflict.empty()) {
      spdlog::error("journal: {}; not recovered", conflict);
      seqs.push_back(0);  // answers stay aligned with `specs`
      continue;
    }
    seqs.push_back(admit(specs[i], i < done.size() ? done[i] : std::vector<uint32_t>{}));
  }
  return seqs;
}

void job_registry_state::restore_finished(const std::vector<job_report>& reports) {
  for (const auto& r : reports) {
    uint64_t seq = next_seq++;
    jobs[seq] = restored_entry(seq, r);
    finished.add(seq, jobs);
  }
}

uint64_t job_registry_state::admit(const job_spec& spec,
                                   const std::vector<uint32_t>& done, const payload_ptr& payload) {
  uint64_t seq = next_seq++;
  job_entry& job = jobs[seq] = make_entry(seq, spec, cfg.clock.now_ms());
  job.payload = payload;
  live.add(job);

  if (auto problem = spec_problem(spec, payload.get()); !problem.empty()) {
    fail_job(job, {"", problem});
    return seq;
  }
  if (!done.empty()) {
    mark_recovered(job, done);
    if (job.finished == job.parts.size()) {
      complete_if_finished(job);
      return seq;
    }
  } else if (auto n = spec.out.empty() ? 0 : clear_previous_outputs(spec.out)) {
    spdlog::info("job {}: removed {} output file(s) of an earlier job from {}", spec.id, n,
                 spec.out);
  }
  spdlog::debug("job {} (#{}): {} partition(s), priority {}, key {}", spec.id, seq,
                spec.witnesses.size(), to_string(spec.prio), spec.zkey);
  if (!spec.r1cs.empty())
    request_constraints(seq, spec.r1cs);  // then the key
  else
    request_key(seq, spec.zkey);
  return seq;
}

void job_registry_state::on_key(const std::string& path, const key_load_result& r) {
  auto it = key_waits.find(path);
  if (it == key_waits.end()) return;
  auto waiting = std::move(it->second);
  key_waits.erase(it);
  if (r.key) {
    // The answer counts one user; each job that took the key is one.
    auto users = static_cast<int32_t>(start_jobs(waiting, r.key));
    if (users != 1) self->send(cfg.keys, key_users_atom::value, r.key, users - 1);
    return;
  }
  for (auto seq : waiting)
    if (auto* job = find_job(seq)) fail_job(*job, r.error);
}

size_t job_registry_state::start_jobs(const std::vector<uint64_t>& seqs,
                                      const zk::groth16::key_ptr& key) {
  std::vector<work_order> orders;
  size_t started = 0;
  for (auto seq : seqs) {
    auto* job = find_job(seq);
    if (!job || job->complete() || drain.on()) continue;
    auto ctx = std::make_shared<job_context>();
    ctx->seq = seq;
    ctx->spec = job->spec;
    ctx->key = key;
    ctx->payload = job->payload;
    if (!job->spec.witness_generator.empty()) {
      // Loaded once per process (dlopen keeps it) and checked against the
      // key before any memory is reserved: a wrong generator fails the job.
      file_error problem =
          check_generator(job->spec.witness_generator, *key, ctx->generator_bytes, ctx->generator);
      if (!problem.message.empty()) {
        fail_job(*job, problem);
        continue;
      }
    }
    if (const auto& cs = job->constraints) {
      const std::string problem =
          constraints_problem(cs->path, cs->curve, cs->n_vars, job->spec.zkey, key->info);
      if (!problem.empty()) {
        fail_job(*job, {cs->path, problem});
        continue;
      }
      ctx->constraints = cs;
    }
    job->ctx = ctx;
    ++started;
    for (uint32_t i = 0; i < job->parts.size(); ++i)
      if (!terminal(job->parts[i].state))  // not recovered as done
        orders.push_back(make_order(ctx, i, {}, cfg.footprint));
  }
  if (orders.empty()) return started;
  if (cfg.partitions_queued) cfg.partitions_queued(key, orders.size());
  spdlog::debug("reserving {} partition(s) of {} each", orders.size(),
                memory::format_bytes(orders.front().bytes));
  reserve(std::move(orders));
  return started;
}

void job_registry_state::on_stage(uint64_t seq, uint32_t index, partition_state s) {
  auto* job = find_job(seq);
  if (!job || index >= job->parts.size() || terminal(job->parts[index].state)) return;
  job->parts[index].state = s;
  if (s == partition_state::synthesizing && job->state == job_state::queued)
    job->state = job_state::synthesizing;
  else if (s == partition_state::proving &&
           (job->state == job_state::queued || job->state == job_state::synthesizing))
    job->state = job_state::proving;
}

bool job_registry_state::claim(uint64_t seq, uint32_t index) {
  auto* job = find_job(seq);
  if (!job || job->complete() || job->cancelling || index >= job->parts.size() ||
      terminal(job->parts[index].state))
    return false;
  job->writing.insert(index);
  return true;
}

void job_registry_state::on_done(const partition_done& d) {
  auto* job = find_job(d.job_seq);
  if (!job || job->complete() || d.index >= job->parts.size()) return;
  job->writing.erase(d.index);
  auto& p = job->parts[d.index];
  if (terminal(p.state)) return;
  record_done(p, d);
  if (cfg.journal)
    self->send(cfg.journal, record_done_atom::value, d.job_seq, d.index);
  job->finish(d.index, partition_state::done);
  complete_if_finished(*job);
  tell_listeners(d.job_seq);
  left_flight(d.job_seq);
}

partition_failure job_registry_state::judged(job_entry& job, const partition_failure& f) {
  if (!f.check_failed) return f;
  const std::string witness =
      f.index < job.spec.witnesses.size() ? job.spec.witnesses[f.index] : std::string("witness");
  return judge_check_failure(f, job.check_failed_on[f.index], cfg.retries, witness, job.spec.zkey);
}

void job_registry_state::on_failed(const partition_failure& failure) {
  auto* job = find_job(failure.job_seq);
  if (!job || job->complete() || failure.index >= job->parts.size()) return;
  job->writing.erase(failure.index);
  if (terminal(job->parts[failure.index].state)) return;
  const partition_failure f = judged(*job, failure);
  auto& p = job->parts[f.index];
  std::optional<placement> again;
  if (f.retryable && job->ctx && !job->ctx->cancelled.load(std::memory_order_acquire))
    again = next_placement(cfg.retries, p.retries, f.spans.gpu, f.device_lost);
  if (again && drain.on()) {  // not queued again: the journal keeps it
    p.state = partition_state::queued;
    drain.held(f.job_seq);
    check_drained();
    return;
  }
  if (again) {
    ++p.retries;
    p.state = partition_state::queued;
    spdlog::warn("job {} partition {}: {}; proving it again on {} (retry {})", job->spec.id,
                 f.index, f.error.message, placement_text(*again, f.spans.gpu, f.spans.backend),
                 p.retries);
    reserve({make_order(job->ctx, f.index, *again, cfg.footprint)});
    return;
  }
  record_failure(p, f);
  job->finish(f.index, partition_state::failed);
  spdlog::warn("job {} partition {}: {}", job->spec.id, f.index, f.error.message);
  complete_if_finished(*job);
  tell_listeners(f.job_seq);
  left_flight(f.job_seq);
}

caf::result<job_status> job_registry_state::status_of(uint64_t seq) {
  if (auto* job = find_job(seq)) return make_status(*job);
  return no_job(seq);
}

std::vector<job_status> job_registry_state::status_all() {
  std::vector<job_status> out;
  for (const auto& [seq, job] : jobs) out.push_back(make_status(job));
  return out;
}

caf::result<job_report> job_registry_state::await_job(uint64_t seq) {
  auto* job = find_job(seq);
  if (!job) return no_job(seq);
  if (job->complete()) return make_report(*job);
  auto rp = self->make_response_promise<job_report>();
  job->awaiting.push_back(rp);
  return rp;
}

caf::result<job_status> job_registry_state::cancel_job(uint64_t seq) {
  auto* job = find_job(seq);
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
  self->request(cfg.memory, caf::infinite, drop_queued_atom::value, seq)
      .then([=](uint64_t dropped) {
        spdlog::debug("job {}: the memory manager dropped {} queued partition(s)", id, dropped);
      });
  if (!job->writing.empty()) {
    job->cancelling = true;
    auto rp = self->make_response_promise<job_status>();
    job->cancel_answers.push_back(rp);
    spdlog::debug("job {}: cancelled once {} proof(s) being written are", id,
                  job->writing.size());
    tell_listeners(seq);
    return rp;
  }
  end_job(*job, job_state::cancelled);
  tell_listeners(seq);
  return make_status(*job);
}

caf::result<std::vector<job_status>> job_registry_state::start_drain() {
  auto rp = self->make_response_promise<std::vector<job_status>>();
  drained.push_back(rp);
  if (!drain.on()) {
    // Every reserve request went out before this cancel, so the memory manager
    // drops all of a job's queued partitions; its other unfinished ones are granted.
    std::vector<uint64_t> started;
    for (const auto& [seq, job] : jobs)
      if (!job.complete() && job.ctx) started.push_back(seq);
    drain.start(started.size());
    auto answered = [this](uint64_t seq, uint64_t dropped) {
      auto* job = find_job(seq);
      if (job && !job->complete())
        drain.answered(seq, job->parts.size() - job->finished, dropped);
      else
        drain.answered();
      check_drained();
    };
    for (auto seq : started)
      self->request(cfg.memory, caf::infinite, drop_queued_atom::value, seq)
          .then([=](uint64_t dropped) { answered(seq, dropped); },
                [=](caf::error&) { answered(seq, 0); });
  }
  check_drained();
  return rp;
}

caf::result<std::vector<job_progress>> job_registry_state::progress_now(
    const std::vector<watch_cursor>& cursors) {
  std::vector<job_progress> out;
  for (const auto& c : cursors) {
    auto* job = find_job(c.seq);
    if (!job) return no_job(c.seq);
    out.push_back(make_progress(*job, c.seen));
  }
  return out;
}

void job_registry_state::tell_listeners(uint64_t seq) {
  for (const auto& l : listeners) self->send(l, news_atom::value, seq);
}

}  // namespace

job_registry_actor spawn_job_registry(caf::actor_system& sys, job_registry_config cfg) {
  return spawn_stateful<job_registry_state>(sys, std::move(cfg));
}

}  // namespace proofline
