#include "actors/journal.hpp"

#include "actors/detail/spawn.hpp"

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/spawn_options.hpp>
#include <caf/sec.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>
#include <vector>

#include <spdlog/spdlog.h>

namespace proofline {

namespace {

/// Whether `path` lies under directory `root` (both absolute, lexically).
bool under(const std::string& path, const std::string& root) {
  return path.size() > root.size() + 1 && path.compare(0, root.size(), root) == 0 &&
         path[root.size()] == '/';
}

/// What recovery has gathered so far; shared by the key requests' handlers.
struct recovery {
  std::vector<journaled_job> jobs;
  std::vector<std::vector<uint32_t>> verified;  ///< per job: done partitions that verify
  size_t waiting = 0;                           ///< key requests not answered yet
};

class journal_state {
 public:
  static inline const char* name = "journal";
  using pointer = journal_actor::stateful_pointer<journal_state>;

  explicit journal_state(pointer self) : self(self) {}

  journal_actor::behavior_type make_behavior(journal_config config);

 private:
  // ---- handlers
  caf::result<std::vector<uint64_t>> record(const std::vector<uint64_t>& seqs,
                                            const std::vector<job_spec>& specs);
  void on_done(uint64_t seq, uint32_t index);
  void on_complete(uint64_t seq, const job_report& report);
  /// Answers for the finished jobs, then re-queues the pending ones with
  /// their finished partitions that verify.
  void recover(const job_registry_actor& registry, const key_cache_actor& keys);

  // ---- helpers
  /// The distinct witnesses of `spec` under the state directory's spool.
  std::vector<std::string> spool_files(const job_spec& spec) const;
  /// Job `seq`, recovered, no longer needs its spooled witnesses: those no
  /// other unfinished recovered job names are removed, then the directories
  /// they leave empty (up to the spool itself).
  void release_spool(uint64_t seq);
  /// `report` in the store's record format (CAF's binary serialization).
  std::string encode(job_report report) const;
  /// The report a finished record holds; false if it does not decode.
  bool decode(const std::string& record, job_report& report) const;
  /// Job `jid` (0: not journaled) finished with `report`: kept among the
  /// finished jobs.
  void keep_finished(int64_t jid, const job_report& report);
  /// The done partitions of `job` whose files verify against `key`.
  std::vector<uint32_t> verified_parts(const journaled_job& job,
                                       const zk::groth16::key_ptr& key) const;
  void requeue(const std::shared_ptr<recovery>& r, const job_registry_actor& registry);
  /// The finished jobs' reports to the registry, before the unfinished jobs
  /// are queued again (one sender, so they arrive first and keep the older
  /// sequence numbers).
  void restore_finished(const job_registry_actor& registry);

