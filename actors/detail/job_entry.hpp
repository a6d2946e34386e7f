// job_entry: the job registry's record of one job, and what it reports about
// it (status, report, progress past a watcher's cursor). Pure functions of
// the record, so the registry's file holds only its behaviour.
#pragma once

#include <caf/typed_response_promise.hpp>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "memory/estimate.hpp"
#include "messages/catalogue.hpp"

namespace proofline {

struct job_entry {
  uint64_t seq = 0;
  job_spec spec;
  payload_ptr payload;  ///< its witnesses in memory and returned outputs (local jobs); may be null
  job_ptr ctx;  ///< set once the key is loaded
  constraints_ptr constraints;  ///< job_spec::r1cs once read (before the key is asked for)
  job_state state = job_state::queued;
  std::vector<partition_report> parts;
  uint32_t finished = 0;
  span_ms total;
  std::optional<file_error> error;  ///< a job-level error (a job without partitions)
  std::vector<caf::typed_response_promise<job_report>> awaiting;
  std::vector<uint32_t> finish_order;  ///< partition indices in the order they finished
  /// Per partition, the backends whose proofs of it failed the pairing check.
  std::map<uint32_t, std::vector<std::string>> check_failed_on;
  /// Partitions whose proofs a finalizer or the cluster's checker was let
  /// write (claim_atom) and that have not reported yet.
  std::set<uint32_t> writing;
  /// Cancelled while partitions were being written: the job completes, as
  /// cancelled, when the last of them reports.
  bool cancelling = false;
  std::vector<caf::typed_response_promise<job_status>> cancel_answers;

  bool complete() const {
    return state == job_state::done || state == job_state::failed ||
           state == job_state::cancelled;
  }
  /// Partition `index` ends in `s` (done, failed or cancelled): counted
  /// finished, in finishing order.
  void finish(uint32_t index, partition_state s) {
    parts[index].state = s;
    ++finished;
    finish_order.push_back(index);
  }
};

/// A new record: `spec` with one queued partition per witness.
job_entry make_entry(uint64_t seq, const job_spec& spec, double start_ms);

/// The record of a job that completed before a restart, from its report
/// (make_report gives the report back, under sequence number `seq`).
job_entry restored_entry(uint64_t seq, const job_report& report);

/// Marks the partitions in `done` finished (a job recovered from the
/// journal, which verified their proofs before keeping them).
void mark_recovered(job_entry& job, const std::vector<uint32_t>& done);

/// A partition's report once its proof is written.
void record_done(partition_report& p, const partition_done& d);

/// A partition's report once it failed for good, its error naming the
/// backend and the retries it had.
void record_failure(partition_report& p, const partition_failure& f);

/// The ids and out directories of live jobs, each unique on a server. Out
/// directories are compared by what they name (base::path_identity: device
/// and inode of the part that exists), so a symlink or other alias of a live
/// job's out directory is found as well.
class live_names {
 public:
  void add(const job_entry& job);
  /// Job `job` is complete: its id and out directory are free again.
  void retire(const job_entry& job);
  /// Why `spec` cannot be accepted beside the live jobs (found in `jobs`);
  /// empty if it can.
  std::string conflict(const job_spec& spec, const std::map<uint64_t, job_entry>& jobs) const;
  /// Why `specs` cannot be accepted together (a conflict, or an id given
  /// twice); empty if they can.
  std::string conflict(const std::vector<job_spec>& specs,
                       const std::map<uint64_t, job_entry>& jobs) const;
  /// Whether `out` names the out directory of a live job.
  bool out_live(const std::string& out) const;

 private:
  /// path_identity of each live out directory -> that directory as given.
  std::map<std::string, std::string> out_identities() const;
  std::string conflict(const job_spec& spec, const std::map<uint64_t, job_entry>& jobs,
                       const std::map<std::string, std::string>& identities) const;

  std::map<std::string, uint64_t> ids_;   ///< id -> seq of every job not yet complete
  std::map<std::string, uint64_t> outs_;  ///< out directory -> seq, likewise
};

/// The bytes a job's record holds on the heap, estimated from its strings,
/// partition reports and spans (allocators' rounding left out): what keeping
/// it after completion costs.
std::size_t retained_bytes(const job_entry& job);

/// The completed jobs a registry still answers for, oldest first. Past
/// `limit` jobs, or past `byte_limit` bytes of their records (retained_bytes;
/// 0: no limit of that kind), the oldest are forgotten, so a daemon's memory
/// grows neither with every job it ever ran nor with a few huge ones; their
/// result.json files stay. The newest completed job is always kept whole,
/// even when it alone is over `byte_limit` (its client may still be reading
/// its report), so what is kept stays below byte_limit plus one job, and one
/// job is bounded by the partitions a job file may name.
class finished_jobs {
 public:
  explicit finished_jobs(std::size_t limit = 0, std::size_t byte_limit = 0)
      : limit_(limit), byte_limit_(byte_limit) {}
  /// Job `seq` completed: erases from `jobs` the oldest completed jobs past
  /// either limit (never `seq` itself).
  void add(uint64_t seq, std::map<uint64_t, job_entry>& jobs);
  std::size_t size() const { return order_.size(); }
  /// The bytes the kept jobs' records held when they completed.
  std::size_t bytes() const { return bytes_; }

 private:
  std::size_t limit_;
  std::size_t byte_limit_;
  std::size_t bytes_ = 0;
  std::deque<std::pair<uint64_t, std::size_t>> order_;  ///< seq, retained_bytes
};

/// Partition `index` of `ctx`'s job as a request for memory, sized by its
/// key for a backend of `footprint`, to be proved where `where` says.
work_order make_order(const job_ptr& ctx, uint32_t index, placement where,
                      const memory::backend_footprint& footprint);

/// Whether a partition in state `s` will not move again.
bool terminal(partition_state s);

/// What is wrong with a spec (and its payload, when in memory) the registry
/// cannot run at all; empty if fine.
std::string spec_problem(const job_spec& spec, const job_payload* payload = nullptr);

job_report make_report(const job_entry& job);
job_status make_status(const job_entry& job);
/// What a watcher that has seen `seen` finished partitions learns now.
job_progress make_progress(const job_entry& job, uint32_t seen);

}  // namespace proofline
