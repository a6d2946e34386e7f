// journal_store: the SQLite file behind `serve --state DIR` (DIR/journal.sqlite).
// Plain C++, no actors: the journal actor (actors/journal.hpp) owns one and
// is the only writer; `serve` opens it at start so a bad file stops the
// daemon with a clear error before anything listens.
//
// Schema (format "proofline-journal 1", in table meta):
//   jobs(jid INTEGER PRIMARY KEY, id, zkey, out, single, prio, witnesses)
//       one row per accepted job not yet finished; witnesses a JSON array
//   parts(jid, idx)  one row per partition whose proof is written
// A finished job (done, failed, cancelled) is deleted with its parts.
//
// Every write is one transaction; the file runs in WAL mode with
// synchronous=FULL, so a commit survives a crash of the process and of the
// machine. Commits cost an fsync (milliseconds on a disk), which is why
// they run on the journal actor's own thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "messages/catalogue.hpp"

struct sqlite3;

namespace proofline {

/// One job the journal holds: accepted, not finished when it was last written.
struct journaled_job {
  int64_t jid = 0;             ///< the journal's key for the job
  job_spec spec;               ///< as accepted (paths absolute, spooled witnesses included)
  std::vector<uint32_t> done;  ///< partitions whose proof was written, ascending
};

class journal_store {
 public:
  /// Opens (creating if absent) DIR/journal.sqlite, DIR created if needed.
  /// Throws std::runtime_error naming the file and the problem: unreadable,
  /// not an SQLite file or damaged, or a journal of another format.
  explicit journal_store(const std::string& dir);
  ~journal_store();
  journal_store(const journal_store&) = delete;
  journal_store& operator=(const journal_store&) = delete;

  const std::string& path() const { return path_; }

  /// Adds jobs in one transaction; returns their jids, in order. Throws
  /// std::runtime_error naming the file.
  std::vector<int64_t> add_jobs(const std::vector<job_spec>& specs);
  /// Partition `index` of job `jid` has its proof written.
  void mark_done(int64_t jid, uint32_t index);
  /// Forgets job `jid` and its partitions.
  void remove_job(int64_t jid);
  /// Every job the file holds, oldest first.
  std::vector<journaled_job> pending() const;

 private:
  void exec(const char* sql) const;
  [[noreturn]] void fail(const std::string& what) const;
  void open_and_check();  ///< opens path_, checks it and creates the tables

  std::string path_;
  sqlite3* db_ = nullptr;
};

}  // namespace proofline