  // ---- data
  pointer self;
  journal_config cfg;
  std::map<uint64_t, int64_t> jids;  ///< registry seq -> journal job key
  /// Spooled witness files of recovered jobs -> the jobs naming them that
  /// are not finished (a job left in the journal counts for good).
  std::map<std::string, uint32_t> spool_users;
  std::map<uint64_t, std::vector<std::string>> spooled;  ///< recovered job seq -> its spool files
  /// Recovery under way: completions of jobs not mapped yet (recovered
  /// jobs whose partitions were all done) wait here for the registry's answer.
  bool recovering = false;
  std::map<uint64_t, job_report> early;
};

journal_actor::behavior_type journal_state::make_behavior(journal_config config) {
  cfg = std::move(config);
  return {
      [this](record_atom, const std::vector<uint64_t>& seqs, const std::vector<job_spec>& specs) {
        return record(seqs, specs);
      },
      [this](record_done_atom, uint64_t seq, uint32_t index) { on_done(seq, index); },
      [this](complete_atom, uint64_t seq, const job_report& report) { on_complete(seq, report); },
      [this](replay_atom, const job_registry_actor& registry, const key_cache_actor& keys) {
        recover(registry, keys);
      },
  };
}

caf::result<std::vector<uint64_t>> journal_state::record(const std::vector<uint64_t>& seqs,
                                                         const std::vector<job_spec>& specs) {
  if (seqs.size() != specs.size())
    return caf::make_error(caf::sec::invalid_argument, "journal: seqs and specs differ in number");
  if (specs.empty()) return seqs;
  try {
    auto added = cfg.store->add_jobs(specs);
    for (size_t i = 0; i < seqs.size(); ++i) jids[seqs[i]] = added[i];
  } catch (const std::exception& e) {
    spdlog::error("journal: {}", e.what());
    return caf::make_error(caf::sec::runtime_error,
                           std::string("the jobs run, but the state journal could not record "
                                       "them, so a restart would lose them: ") +
                               e.what());
  }
  return seqs;
}

void journal_state::on_done(uint64_t seq, uint32_t index) {
  auto it = jids.find(seq);
  if (it == jids.end()) return;  // not journaled (a refused or local job)
  try {
    cfg.store->mark_done(it->second, index);
  } catch (const std::exception& e) {
    spdlog::error("journal: {}", e.what());
  }
}

std::vector<std::string> journal_state::spool_files(const job_spec& spec) const {
  const std::string root = state_spool_root(*cfg.store);
  std::vector<std::string> out;
  for (const auto& w : spec.witnesses)
    if (under(w, root) && std::find(out.begin(), out.end(), w) == out.end()) out.push_back(w);
  return out;
}

void journal_state::release_spool(uint64_t seq) {
  namespace fs = std::filesystem;
  auto it = spooled.find(seq);
  if (it == spooled.end()) return;
  const fs::path root = state_spool_root(*cfg.store);
  size_t removed = 0;
  for (const auto& file : it->second) {
    auto users = spool_users.find(file);
    if (users == spool_users.end() || --users->second > 0) continue;
    spool_users.erase(users);
    std::error_code ec;
    removed += fs::remove(file, ec);
    for (fs::path dir = fs::path(file).parent_path(); under(dir.string(), root.string());
         dir = dir.parent_path())
      if (!fs::is_empty(dir, ec) || ec || !fs::remove(dir, ec)) break;
  }
  if (removed)
    spdlog::debug("journal: removed {} spooled witness file(s) of recovered job #{}", removed,
                  seq);
  spooled.erase(it);
}

std::string journal_state::encode(job_report report) const {
  std::vector<char> buf;
  caf::binary_serializer sink{self->system(), buf};
  if (auto err = sink(report)) throw std::runtime_error(self->system().render(err));
  return std::string(buf.begin(), buf.end());
}

bool journal_state::decode(const std::string& record, job_report& report) const {
  caf::binary_deserializer source{self->system(), record.data(), record.size()};
  return !source(report) && source.remaining() == 0;
}

void journal_state::keep_finished(int64_t jid, const job_report& report) {
  try {
    cfg.store->finish_job(jid, report.id, encode(report), cfg.keep_finished,
                          cfg.keep_finished_bytes);
  } catch (const std::exception& e) {
    spdlog::error("journal: {}", e.what());
  }
}

void journal_state::on_complete(uint64_t seq, const job_report& report) {
  auto it = jids.find(seq);
  if (it == jids.end()) {
    // A recovered job that completed before the registry's answer mapped it.
    if (recovering) early[seq] = report;
    return;
  }
  keep_finished(it->second, report);
  jids.erase(it);
  release_spool(seq);
}

std::vector<uint32_t> journal_state::verified_parts(const journaled_job& job,
                                                    const zk::groth16::key_ptr& key) const {
  std::vector<uint32_t> ok;
  job_context names;
  names.spec = job.spec;
  for (auto index : job.done) {
    auto proof = names.out_path(names.proof_name(index));
    auto pub = names.out_path(names.public_name(index));
    std::string problem = cfg.check_proof
                              ? cfg.check_proof(key, proof, pub)
                              : std::string();
    if (problem.empty())
      ok.push_back(index);
    else
      spdlog::warn("journal: job {} partition {} is proved again: {}", job.spec.id, index,
                   problem);
  }
  return ok;
}

void journal_state::requeue(const std::shared_ptr<recovery>& r,
                            const job_registry_actor& registry) {
  std::vector<job_spec> specs;
  size_t kept = 0;
  for (size_t i = 0; i < r->jobs.size(); ++i) {
    specs.push_back(r->jobs[i].spec);
    kept += r->verified[i].size();
  }
  self->request(registry, caf::infinite, recover_atom::value, specs, r->verified)
      .then(
          [=](const std::vector<uint64_t>& seqs) {
            // Every journaled job's spooled witnesses count it as a user;
            // a job not recovered stays one, for the next start.
            std::vector<uint64_t> ended;
            for (size_t i = 0; i < r->jobs.size(); ++i) {
              auto files = spool_files(r->jobs[i].spec);
              for (const auto& f : files) ++spool_users[f];
              if (i < seqs.size() && seqs[i] != 0) spooled[seqs[i]] = std::move(files);
            }
            for (size_t i = 0; i < seqs.size() && i < r->jobs.size(); ++i) {
              // A job whose partitions were all finished completed at once,
              // before this answer could map it: forget it here.
              bool finished = r->verified[i].size() == r->jobs[i].spec.witnesses.size();
              if (seqs[i] != 0 && !finished) {
                jids[seqs[i]] = r->jobs[i].jid;
                continue;
              }
              if (!finished) continue;  // not recovered: kept for the next start
              if (auto got = early.find(seqs[i]); seqs[i] != 0 && got != early.end()) {
                keep_finished(r->jobs[i].jid, got->second);
              } else {
                try {
                  cfg.store->remove_job(r->jobs[i].jid);
                } catch (const std::exception& e) {
                  spdlog::error("journal: {}", e.what());
                }
              }
              if (seqs[i] != 0) ended.push_back(seqs[i]);
            }
            recovering = false;
            early.clear();
            for (auto seq : ended) release_spool(seq);
            spdlog::info("journal: re-queued {} job(s) from {}; {} finished partition(s) kept",
                         seqs.size(), cfg.store->path(), kept);
          },
          [=](caf::error& e) {
            recovering = false;
            early.clear();
            spdlog::error("journal: the registry refused the journaled jobs: {}",
                          self->system().render(e));
          });
}

void journal_state::restore_finished(const job_registry_actor& registry) {
  std::vector<std::string> records;
  try {
    records = cfg.store->finished();
  } catch (const std::exception& e) {
    spdlog::error("journal: {}", e.what());
    return;
  }
  std::vector<job_report> reports;
  for (const auto& rec : records) {
    job_report r;
    if (decode(rec, r))
      reports.push_back(std::move(r));
    else
      spdlog::warn("journal: {}: a finished job's record does not decode; skipped",
                   cfg.store->path());
  }
  if (reports.empty()) return;
  spdlog::info("journal: {} finished job(s) from {} answered for again", reports.size(),
               cfg.store->path());
  self->send(registry, recover_atom::value, std::move(reports));
}

void journal_state::recover(const job_registry_actor& registry,
                            const key_cache_actor& keys) {
  restore_finished(registry);
  auto r = std::make_shared<recovery>();
  try {
    r->jobs = cfg.store->pending();
  } catch (const std::exception& e) {
    spdlog::error("journal: {}", e.what());
    return;
  }
  if (r->jobs.empty()) return;
  recovering = true;
  r->verified.resize(r->jobs.size());
  for (const auto& job : r->jobs)
    if (auto n = remove_partial_files(job.spec.out))
      spdlog::info("journal: job {}: removed {} partly written file(s) from {}", job.spec.id, n,
                   job.spec.out);
  for (size_t i = 0; i < r->jobs.size(); ++i)
    r->waiting += !r->jobs[i].done.empty();
  if (r->waiting == 0) {
    requeue(r, registry);
    return;
  }
  for (size_t i = 0; i < r->jobs.size(); ++i) {
    if (r->jobs[i].done.empty()) continue;
    auto answered = [=](const zk::groth16::key_ptr& key) {
      if (key) {
        r->verified[i] = verified_parts(r->jobs[i], key);
        self->send(keys, key_users_atom::value, key, int32_t{-1});  // the job takes its own
      }
      if (--r->waiting == 0) requeue(r, registry);
    };
    self->request(keys, caf::infinite, key_atom::value, r->jobs[i].spec.zkey)
        .then([=](const key_load_result& k) { answered(k.key); },
              [=](caf::error&) { answered(nullptr); });
  }
}

}  // namespace

std::size_t remove_partial_files(const std::string& dir) {
  namespace fs = std::filesystem;
  std::size_t removed = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (!it->is_regular_file(type_ec)) continue;
    if (it->path().filename().string().find(".tmp-") == std::string::npos) continue;
    std::error_code rm_ec;
    if (fs::remove(it->path(), rm_ec)) ++removed;
  }
  return removed;
}

std::string state_spool_root(const journal_store& store) { return store.dir() + "/spool"; }

std::size_t remove_stale_spools(const journal_store& store,
                                const std::vector<journaled_job>& jobs) {
  namespace fs = std::filesystem;
  std::size_t removed = 0;
  std::error_code ec;
  for (fs::directory_iterator it(state_spool_root(store), ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string dir = it->path().string();
    bool used = false;
    for (const auto& j : jobs)
      for (const auto& w : j.spec.witnesses) used |= under(w, dir);
    std::error_code rm;
    if (!used && fs::remove_all(it->path(), rm) > 0) ++removed;
  }
  return removed;
}

journal_actor spawn_journal(caf::actor_system& sys, journal_config cfg) {
  const bool on_own_thread = cfg.detached;
  return spawn_stateful<journal_state>(sys, std::move(cfg), on_own_thread);
}

}  // namespace proofline
