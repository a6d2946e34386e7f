#include "actors/detail/job_entry.hpp"

#include <algorithm>

#include "base/paths.hpp"
#include "base/text.hpp"

namespace proofline {

bool terminal(partition_state s) {
  return s == partition_state::done || s == partition_state::failed ||
         s == partition_state::cancelled;
}

std::string spec_problem(const job_spec& spec, const job_payload* payload) {
  // The id reaches logs, status tables and result.json: a control character
  // in it could start a forged log line or drive a terminal, so it is refused.
  if (auto at = base::find_control(spec.id); at != std::string_view::npos)
    return "job \"" + base::escape_controls(spec.id) + "\": field \"id\": control character " +
           base::escape_controls(
               spec.id.substr(at, static_cast<unsigned char>(spec.id[at]) == 0xc2 ? 2 : 1)) + " at byte " + std::to_string(at) +
           "; ids are printable text";
  std::string who = "job \"" + spec.id + "\": ";
  if (spec.id.empty()) return "job has no id";
  if (spec.zkey.empty()) return who + "no zkey";
  if (spec.witnesses.empty()) return who + "no witness";
  for (const auto& w : spec.witnesses)
    if (w.empty()) return who + "empty witness path";
  if (spec.single && spec.witnesses.size() != 1)
    return who + "a single-witness job has one witness";
  const bool in_memory = payload && payload->return_outputs;
  if (spec.out.empty() && !in_memory) return who + "no out directory";
  if (!spec.out.empty() && in_memory)
    return who + "an out directory for a job whose outputs come back in memory";
  if (payload && !payload->witnesses.empty() && payload->witnesses.size() != spec.witnesses.size())
    return who + std::to_string(payload->witnesses.size()) + " witness buffers for " +
           std::to_string(spec.witnesses.size()) + " partitions";
  return {};
}

job_entry make_entry(uint64_t seq, const job_spec& spec, double start_ms) {
  job_entry job;
  job.seq = seq;
  job.spec = spec;
  job.total.start = start_ms;
  job.parts.resize(spec.witnesses.size());
  for (uint32_t i = 0; i < job.parts.size(); ++i) job.parts[i].index = i;
  return job;
}

job_entry restored_entry(uint64_t seq, const job_report& report) {
  job_entry job;
  job.seq = seq;
  job.spec.id = report.id;
  job.spec.out = report.out;
  job.state = report.state;
  job.parts = report.partitions;
  job.total = report.total;
  for (const auto& p : job.parts)
    if (terminal(p.state)) {
      ++job.finished;
      job.finish_order.push_back(p.index);
    }
  bool partition_error = false;
  for (const auto& p : job.parts) partition_error |= p.state == partition_state::failed;
  if (report.has_error && !partition_error) job.error = report.error;
  return job;
}

void mark_recovered(job_entry& job, const std::vector<uint32_t>& done) {
  job_context names;
  names.spec = job.spec;
  for (auto index : done) {
    if (index >= job.parts.size() || terminal(job.parts[index].state)) continue;
    auto& p = job.parts[index];
    p.proof_file = names.proof_name(index);
    p.public_file = names.public_name(index);
    p.verified = true;
    job.finish(index, partition_state::done);
  }
}

void record_done(partition_report& p, const partition_done& d) {
  p.state = partition_state::done;
  p.spans = d.spans;
  p.proof_file = d.proof_file;
  p.public_file = d.public_file;
  p.verified = d.verified;
  p.verify_ms = d.verify_ms;
  p.proof_json = d.proof_json;
  p.public_json = d.public_json;
}

void record_failure(partition_report& p, const partition_failure& f) {
  p.spans = f.spans;
  p.error = f.error;
  if (p.retries > 0)
    p.error.message += " (partition " + std::to_string(f.index) + " on " +
                       (f.spans.backend.empty() ? "its backend" : f.spans.backend) + ", after " +
                       std::to_string(p.retries) + " retr" + (p.retries == 1 ? "y" : "ies") + ")";
}

void live_names::add(const job_entry& job) {
  if (!job.spec.id.empty()) ids_[job.spec.id] = job.seq;
  if (!job.spec.out.empty()) outs_[job.spec.out] = job.seq;
}

void live_names::retire(const job_entry& job) {
  if (auto it = ids_.find(job.spec.id); it != ids_.end() && it->second == job.seq) ids_.erase(it);
  if (auto it = outs_.find(job.spec.out); it != outs_.end() && it->second == job.seq)
    outs_.erase(it);
}

namespace {

/// Heap bytes of a string beyond its own object (none while it fits the
/// small-string buffer, whose size std::string's capacity at construction tells).
std::size_t heap_bytes(const std::string& s) {
  static const std::size_t inline_capacity = std::string().capacity();
  return s.capacity() > inline_capacity ? s.capacity() + 1 : 0;
}

std::size_t heap_bytes(const file_error& e) { return heap_bytes(e.file) + heap_bytes(e.message); }

std::size_t heap_bytes(const partition_report& p) {
  std::size_t n = heap_bytes(p.proof_file) + heap_bytes(p.public_file) + heap_bytes(p.error) +
                  heap_bytes(p.spans.backend) + p.spans.device.capacity() * sizeof(named_span);
  for (const auto& d : p.spans.device) n += heap_bytes(d.name);
  return n;
}

}  // namespace

std::size_t retained_bytes(const job_entry& job) {
  // The map node around the entry: the entry, its key and the tree links.
  std::size_t n = sizeof(job_entry) + sizeof(uint64_t) + 4 * sizeof(void*);
  n += heap_bytes(job.spec.id) + heap_bytes(job.spec.zkey) + heap_bytes(job.spec.out);
  n += job.spec.witnesses.capacity() * sizeof(std::string);
  for (const auto& w : job.spec.witnesses) n += heap_bytes(w);
  n += job.parts.capacity() * sizeof(partition_report);
  for (const auto& p : job.parts) n += heap_bytes(p);
  n += job.finish_order.capacity() * sizeof(uint32_t);
  if (job.error) n += heap_bytes(*job.error);
  return n;
}

void finished_jobs::add(uint64_t seq, std::map<uint64_t, job_entry>& jobs) {
  auto it = jobs.find(seq);
  const std::size_t bytes = it == jobs.end() ? 0 : retained_bytes(it->second);
  order_.emplace_back(seq, bytes);
  bytes_ += bytes;
  auto over = [&] {
    return (limit_ > 0 && order_.size() > limit_) || (byte_limit_ > 0 && bytes_ > byte_limit_);
  };
  while (order_.size() > 1 && over()) {
    jobs.erase(order_.front().first);
    bytes_ -= order_.front().second;
    order_.pop_front();
  }
}

std::map<std::string, std::string> live_names::out_identities() const {
  std::map<std::string, std::string> ids;
  for (const auto& [out, seq] : outs_) ids.emplace(base::path_identity(out), out);
  return ids;
}

std::string live_names::conflict(const job_spec& spec,
                                 const std::map<uint64_t, job_entry>& jobs) const {
  return conflict(spec, jobs, out_identities());
}

std::string live_names::conflict(const job_spec& spec, const std::map<uint64_t, job_entry>& jobs,
                                 const std::map<std::string, std::string>& identities) const {
  if (auto it = ids_.find(spec.id); it != ids_.end()) {
    const auto& live = jobs.at(it->second);
    return "job \"" + spec.id + "\": the id is already used by a live job (#" +
           std::to_string(live.seq) + ", " + to_string(live.state) +
           "); ids of live jobs are unique on a server";
  }
  // By string first, then by identity (taken now for all of them: a
  // directory created since a job was admitted changes its path's identity).
  auto it = outs_.find(spec.out);
  if (it == outs_.end() && !spec.out.empty())
    if (auto same = identities.find(base::path_identity(spec.out)); same != identities.end())
      it = outs_.find(same->second);
  if (it != outs_.end()) {
    const auto& live = jobs.at(it->second);
    return "job \"" + spec.id + "\": field \"out\": " + spec.out +
           " is the out directory of live job \"" + live.spec.id + "\" (#" +
           std::to_string(live.seq) + ", " + to_string(live.state) +
           (it->first == spec.out ? "" : ", as " + it->first) +
           "); one would overwrite the other's proofs";
  }
  return {};
}

bool live_names::out_live(const std::string& out) const {
  if (out.empty()) return false;
  if (outs_.count(out)) return true;
  return out_identities().count(base::path_identity(out)) > 0;
}

std::string live_names::conflict(const std::vector<job_spec>& specs,
                                 const std::map<uint64_t, job_entry>& jobs) const {
  std::map<std::string, size_t> seen;
  const auto identities = out_identities();
  std::map<std::string, const job_spec*> outs;  // path identity -> the spec naming it
  for (const auto& spec : specs) {
    if (auto problem = conflict(spec, jobs, identities); !problem.empty()) return problem;
    if (!seen.emplace(spec.id, 0).second)
      return "job \"" + spec.id + "\": the id is given twice";
    if (spec.out.empty()) continue;
    auto [it, fresh] = outs.emplace(base::path_identity(spec.out), &spec);
    if (!fresh)
      return "job \"" + spec.id + "\": field \"out\": " + spec.out +
             " is also the out directory of job \"" + it->second->id + "\" (as " +
             it->second->out + "); one would overwrite the other's proofs";
  }
  return {};
}

work_order make_order(const job_ptr& ctx, uint32_t index, placement where,
                      const memory::backend_footprint& footprint) {
  const auto& info = ctx->key->info;
  auto est = memory::estimate_partition(info.n_vars, info.domain_size, info.n8r, footprint);
  work_order o;
  o.part.job = ctx;
  o.part.index = index;
  o.part.where = where;
  // A generator's signals live only during synthesis: released with the inputs.
  o.bytes = est.total() + ctx->generator_bytes;
  o.bulk = est.bulk() + ctx->generator_bytes;
  o.pinnable = est.pinnable;
  o.working = est.working;
  return o;
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

}  // namespace proofline
