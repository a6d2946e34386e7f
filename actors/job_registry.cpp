#include "actors/job_registry.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/sec.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "actors/result_file.hpp"
#include "memory/estimate.hpp"
#include "memory/size.hpp"

namespace proofline {

namespace {

/// What is wrong with a spec the registry cannot run at all; empty if fine.
std::string spec_problem(const job_spec& spec) {
  std::string who = "job \"" + spec.id + "\": ";
  if (spec.id.empty()) return "job has no id";
  if (spec.zkey.empty()) return who + "no zkey";
  if (spec.witnesses.empty()) return who + "no witness";
  for (const auto& w : spec.witnesses)
    if (w.empty()) return who + "empty witness path";
  if (spec.single && spec.witnesses.size() != 1)
    return who + "a single-witness job has one witness";
  if (spec.out.empty()) return who + "no out directory";
  return {};
}

bool terminal(partition_state s) {
  return s == partition_state::done || s == partition_state::failed ||
         s == partition_state::cancelled;
}

job_entry* find_job(job_registry_pointer self, uint64_t seq) {
  auto it = self->state.jobs.find(seq);
  return it == self->state.jobs.end() ? nullptr : &it->second;
}

void write_result(job_registry_pointer self, const job_entry& job, const job_report& report) {
  if (job.spec.out.empty()) return;
  auto path = (std::filesystem::path(job.spec.out) / "result.json").string();
  try {
    self->state.cfg.ops.write_file(path, result_json(report));
  } catch (const std::exception& e) {
    spdlog::error("job {}: cannot write {}: {}", job.spec.id, path, e.what());
  }
}

/// A job finished (done, failed or cancelled): it lets go of its key (the
/// partitions still in flight hold their own handles); the key cache decides
/// whether the key stays.
void release_key(job_registry_pointer self, job_entry& job) {
  if (!job.ctx) return;
  self->send(self->state.cfg.keys, key_users_atom::value, job.ctx->key, int32_t{-1});
  job.ctx.reset();
}

/// Forgets the job's id and out directory as live ones.
void retire_id(job_registry_pointer self, const job_entry& job) {
  auto it = self->state.live_ids.find(job.spec.id);
  if (it != self->state.live_ids.end() && it->second == job.seq) self->state.live_ids.erase(it);
  auto out = self->state.live_outs.find(job.spec.out);
  if (out != self->state.live_outs.end() && out->second == job.seq) self->state.live_outs.erase(out);
}

/// Completes the job once every partition is done or failed.
void complete_if_finished(job_registry_pointer self, job_entry& job) {
  if (job.complete() || job.finished < job.parts.size()) return;
  bool failed = job.parts.empty();
  for (const auto& p : job.parts) failed |= p.state == partition_state::failed;
  job.state = failed ? job_state::failed : job_state::done;
  job.total.end = self->state.cfg.clock.now_ms();
  retire_id(self, job);
  release_key(self, job);
  auto report = make_report(job);
  write_result(self, job, report);
  if (self->state.cfg.journal) self->send(self->state.cfg.journal, complete_atom::value, job.seq);
  if (failed)
    spdlog::warn("job {} failed: {}", job.spec.id, report.error.message);
  else
    spdlog::info("job {} done: {} partition(s) in {:.1f} ms", job.spec.id, job.parts.size(),
                 job.total.end - job.total.start);
  for (auto& rp : job.awaiting) rp.deliver(report);
  job.awaiting.clear();
}

/// Fails every partition not yet finished with `error` and completes the job.
void fail_job(job_registry_pointer self, job_entry& job, const file_error& error) {
  if (job.complete()) return;
  if (job.parts.empty()) job.error = error;
  for (auto& p : job.parts) {
    if (terminal(p.state)) continue;
    p.state = partition_state::failed;
    p.error = error;
    ++job.finished;
    job.finish_order.push_back(p.index);
  }
  complete_if_finished(self, job);
  notify_watchers(self, job.seq);
}

/// Why `id` cannot be submitted now; empty if it can.
std::string id_conflict(job_registry_pointer self, const job_spec& spec) {
  if (auto it = self->state.live_ids.find(spec.id); it != self->state.live_ids.end()) {
    const auto& live = self->state.jobs.at(it->second);
    return "job \"" + spec.id + "\": the id is already used by a live job (#" +
           std::to_string(live.seq) + ", " + to_string(live.state) +
           "); ids of live jobs are unique on a server";
  }
  if (auto it = self->state.live_outs.find(spec.out); it != self->state.live_outs.end()) {
    const auto& live = self->state.jobs.at(it->second);
    return "job \"" + spec.id + "\": field \"out\": " + spec.out +
           " is the out directory of live job \"" + live.spec.id + "\" (#" +
           std::to_string(live.seq) + ", " + to_string(live.state) +
           "); one would overwrite the other's proofs";
  }
  return {};
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

}  // namespace

job_registry_actor::behavior_type job_registry(job_registry_pointer self, job_registry_config cfg) {
  self->state.cfg = std::move(cfg);
  return {
      [=](submit_atom, const job_spec& spec) { return submit(self, spec); },
      [=](submit_atom, const std::vector<job_spec>& specs) { return submit_all(self, specs); },
      [=](cancel_atom, uint64_t seq) { return cancel_job(self, seq); },
      [=](watch_atom, const std::vector<watch_cursor>& cursors, uint32_t wait_ms) {
        return watch(self, cursors, wait_ms);
      },
      [=](watch_atom, uint64_t watcher) { on_watch_timeout(self, watcher); },
      [=](status_atom, uint64_t seq) { return status_of(self, seq); },
      [=](status_atom) { return status_all(self); },
      [=](await_atom, uint64_t seq) { return await_job(self, seq); },
      [=](stage_atom, uint64_t seq, uint32_t index, partition_state s) {
        on_stage(self, seq, index, s);
      },
      [=](done_atom, const partition_done& d) { on_done(self, d); },
      [=](failed_atom, const partition_failure& f) { on_failed(self, f); },
      [=](recover_atom, const std::vector<job_spec>& specs,
          const std::vector<std::vector<uint32_t>>& done) {
        return recover_jobs(self, specs, done);
      },
  };
}

caf::result<uint64_t> submit(job_registry_pointer self, const job_spec& spec) {
  if (auto conflict = id_conflict(self, spec); !conflict.empty())
    return caf::make_error(caf::sec::invalid_argument, conflict);
  return admit(self, spec);
}

caf::result<std::vector<uint64_t>> submit_all(job_registry_pointer self,
                                              const std::vector<job_spec>& specs) {
  std::map<std::string, size_t> seen;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (auto conflict = id_conflict(self, specs[i]); !conflict.empty())
      return caf::make_error(caf::sec::invalid_argument, conflict);
    if (!seen.emplace(specs[i].id, i).second)
      return caf::make_error(caf::sec::invalid_argument,
                             "job \"" + specs[i].id + "\": the id is given twice");
  }
  std::vector<uint64_t> seqs;
  for (const auto& spec : specs) seqs.push_back(admit(self, spec));
  if (!self->state.cfg.journal) return seqs;
  // Jobs that failed on admission have nothing to recover.
  std::vector<uint64_t> live;
  std::vector<job_spec> live_specs;
  for (size_t i = 0; i < seqs.size(); ++i)
    if (!self->state.jobs.at(seqs[i]).complete()) {
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
    if (auto conflict = id_conflict(self, specs[i]); !conflict.empty()) {
      spdlog::error("journal: {}; not recovered", conflict);
      seqs.push_back(0);  // answers stay aligned with `specs`
      continue;
    }
    seqs.push_back(admit(self, specs[i], i < done.size() ? done[i] : std::vector<uint32_t>{}));
  }
  return seqs;
}

uint64_t admit(job_registry_pointer self, const job_spec& spec,
               const std::vector<uint32_t>& done) {
  auto& st = self->state;
  uint64_t seq = st.next_seq++;
  job_entry& job = st.jobs[seq];
  job.seq = seq;
  job.spec = spec;
  job.total.start = st.cfg.clock.now_ms();
  job.parts.resize(spec.witnesses.size());
  for (uint32_t i = 0; i < job.parts.size(); ++i) job.parts[i].index = i;
  if (!spec.id.empty()) st.live_ids[spec.id] = seq;
  if (!spec.out.empty()) st.live_outs[spec.out] = seq;

  if (auto problem = spec_problem(spec); !problem.empty()) {
    fail_job(self, job, {"", problem});
    return seq;
  }
  if (!done.empty()) {
    job_context names;
    names.spec = spec;
    for (auto index : done) {
      if (index >= job.parts.size() || terminal(job.parts[index].state)) continue;
      auto& p = job.parts[index];
      p.state = partition_state::done;
      p.proof_file = names.proof_name(index);
      p.public_file = names.public_name(index);
      p.verified = true;  // checked by the journal before it was kept
      ++job.finished;
      job.finish_order.push_back(index);
    }
    if (job.finished == job.parts.size()) {
      complete_if_finished(self, job);
      return seq;
    }
  } else if (auto n = clear_previous_outputs(spec.out)) {
    spdlog::info("job {}: removed {} output file(s) of an earlier job from {}", spec.id, n,
                 spec.out);
  }
  spdlog::debug("job {} (#{}): {} partition(s), priority {}, key {}", spec.id, seq,
                spec.witnesses.size(), to_string(spec.prio), spec.zkey);
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

size_t start_jobs(job_registry_pointer self, const std::vector<uint64_t>& seqs,
                  const zk::groth16::key_ptr& key) {
  const auto& info = key->info;
  auto est = memory::estimate_partition(info.n_vars, info.domain_size, info.n8r,
                                        self->state.cfg.footprint);
  std::vector<work_order> orders;
  size_t started = 0;
  for (auto seq : seqs) {
    auto* job = find_job(self, seq);
    if (!job || job->complete()) continue;
    auto ctx = std::make_shared<job_context>();
    ctx->seq = seq;
    ctx->spec = job->spec;
    ctx->key = key;
    job->ctx = ctx;
    ++started;
    for (uint32_t i = 0; i < job->parts.size(); ++i) {
      if (terminal(job->parts[i].state)) continue;  // recovered as done
      work_order o;
      o.part.job = ctx;
      o.part.index = i;
      o.bytes = est.total();
      o.bulk = est.bulk();
      o.pinnable = est.pinnable;
      o.working = est.working;
      orders.push_back(std::move(o));
    }
  }
  if (orders.empty()) return started;
  if (self->state.cfg.partitions_queued) self->state.cfg.partitions_queued(key, orders.size());
  spdlog::debug("reserving {} partition(s) of {} each", orders.size(),
                memory::format_bytes(est.total()));
  self->request(self->state.cfg.memory, caf::infinite, reserve_atom::value, std::move(orders))
      .then([=](const std::vector<partition_failure>& refused) { on_refused(self, refused); });
  return started;
}

namespace {

/// Queues partition `index` of a running job for memory again, to be
/// synthesized and proved once more (after a retryable failure).
void reserve_again(job_registry_pointer self, const job_entry& job, uint32_t index,
                   placement where) {
  const auto& info = job.ctx->key->info;
  auto est = memory::estimate_partition(info.n_vars, info.domain_size, info.n8r,
                                        self->state.cfg.footprint);
  work_order o;
  o.part.job = job.ctx;
  o.part.index = index;
  o.part.where = where;
  o.bytes = est.total();
  o.bulk = est.bulk();
  o.pinnable = est.pinnable;
  o.working = est.working;
  self->request(self->state.cfg.memory, caf::infinite, reserve_atom::value,
                std::vector<work_order>{std::move(o)})
      .then([=](const std::vector<partition_failure>& refused) { on_refused(self, refused); });
}

}  // namespace

void on_refused(job_registry_pointer self, const std::vector<partition_failure>& refused) {
  for (const auto& f : refused) on_failed(self, f);
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

void on_done(job_registry_pointer self, const partition_done& d) {
  auto* job = find_job(self, d.job_seq);
  if (!job || d.index >= job->parts.size()) return;
  auto& p = job->parts[d.index];
  if (job->state == job_state::cancelled && p.state == partition_state::cancelled &&
      !self->state.live_outs.count(job->spec.out)) {
    // A finalizer wrote this proof while the cancel was on its way: the
    // proof stays, so result.json lists it (unless another job owns the out
    // directory by now).
    p.state = partition_state::done;
    p.spans = d.spans;
    p.proof_file = d.proof_file;
    p.public_file = d.public_file;
    p.verified = d.verified;
    p.verify_ms = d.verify_ms;
    write_result(self, *job, make_report(*job));
    return;
  }
  if (terminal(p.state)) return;
  p.state = partition_state::done;
  p.spans = d.spans;
  p.proof_file = d.proof_file;
  p.public_file = d.public_file;
  p.verified = d.verified;
  p.verify_ms = d.verify_ms;
  if (self->state.cfg.journal)
    self->send(self->state.cfg.journal, done_atom::value, d.job_seq, d.index);
  ++job->finished;
  job->finish_order.push_back(d.index);
  complete_if_finished(self, *job);
  notify_watchers(self, d.job_seq);
}

void on_failed(job_registry_pointer self, const partition_failure& f) {
  auto* job = find_job(self, f.job_seq);
  if (!job || f.index >= job->parts.size() || terminal(job->parts[f.index].state)) return;
  auto& p = job->parts[f.index];
  std::optional<placement> again;
  if (f.retryable && job->ctx && !job->ctx->cancelled.load(std::memory_order_acquire))
    again = next_placement(self->state.cfg.retries, p.retries, f.spans.gpu, f.device_lost);
  if (again) {
    ++p.retries;
    p.state = partition_state::queued;
    const std::string where = again->device < 0 ? "any backend"
                              : again->avoid    ? "a backend other than " + f.spans.backend
                              : again->device == f.spans.gpu
                                  ? f.spans.backend
                                  : "the fallback backend";
    spdlog::warn("job {} partition {}: {}; proving it again on {} (retry {})", job->spec.id,
                 f.index, f.error.message, where, p.retries);
    reserve_again(self, *job, f.index, *again);
    notify_watchers(self, f.job_seq);
    return;
  }
  p.state = partition_state::failed;
  p.spans = f.spans;
  p.error = f.error;
  if (p.retries > 0)
    p.error.message += " (partition " + std::to_string(f.index) + " on " +
                       (f.spans.backend.empty() ? "its backend" : f.spans.backend) + ", after " +
                       std::to_string(p.retries) + " retr" + (p.retries == 1 ? "y" : "ies") + ")";
  ++job->finished;
  job->finish_order.push_back(f.index);
  spdlog::warn("job {} partition {}: {}", job->spec.id, f.index, f.error.message);
  complete_if_finished(self, *job);
  notify_watchers(self, f.job_seq);
}

caf::result<job_status> status_of(job_registry_pointer self, uint64_t seq) {
  if (auto* job = find_job(self, seq)) return make_status(*job);
  return caf::make_error(caf::sec::invalid_argument, "no job #" + std::to_string(seq));
}

std::vector<job_status> status_all(job_registry_pointer self) {
  std::vector<job_status> out;
  for (const auto& [seq, job] : self->state.jobs) out.push_back(make_status(job));
  return out;
}

caf::result<job_report> await_job(job_registry_pointer self, uint64_t seq) {
  auto* job = find_job(self, seq);
  if (!job) return caf::make_error(caf::sec::invalid_argument, "no job #" + std::to_string(seq));
  if (job->complete()) return make_report(*job);
  auto rp = self->make_response_promise<job_report>();
  job->awaiting.push_back(rp);
  return rp;
}

caf::result<job_status> cancel_job(job_registry_pointer self, uint64_t seq) {
  auto* job = find_job(self, seq);
  if (!job) return caf::make_error(caf::sec::invalid_argument, "no job #" + std::to_string(seq));
  if (job->complete())
    return caf::make_error(caf::sec::invalid_argument, "job \"" + job->spec.id +
                                                           "\" already finished (" +
                                                           to_string(job->state) + ")");
  // Stages in flight see the flag and drop the job's partitions; their
  // reservations then return its memory.
  if (job->ctx) job->ctx->cancelled.store(true, std::memory_order_release);
  for (auto& p : job->parts) {
    if (terminal(p.state)) continue;
    p.state = partition_state::cancelled;
    ++job->finished;
    job->finish_order.push_back(p.index);
  }
  job->state = job_state::cancelled;
  job->total.end = self->state.cfg.clock.now_ms();
  retire_id(self, *job);
  release_key(self, *job);
  auto report = make_report(*job);
  write_result(self, *job, report);
  if (self->state.cfg.journal) self->send(self->state.cfg.journal, complete_atom::value, seq);
  for (auto& rp : job->awaiting) rp.deliver(report);
  job->awaiting.clear();
  spdlog::info("job {} cancelled", job->spec.id);
  std::string id = job->spec.id;
  self->request(self->state.cfg.memory, caf::infinite, cancel_atom::value, seq)
      .then([=](uint64_t dropped) {
        spdlog::debug("job {}: the memory manager dropped {} queued partition(s)", id, dropped);
      });
  notify_watchers(self, seq);
  return make_status(*job);
}

job_progress make_progress(const job_entry& job, uint32_t seen) {
  job_progress p;
  p.status = make_status(job);
  for (size_t i = seen; i < job.finish_order.size(); ++i)
    p.finished.push_back(job.parts[job.finish_order[i]]);
  p.seen = static_cast<uint32_t>(std::max<size_t>(seen, job.finish_order.size()));
  p.complete = job.complete();
  if (p.complete) p.report = make_report(job);
  return p;
}

namespace {

bool has_news(const job_entry& job, uint32_t seen) {
  return job.finish_order.size() > seen || job.complete();
}

std::vector<job_progress> progress_of(job_registry_pointer self,
                                      const std::vector<watch_cursor>& cursors) {
  std::vector<job_progress> out;
  for (const auto& c : cursors)
    if (auto* job = find_job(self, c.seq)) out.push_back(make_progress(*job, c.seen));
  return out;
}

}  // namespace

caf::result<std::vector<job_progress>> watch(job_registry_pointer self,
                                             const std::vector<watch_cursor>& cursors,
                                             uint32_t wait_ms) {
  bool news = cursors.empty();
  for (const auto& c : cursors) {
    auto* job = find_job(self, c.seq);
    if (!job)
      return caf::make_error(caf::sec::invalid_argument, "no job #" + std::to_string(c.seq));
    news |= has_news(*job, c.seen);
  }
  if (news || wait_ms == 0) return progress_of(self, cursors);
  auto& st = self->state;
  if (st.watchers.size() >= max_watchers) {
    auto oldest = st.watchers.begin();
    oldest->second.promise.deliver(progress_of(self, oldest->second.cursors));
    st.watchers.erase(oldest);
  }
  uint64_t id = st.next_watcher++;
  auto rp = self->make_response_promise<std::vector<job_progress>>();
  st.watchers.emplace(id, job_watcher{cursors, rp});
  self->delayed_send(self, std::chrono::milliseconds(std::min(wait_ms, max_watch_ms)),
                     watch_atom::value, id);
  return rp;
}

void on_watch_timeout(job_registry_pointer self, uint64_t watcher) {
  auto it = self->state.watchers.find(watcher);
  if (it == self->state.watchers.end()) return;
  it->second.promise.deliver(progress_of(self, it->second.cursors));
  self->state.watchers.erase(it);
}

void notify_watchers(job_registry_pointer self, uint64_t seq) {
  auto& st = self->state;
  for (auto it = st.watchers.begin(); it != st.watchers.end();) {
    bool news = false;
    for (const auto& c : it->second.cursors)
      if (c.seq == seq)
        if (auto* job = find_job(self, seq)) news |= has_news(*job, c.seen);
    if (!news) {
      ++it;
      continue;
    }
    it->second.promise.deliver(progress_of(self, it->second.cursors));
    it = st.watchers.erase(it);
  }
}

job_report make_report(const job_entry& job) {
  job_report r;
  r.seq = job.seq;
  r.id = job.spec.id;
  r.out = job.spec.out;
  r.state = job.state;
  r.partitions = job.parts;
  r.total = job.total;
  for (const auto& p : job.parts)
    if (p.state == partition_state::failed) {
      r.has_error = true;
      r.error = p.error;
      break;
    }
  if (!r.has_error && job.error) {
    r.has_error = true;
    r.error = *job.error;
  }
  return r;
}

job_status make_status(const job_entry& job) {
  job_status s;
  s.seq = job.seq;
  s.id = job.spec.id;
  s.state = job.state;
  s.total = static_cast<uint32_t>(job.parts.size());
  for (const auto& p : job.parts) {
    s.done += p.state == partition_state::done;
    s.failed += p.state == partition_state::failed;
  }
  return s;
}

}  // namespace proofline
