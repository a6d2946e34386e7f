#include "actors/job_registry.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/sec.hpp>

#include <filesystem>

#include <spdlog/spdlog.h>

#include "actors/key_loader.hpp"
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
  return s == partition_state::done || s == partition_state::failed;
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

/// Completes the job once every partition is done or failed.
void complete_if_finished(job_registry_pointer self, job_entry& job) {
  if (job.complete() || job.finished < job.parts.size()) return;
  bool failed = job.parts.empty();
  for (const auto& p : job.parts) failed |= p.state == partition_state::failed;
  job.state = failed ? job_state::failed : job_state::done;
  job.total.end = self->state.cfg.clock.now_ms();
  auto report = make_report(job);
  write_result(self, job, report);
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
  }
  complete_if_finished(self, job);
}

key_load_result loader_error(job_registry_pointer self, const std::string& path,
                             const caf::error& e) {
  return {nullptr, {path, path + ": key loader failed: " + self->system().render(e)}};
}

void request_key(job_registry_pointer self, uint64_t seq, const std::string& path) {
  auto& k = self->state.keys[path];
  if (k.key) {
    start_jobs(self, {seq}, k.key);
    return;
  }
  k.waiting.push_back(seq);
  if (k.loader) return;  // already loading
  const auto& load = self->state.cfg.ops.load_key;
  k.loader = self->state.cfg.detach_loaders ? self->spawn<caf::detached>(key_loader, load)
                                            : self->spawn(key_loader, load);
  spdlog::info("loading key {}", path);
  self->request(k.loader, caf::infinite, load_atom::value, path)
      .then([=](const key_load_result& r) { on_key_loaded(self, path, r); },
            [=](caf::error& e) { on_key_loaded(self, path, loader_error(self, path, e)); });
}

}  // namespace

job_registry_actor::behavior_type job_registry(job_registry_pointer self, job_registry_config cfg) {
  self->state.cfg = std::move(cfg);
  return {
      [=](submit_atom, const job_spec& spec) { return submit(self, spec); },
      [=](status_atom, uint64_t seq) { return status_of(self, seq); },
      [=](status_atom) { return status_all(self); },
      [=](await_atom, uint64_t seq) { return await_job(self, seq); },
      [=](stage_atom, uint64_t seq, uint32_t index, partition_state s) {
        on_stage(self, seq, index, s);
      },
      [=](done_atom, const partition_done& d) { on_done(self, d); },
      [=](failed_atom, const partition_failure& f) { on_failed(self, f); },
  };
}

uint64_t submit(job_registry_pointer self, const job_spec& spec) {
  auto& st = self->state;
  uint64_t seq = st.next_seq++;
  job_entry& job = st.jobs[seq];
  job.seq = seq;
  job.spec = spec;
  job.total.start = st.cfg.clock.now_ms();
  job.parts.resize(spec.witnesses.size());
  for (uint32_t i = 0; i < job.parts.size(); ++i) job.parts[i].index = i;

  if (auto problem = spec_problem(spec); !problem.empty()) {
    fail_job(self, job, {"", problem});
    return seq;
  }
  spdlog::debug("job {} (#{}): {} partition(s), priority {}, key {}", spec.id, seq,
                spec.witnesses.size(), to_string(spec.prio), spec.zkey);
  request_key(self, seq, spec.zkey);
  return seq;
}

void on_key_loaded(job_registry_pointer self, const std::string& path, const key_load_result& r) {
  auto it = self->state.keys.find(path);
  if (it == self->state.keys.end()) return;
  auto waiting = std::move(it->second.waiting);
  it->second.waiting.clear();
  it->second.loader = nullptr;
  if (r.key) {
    it->second.key = r.key;
    const auto& info = r.key->info;
    spdlog::info("key {}: {}, {} variables, {} public, domain 2^{}", path,
                 zk::to_string(info.curve), info.n_vars, info.n_public, info.log_domain);
    start_jobs(self, waiting, r.key);
    return;
  }
  // Not cached: a later job naming the same file tries again.
  self->state.keys.erase(it);
  spdlog::error("{}", r.error.message);
  for (auto seq : waiting)
    if (auto* job = find_job(self, seq)) fail_job(self, *job, r.error);
}

void start_jobs(job_registry_pointer self, const std::vector<uint64_t>& seqs,
                const zk::groth16::key_ptr& key) {
  const auto& info = key->info;
  auto est = memory::estimate_partition(info.n_vars, info.domain_size, info.n8r,
                                        self->state.cfg.footprint);
  std::vector<work_order> orders;
  for (auto seq : seqs) {
    auto* job = find_job(self, seq);
    if (!job || job->complete()) continue;
    auto ctx = std::make_shared<job_context>();
    ctx->seq = seq;
    ctx->spec = job->spec;
    ctx->key = key;
    job->ctx = ctx;
    for (uint32_t i = 0; i < job->parts.size(); ++i) {
      work_order o;
      o.part.job = ctx;
      o.part.index = i;
      o.bytes = est.total();
      o.bulk = est.bulk();
      orders.push_back(std::move(o));
    }
  }
  if (orders.empty()) return;
  spdlog::debug("reserving {} partition(s) of {} each", orders.size(),
                memory::format_bytes(est.total()));
  self->request(self->state.cfg.memory, caf::infinite, reserve_atom::value, std::move(orders))
      .then([=](const std::vector<partition_failure>& refused) { on_refused(self, refused); });
}

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
  if (!job || d.index >= job->parts.size() || terminal(job->parts[d.index].state)) return;
  auto& p = job->parts[d.index];
  p.state = partition_state::done;
  p.spans = d.spans;
  p.proof_file = d.proof_file;
  p.public_file = d.public_file;
  ++job->finished;
  complete_if_finished(self, *job);
}

void on_failed(job_registry_pointer self, const partition_failure& f) {
  auto* job = find_job(self, f.job_seq);
  if (!job || f.index >= job->parts.size() || terminal(job->parts[f.index].state)) return;
  auto& p = job->parts[f.index];
  p.state = partition_state::failed;
  p.spans = f.spans;
  p.error = f.error;
  ++job->finished;
  spdlog::warn("job {} partition {}: {}", job->spec.id, f.index, f.error.message);
  complete_if_finished(self, *job);
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
