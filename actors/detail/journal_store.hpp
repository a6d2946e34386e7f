// journal_store: the SQLite file behind `serve --state DIR` (DIR/journal.sqlite).
// Plain C++, no actors: the journal actor (actors/journal.hpp) owns one and
// is the only writer; `serve` opens it at start so a bad file stops the
// daemon with a clear error before anything listens.
//
// Schema (format "proofline-journal 2", in table meta; a journal of format
// 1, whose witnesses are all paths, is read and marked 2):
//   jobs(jid INTEGER PRIMARY KEY, id, zkey, out, single, prio, witnesses)
//       one row per accepted job not yet finished; witnesses a JSON array
//       of paths, and of {"in_state": path} for those under DIR (spooled
//       inline witnesses), relative to it, so DIR may move between runs
//   parts(jid, idx)  one row per partition whose proof is written
//   finished(fid INTEGER PRIMARY KEY, id, record)
//       one row per journaled job that finished (done, failed, cancelled),
//       oldest first; record is the job's report (job_report) as the journal
//       actor serialized it, so a restarted serve answers status and await
//       for it as before; bounded like the registry's finished jobs
//       (--keep-finished, --keep-finished-bytes as bytes of records)
//   meta 'session'   'open' while a serve has the file, 'closed' after a
//                    clean close (absent in files of older versions: closed)
// A finished job (done, failed, cancelled) leaves jobs and parts for
// finished in one transaction.
//
// Every write is one transaction; the file runs in WAL mode with
// synchronous=FULL, so a commit survives a crash of the process and of the
// machine. Commits cost an fsync (milliseconds on a disk), which is why
// they run on the journal actor's own thread.
//
// Damage: after a crash the latest commits sit in DIR/journal.sqlite-wal,
// and SQLite silently ignores a write-ahead log whose header is damaged or
// reads it only up to a damaged or missing frame. So the store checks before
// SQLite reads anything, and refuses (naming the file and how to recover):
//   - a journal.sqlite of 0 bytes (the store creates the file whole, by a
//     rename, so it is never empty), or none beside a write-ahead log;
//   - a write-ahead log whose header does not check, that ends inside a
//     frame (truncated), or whose frames do not check with frames of the
//     same log after them (damaged in the middle);
//   - 'session' open with no write-ahead log: the log of a serve that did not
//     stop cleanly is missing (a backup that copied journal.sqlite alone);
//   - a file SQLite's integrity check rejects.
// Accepted jobs are checkpointed into journal.sqlite before add_jobs returns
// (so before a submission is acknowledged), so damage to the log that the
// checks cannot see (a log cut exactly at a frame boundary) loses at most
// partitions and completions, which are proved again; never an accepted job.
// Opening ends with a checkpoint that empties the log; a clean close
// checkpoints again, marks the session closed and SQLite removes the log, so
// journal.sqlite alone is then the whole journal.
#pragma once

#include <cstddef>
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
  /// not an SQLite file, damaged (see the header comment), its write-ahead
  /// log missing or damaged, or a journal of another format.
  explicit journal_store(const std::string& dir);
  /// Closes cleanly (close()).
  ~journal_store();
  journal_store(const journal_store&) = delete;
  journal_store& operator=(const journal_store&) = delete;

  const std::string& path() const { return path_; }
  /// The state directory, canonical (spooled witnesses are stored relative to it).
  const std::string& dir() const { return dir_; }

  /// Adds jobs in one transaction and checkpoints it into journal.sqlite;
  /// returns their jids, in order. Throws std::runtime_error naming the file.
  std::vector<int64_t> add_jobs(const std::vector<job_spec>& specs);
  /// Partition `index` of job `jid` has its proof written.
  void mark_done(int64_t jid, uint32_t index);
  /// Forgets job `jid` and its partitions.
  void remove_job(int64_t jid);
  /// Job `jid` (0: one not journaled while it ran) finished with report
  /// `record` (serialized by the caller): in one transaction it leaves jobs
  /// and parts and is added to finished; then only the newest `keep`
  /// records (0: all) whose sizes sum to at most `keep_bytes` (0: no limit)
  /// stay, the newest always.
  void finish_job(int64_t jid, const std::string& id, const std::string& record,
                  std::size_t keep, std::size_t keep_bytes);
  /// The records of finished jobs, oldest first.
  std::vector<std::string> finished() const;
  /// Every job the file holds, oldest first, witness paths absolute.
  std::vector<journaled_job> pending() const;
  /// Checkpoints every write into journal.sqlite, marks the session closed
  /// and closes the file (SQLite then removes the write-ahead log); a
  /// failure is logged. Once; the destructor calls it.
  void close();

 private:
  void exec(const char* sql) const;
  void forget(int64_t jid);  ///< deletes job `jid` and its parts, inside a transaction
  [[noreturn]] void fail(const std::string& what) const;
  void open_and_check();  ///< opens path_, checks it and creates the tables
  void create();          ///< a new journal, written beside path_ and renamed to it
  void set_session(const char* value);
  /// PRAGMA wal_checkpoint(mode); false when it could not copy every frame.
  bool checkpoint(const char* mode);

  std::string path_;
  std::string dir_;
  bool wal_found_ = false;  ///< journal.sqlite-wal was there before SQLite opened the file
  bool opened_ = false;     ///< past the checks of opening
  sqlite3* db_ = nullptr;
};

/// Why the SQLite write-ahead log at `path` would lose commits when SQLite
/// reads it (a damaged header, a frame cut short, a damaged frame with more
/// frames of the log after it); empty when it is sound, empty or absent.
/// Checks the format's own checksums (https://www.sqlite.org/fileformat.html,
/// section 4); reads the whole file.
std::string wal_problem(const std::string& path);

}  // namespace proofline
