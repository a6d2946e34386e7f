#include "actors/detail/journal_store.hpp"

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

namespace proofline {

namespace {

constexpr const char* journal_format = "proofline-journal 3";
/// Format 1 has only paths as witnesses, format 2 no "options" column of
/// jobs; format 3 reads both, adding the column (options left out).
constexpr const char* journal_format_1 = "proofline-journal 1";
constexpr const char* journal_format_2 = "proofline-journal 2";

/// A job's fields besides id, key, out, priority and witnesses, as the
/// jobs table's "options" column holds them: a JSON object of the fields
/// that differ from their defaults.
std::string options_of(const job_spec& s) {
  nlohmann::json o = nlohmann::json::object();
  if (!s.witness_generator.empty()) o["witness_generator"] = s.witness_generator;
  if (s.keep_witness) o["keep_witness"] = true;
  if (!s.r1cs.empty()) o["r1cs"] = s.r1cs;
  return o.dump();
}
constexpr const char* file_name = "journal.sqlite";

/// A prepared statement, finalized when it goes out of scope.
class statement {
 public:
  statement(sqlite3* db, const char* sql) {
    if (sqlite3_prepare_v2(db, sql, -1, &st_, nullptr) != SQLITE_OK) st_ = nullptr;
  }
  ~statement() { sqlite3_finalize(st_); }
  statement(const statement&) = delete;
  statement& operator=(const statement&) = delete;
  explicit operator bool() const { return st_ != nullptr; }
  sqlite3_stmt* get() const { return st_; }

 private:
  sqlite3_stmt* st_ = nullptr;
};

std::string column_text(sqlite3_stmt* st, int col) {
  auto p = reinterpret_cast<const char*>(sqlite3_column_text(st, col));
  return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(st, col))) : std::string();
}

void bind_text(sqlite3_stmt* st, int col, const std::string& s) {
  sqlite3_bind_text(st, col, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
}

/// A witness as the journal keeps it: {"in_state": path relative to `dir`}
/// when it lies under the state directory `dir`, else the path.
nlohmann::json stored(const std::string& path, const std::string& dir) {
  if (path.size() > dir.size() + 1 && path.compare(0, dir.size(), dir) == 0 &&
      path[dir.size()] == '/')
    return nlohmann::json{{"in_state", path.substr(dir.size() + 1)}};
  return path;
}

/// A kept witness as a path; nullopt for anything else.
std::optional<std::string> resolved(const nlohmann::json& w, const std::string& dir) {
  if (w.is_string()) return w.get<std::string>();
  if (w.is_object() && w.size() == 1 && w.contains("in_state") && w["in_state"].is_string())
    return dir + "/" + w["in_state"].get<std::string>();
  return std::nullopt;
}

/// What to do about a damaged journal, for the messages that refuse it.
std::string recovery_advice(const std::string& dir) {
  return "restore a copy of the state directory made as docs/RELIABILITY.md (Backing up the "
         "state) says, or move journal.sqlite, journal.sqlite-wal and journal.sqlite-shm away "
         "from " +
         dir + " to start with an empty journal and submit its jobs again";
}

uint32_t be32(const unsigned char* p) {
  return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
}

/// The write-ahead log's checksum (fileformat.html, 4.3): over 32-bit words
/// in the byte order the log's magic number names, pairs at a time.
void wal_checksum(bool big_endian, const unsigned char* data, size_t n, uint32_t& s1,
                  uint32_t& s2) {
  for (size_t i = 0; i + 8 <= n; i += 8) {
    const unsigned char* a = data + i;
    const unsigned char* b = data + i + 4;
    uint32_t x0 = big_endian ? be32(a) : (uint32_t(a[3]) << 24 | uint32_t(a[2]) << 16 |
                                          uint32_t(a[1]) << 8 | uint32_t(a[0]));
    uint32_t x1 = big_endian ? be32(b) : (uint32_t(b[3]) << 24 | uint32_t(b[2]) << 16 |
                                          uint32_t(b[1]) << 8 | uint32_t(b[0]));
    s1 += x0 + s2;
    s2 += x1 + s1;
  }
}

bool file_size(const std::string& path, uintmax_t& size) {
  std::error_code ec;
  size = std::filesystem::file_size(path, ec);
  return !ec;
}

/// Makes `path`'s directory entry durable (a rename into it).
void sync_dir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

std::string wal_problem(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t size = bytes.size();
  if (size == 0) return {};  // emptied by a checkpoint: nothing to read
  constexpr size_t header = 32, frame_header = 24;
  if (size < header)
    return std::to_string(size) + " bytes, shorter than the log's 32-byte header: truncated";
  const uint32_t magic = be32(data);
  if ((magic & ~1u) != 0x377f0682u || be32(data + 4) != 3007000u)
    return "its header is damaged (not the header of an SQLite write-ahead log)";
  const bool big_endian = (magic & 1u) != 0;
  const uint32_t page = be32(data + 8);
  if (page < 512 || page > 65536 || (page & (page - 1)) != 0)
    return "its header is damaged (page size " + std::to_string(page) + ")";
  uint32_t s1 = 0, s2 = 0;
  wal_checksum(big_endian, data, 24, s1, s2);
  if (s1 != be32(data + 24) || s2 != be32(data + 28))
    return "its header is damaged (its checksum does not match)";
  const uint32_t salt1 = be32(data + 16), salt2 = be32(data + 20);
  const size_t frame = frame_header + page;
  auto of_this_log = [&](size_t off) {
    return be32(data + off + 8) == salt1 && be32(data + off + 12) == salt2;
  };
  auto checks = [&](size_t off, uint32_t a, uint32_t b) {
    wal_checksum(big_endian, data + off, 8, a, b);
    wal_checksum(big_endian, data + off + frame_header, page, a, b);
    return a == be32(data + off + 16) && b == be32(data + off + 20);
  };
  size_t off = header;
  for (size_t n = 1; off + frame <= size; off += frame, ++n) {
    // A frame of an earlier log (before the log restarted): where SQLite
    // stops, as it should.
    if (!of_this_log(off)) return {};
    if (!checks(off, s1, s2)) {
      // The last write a crash cut short fails its checksum too; a frame of
      // this log that checks against this one's stored checksum means that
      // more was written after it.
      const size_t next = off + frame;
      if (next + frame <= size && of_this_log(next) &&
          checks(next, be32(data + off + 16), be32(data + off + 20)))
        return "frame " + std::to_string(n) + " is damaged, and frames written after it " +
               "would be dropped";
      return {};
    }
    s1 = be32(data + off + 16);
    s2 = be32(data + off + 20);
  }
  // SQLite writes a frame's header and then its page: a crash may leave a
  // header alone at the end, and nothing else short.
  const size_t rest = size - off;
  if (rest == 0 || (rest == frame_header && of_this_log(off))) return {};
  return "it ends " + std::to_string(rest) + " bytes into a frame of " + std::to_string(frame) +
         ": truncated";
}

journal_store::journal_store(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error(dir + ": cannot create the state directory: " + ec.message());
  dir_ = fs::canonical(dir, ec).string();
  if (ec) throw std::runtime_error(dir + ": cannot resolve the state directory: " + ec.message());
  path_ = (fs::path(dir) / file_name).string();
  // A constructor that throws runs no destructor: close the handle here, or
  // every refused journal leaks its connection (SQLite allocates one even
  // when opening fails).
  try {
    open_and_check();
  } catch (...) {
    sqlite3_close(db_);
    db_ = nullptr;
    // Reading the file made SQLite create an empty log where there was
    // none; left there, it would let the next start past the check that
    // refused this one.
    std::error_code rm;
    if (!wal_found_ && fs::file_size(path_ + "-wal", rm) == 0 && !rm)
      fs::remove(path_ + "-wal", rm);
    throw;
  }
}

void journal_store::create() {
  // Written whole under another name, then renamed: a journal.sqlite of 0
  // bytes is then never one of ours.
  const std::string fresh = path_ + ".new";
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    std::error_code ec;
    std::filesystem::remove(fresh + suffix, ec);
  }
  sqlite3* db = nullptr;
  auto done = [&](const char* what) {
    std::string why = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    throw std::runtime_error(fresh + ": cannot create the journal (" + what + "): " + why);
  };
  if (sqlite3_open_v2(fresh.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK)
    done("open");
  const std::string schema = std::string(
                                 "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; BEGIN; "
                                 "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL); "
                                 "INSERT INTO meta(key, value) VALUES('format', '") +
                             journal_format +
                             "'); INSERT INTO meta(key, value) VALUES('session', 'closed'); "
                             "COMMIT; PRAGMA wal_checkpoint(TRUNCATE);";
  if (sqlite3_exec(db, schema.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) done("schema");
  if (sqlite3_close(db) != SQLITE_OK) done("close");
  db = nullptr;
  if (std::rename(fresh.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    std::error_code ec;
    std::filesystem::remove(fresh, ec);
    throw std::runtime_error(path_ + ": cannot create the journal: " + std::strerror(err));
  }
  sync_dir(dir_);
}

void journal_store::open_and_check() {
  namespace fs = std::filesystem;
  const std::string wal = path_ + "-wal";
  uintmax_t main_size = 0, wal_size = 0;
  const bool main_there = file_size(path_, main_size);
  const bool wal_there = file_size(wal, wal_size);
  wal_found_ = wal_there;
  if (!main_there && wal_there && wal_size > 0)
    throw std::runtime_error(path_ + ": missing, but its write-ahead log " + wal +
                             " is there: the journal's main file was deleted or moved away "
                             "alone; put it back, or " + recovery_advice(dir_));
  // This version creates journal.sqlite whole and checkpoints into it at
  // every open, so it is never empty; an older one could leave it empty
  // with everything in the log (killed before its first checkpoint), which
  // the session mark below tells apart.
  const bool main_empty = main_there && main_size == 0;
  const std::string emptied =
      path_ + ": the journal is empty (0 bytes), which proofline never leaves it: it was "
              "truncated or replaced, and the jobs it held are lost; " +
      recovery_advice(dir_);
  if (main_empty && (!wal_there || wal_size == 0)) throw std::runtime_error(emptied);
  if (wal_there) {
    if (auto problem = wal_problem(wal); !problem.empty())
      throw std::runtime_error(wal + ": the journal's write-ahead log is damaged: " + problem +
                               "; SQLite would drop the writes after that point without a "
                               "word; " +
                               recovery_advice(dir_));
  }
  if (!main_there) create();
  if (sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK)
    fail("cannot open the journal");
  sqlite3_busy_timeout(db_, 5000);
  // A journal refused below is closed as found: no checkpoint on close folds
  // its log into journal.sqlite and removes it. close() turns this back on.
  sqlite3_db_config(db_, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
  // The first statement that reads the file finds out whether it is SQLite.
  exec("PRAGMA journal_mode=WAL");
  exec("PRAGMA synchronous=FULL");
  {
    statement check(db_, "PRAGMA integrity_check");
    if (!check || sqlite3_step(check.get()) != SQLITE_ROW) fail("cannot check the journal");
    auto verdict = column_text(check.get(), 0);
    if (verdict != "ok")
      throw std::runtime_error(path_ + ": the journal is damaged (SQLite's integrity check: " +
                               verdict + "); " + recovery_advice(dir_));
  }
  if (main_empty) {
    // SQLite reads the pages missing from an empty main file as zeros: an
    // empty database it would take for a new one. Only a journal of an
    // older version, all of it still in the log, has its tables without a
    // session mark.
    statement get(db_, "SELECT value FROM meta WHERE key = 'session'");
    if (!get || sqlite3_step(get.get()) != SQLITE_DONE) throw std::runtime_error(emptied);
  }
  exec("BEGIN IMMEDIATE");
  exec("CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)");
  exec("CREATE TABLE IF NOT EXISTS jobs(jid INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL, "
       "zkey TEXT NOT NULL, out TEXT NOT NULL, single INTEGER NOT NULL, prio INTEGER NOT NULL, "
       "witnesses TEXT NOT NULL, options TEXT NOT NULL DEFAULT '{}')");
  exec("CREATE TABLE IF NOT EXISTS parts(jid INTEGER NOT NULL, idx INTEGER NOT NULL, "
       "PRIMARY KEY(jid, idx))");
  exec("CREATE TABLE IF NOT EXISTS finished(fid INTEGER PRIMARY KEY AUTOINCREMENT, "
       "id TEXT NOT NULL, record BLOB NOT NULL)");
  {
    statement get(db_, "SELECT value FROM meta WHERE key = 'format'");
    if (!get) fail("cannot read the journal's format");
    int rc = sqlite3_step(get.get());
    if (rc == SQLITE_ROW) {
      auto format = column_text(get.get(), 0);
      if (format == journal_format_1 || format == journal_format_2) {
        // The jobs table of an older format has no options column.
        if (!statement(db_, "SELECT options FROM jobs LIMIT 0"))
          exec("ALTER TABLE jobs ADD COLUMN options TEXT NOT NULL DEFAULT '{}'");
        exec((std::string("UPDATE meta SET value = '") + journal_format + "' WHERE key = 'format'").c_str());
      } else if (format != journal_format) {
        fail("a journal of format \"" + format + "\", this proofline reads \"" + journal_format +
             "\", \"" + journal_format_2 + "\" and \"" + journal_format_1 + "\"");
      }
    } else if (rc == SQLITE_DONE) {
      statement put(db_, "INSERT INTO meta(key, value) VALUES('format', ?1)");
      if (!put) fail("cannot write the journal's format");
      bind_text(put.get(), 1, journal_format);
      if (sqlite3_step(put.get()) != SQLITE_DONE) fail("cannot write the journal's format");
    } else {
      fail("cannot read the journal's format");
    }
  }
  {
    statement get(db_, "SELECT value FROM meta WHERE key = 'session'");
    if (!get) fail("cannot read the journal's session");
    if (sqlite3_step(get.get()) == SQLITE_ROW && column_text(get.get(), 0) == "open" &&
        !wal_there) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      throw std::runtime_error(
          path_ + ": the journal was in use by a serve that did not stop cleanly, and its "
                  "write-ahead log " +
          wal +
          " is missing (a copy of journal.sqlite alone, the log deleted, or the journal opened "
          "by another SQLite program, which folds the log in and removes it): the writes since "
          "its last checkpoint may be lost. Put the log back beside it; or, to go on from "
          "journal.sqlite as it is (it holds every job accepted until the log went missing, "
          "each being checkpointed into it when accepted; partitions and completions recorded "
          "in the log only are proved again), run "
          "sqlite3 " +
          path_ + " \"UPDATE meta SET value = 'closed' WHERE key = 'session'\"; or " +
          recovery_advice(dir_));
    }
  }
  exec("COMMIT");
  // From here on this process has the journal; what an earlier one left in
  // the log moves into journal.sqlite.
  set_session("open");
  if (!checkpoint("TRUNCATE")) fail("cannot checkpoint the journal");
  opened_ = true;
}

void journal_store::set_session(const char* value) {
  statement put(db_, "INSERT OR REPLACE INTO meta(key, value) VALUES('session', ?1)");
  if (!put) fail("cannot mark the journal's session");
  bind_text(put.get(), 1, value);
  if (sqlite3_step(put.get()) != SQLITE_DONE) fail("cannot mark the journal's session");
}

bool journal_store::checkpoint(const char* mode) {
  int log = 0, copied = 0;
  const int how = std::string(mode) == "TRUNCATE" ? SQLITE_CHECKPOINT_TRUNCATE
                                                  : SQLITE_CHECKPOINT_PASSIVE;
  if (sqlite3_wal_checkpoint_v2(db_, nullptr, how, &log, &copied) != SQLITE_OK) return false;
  return log == copied || how == SQLITE_CHECKPOINT_TRUNCATE;
}

void journal_store::close() {
  if (!db_) return;
  try {
    if (!checkpoint("TRUNCATE")) fail("cannot checkpoint the journal");
    set_session("closed");
    if (!checkpoint("TRUNCATE")) fail("cannot checkpoint the journal");
    // Everything is in journal.sqlite now: SQLite may remove the empty log.
    sqlite3_db_config(db_, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 0, nullptr);
  } catch (const std::exception& e) {
    spdlog::error("journal: {}; the next start reads journal.sqlite-wal as after a crash",
                  e.what());
  }
  sqlite3_close(db_);
  db_ = nullptr;
}

journal_store::~journal_store() { close(); }


void journal_store::exec(const char* sql) const {
  char* msg = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &msg) == SQLITE_OK) return;
  std::string text = msg ? msg : sqlite3_errmsg(db_);
  sqlite3_free(msg);
  sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  throw std::runtime_error(path_ + ": " + text + " (not a proofline journal, or damaged; " +
                           recovery_advice(dir_) + ")");
}

void journal_store::fail(const std::string& what) const {
  std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
  if (db_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  // While opening, a failure refuses the journal: say how to go on.
  throw std::runtime_error(path_ + ": " + what + ": " + why +
                           (opened_ ? std::string() : "; " + recovery_advice(dir_)));
}

std::vector<int64_t> journal_store::add_jobs(const std::vector<job_spec>& specs) {
  std::vector<int64_t> jids;
  exec("BEGIN IMMEDIATE");
  {
    statement put(db_,
                  "INSERT INTO jobs(id, zkey, out, single, prio, witnesses, options) "
                  "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    if (!put) fail("cannot record jobs");
    for (const auto& s : specs) {
      sqlite3_reset(put.get());
      bind_text(put.get(), 1, s.id);
      bind_text(put.get(), 2, s.zkey);
      bind_text(put.get(), 3, s.out);
      sqlite3_bind_int(put.get(), 4, s.single ? 1 : 0);
      sqlite3_bind_int(put.get(), 5, static_cast<int>(s.prio));
      auto witnesses = nlohmann::json::array();
      for (const auto& w : s.witnesses) witnesses.push_back(stored(w, dir_));
      bind_text(put.get(), 6, witnesses.dump());
      bind_text(put.get(), 7, options_of(s));
      if (sqlite3_step(put.get()) != SQLITE_DONE) fail("cannot record job \"" + s.id + "\"");
      jids.push_back(sqlite3_last_insert_rowid(db_));
    }
  }
  exec("COMMIT");
  // Accepted jobs reach journal.sqlite itself before the submission is
  // acknowledged: no damage to the log can lose them.
  if (!checkpoint("PASSIVE"))
    spdlog::warn("journal: {}: cannot checkpoint the jobs just recorded ({}); they are safe in "
                 "the write-ahead log",
                 path_, sqlite3_errmsg(db_));
  return jids;
}

void journal_store::mark_done(int64_t jid, uint32_t index) {
  statement put(db_, "INSERT OR IGNORE INTO parts(jid, idx) VALUES(?1, ?2)");
  if (!put) fail("cannot record a finished partition");
  sqlite3_bind_int64(put.get(), 1, jid);
  sqlite3_bind_int64(put.get(), 2, index);
  if (sqlite3_step(put.get()) != SQLITE_DONE) fail("cannot record a finished partition");
}

void journal_store::remove_job(int64_t jid) {
  exec("BEGIN IMMEDIATE");
  forget(jid);
  exec("COMMIT");
}

void journal_store::forget(int64_t jid) {
  for (const char* sql : {"DELETE FROM parts WHERE jid = ?1", "DELETE FROM jobs WHERE jid = ?1"}) {
    statement del(db_, sql);
    if (!del) fail("cannot forget a finished job");
    sqlite3_bind_int64(del.get(), 1, jid);
    if (sqlite3_step(del.get()) != SQLITE_DONE) fail("cannot forget a finished job");
  }
}

void journal_store::finish_job(int64_t jid, const std::string& id, const std::string& record,
                               std::size_t keep, std::size_t keep_bytes) {
  exec("BEGIN IMMEDIATE");
  if (jid > 0) forget(jid);
  {
    statement put(db_, "INSERT INTO finished(id, record) VALUES(?1, ?2)");
    if (!put) fail("cannot record finished job \"" + id + "\"");
    bind_text(put.get(), 1, id);
    sqlite3_bind_blob(put.get(), 2, record.data(), static_cast<int>(record.size()),
                      SQLITE_TRANSIENT);
    if (sqlite3_step(put.get()) != SQLITE_DONE) fail("cannot record finished job \"" + id + "\"");
  }
  // The newest records within both limits stay (the newest always); the
  // rest are deleted, oldest first, as the registry forgets them.
  int64_t oldest_kept = 0;
  {
    statement sizes(db_, "SELECT fid, length(record) FROM finished ORDER BY fid DESC");
    if (!sizes) fail("cannot read the finished jobs");
    std::size_t n = 0, bytes = 0;
    while (sqlite3_step(sizes.get()) == SQLITE_ROW) {
      bytes += static_cast<std::size_t>(sqlite3_column_int64(sizes.get(), 1));
      ++n;
      if (n > 1 && ((keep > 0 && n > keep) || (keep_bytes > 0 && bytes > keep_bytes))) break;
      oldest_kept = sqlite3_column_int64(sizes.get(), 0);
    }
  }
  {
    statement del(db_, "DELETE FROM finished WHERE fid < ?1");
    if (!del) fail("cannot forget old finished jobs");
    sqlite3_bind_int64(del.get(), 1, oldest_kept);
    if (sqlite3_step(del.get()) != SQLITE_DONE) fail("cannot forget old finished jobs");
  }
  exec("COMMIT");
}

std::vector<std::string> journal_store::finished() const {
  std::vector<std::string> out;
  statement get(db_, "SELECT record FROM finished ORDER BY fid");
  if (!get) fail("cannot read the finished jobs");
  int rc;
  while ((rc = sqlite3_step(get.get())) == SQLITE_ROW) {
    auto p = static_cast<const char*>(sqlite3_column_blob(get.get(), 0));
    out.emplace_back(p ? p : "", static_cast<std::size_t>(sqlite3_column_bytes(get.get(), 0)));
  }
  if (rc != SQLITE_DONE) fail("cannot read the finished jobs");
  return out;
}

std::vector<journaled_job> journal_store::pending() const {
  std::vector<journaled_job> out;
  statement jobs(db_,
                 "SELECT jid, id, zkey, out, single, prio, witnesses, options FROM jobs ORDER BY jid");
  if (!jobs) fail("cannot read the jobs");
  int rc;
  while ((rc = sqlite3_step(jobs.get())) == SQLITE_ROW) {
    journaled_job j;
    j.jid = sqlite3_column_int64(jobs.get(), 0);
    j.spec.id = column_text(jobs.get(), 1);
    j.spec.zkey = column_text(jobs.get(), 2);
    j.spec.out = column_text(jobs.get(), 3);
    j.spec.single = sqlite3_column_int(jobs.get(), 4) != 0;
    int prio = sqlite3_column_int(jobs.get(), 5);
    if (prio < 0 || prio > static_cast<int>(priority::critical))
      fail("job \"" + j.spec.id + "\" has priority " + std::to_string(prio) + ", not 0 to 3");
    j.spec.prio = static_cast<priority>(prio);
    auto w = nlohmann::json::parse(column_text(jobs.get(), 6), nullptr, /*allow_exceptions=*/false);
    if (!w.is_array()) fail("job \"" + j.spec.id + "\": its witness list is not a JSON array");
    for (const auto& x : w) {
      auto path = resolved(x, dir_);
      if (!path) fail("job \"" + j.spec.id + "\": a witness is neither a path nor {\"in_state\": path}");
      j.spec.witnesses.push_back(std::move(*path));
    }
    auto o = nlohmann::json::parse(column_text(jobs.get(), 7), nullptr, /*allow_exceptions=*/false);
    auto text = [&](const char* key) -> std::string {
      auto it = o.find(key);
      if (it == o.end()) return {};
      if (!it->is_string()) fail("job \"" + j.spec.id + "\": its option \"" + key + "\" is not a string");
      return it->get<std::string>();
    };
    if (!o.is_object()) fail("job \"" + j.spec.id + "\": its options are not a JSON object");
    j.spec.witness_generator = text("witness_generator");
    j.spec.r1cs = text("r1cs");
    if (auto it = o.find("keep_witness"); it != o.end()) {
      if (!it->is_boolean()) fail("job \"" + j.spec.id + "\": its option \"keep_witness\" is not a boolean");
      j.spec.keep_witness = it->get<bool>();
    }
    out.push_back(std::move(j));
  }
  if (rc != SQLITE_DONE) fail("cannot read the jobs");
  statement parts(db_, "SELECT jid, idx FROM parts ORDER BY jid, idx");
  if (!parts) fail("cannot read the finished partitions");
  size_t at = 0;
  while ((rc = sqlite3_step(parts.get())) == SQLITE_ROW) {
    int64_t jid = sqlite3_column_int64(parts.get(), 0);
    int64_t idx = sqlite3_column_int64(parts.get(), 1);
    while (at < out.size() && out[at].jid < jid) ++at;
    if (at == out.size() || out[at].jid != jid) continue;  // a job forgotten meanwhile
    if (idx < 0 || static_cast<uint64_t>(idx) >= out[at].spec.witnesses.size()) continue;
    out[at].done.push_back(static_cast<uint32_t>(idx));
  }
  if (rc != SQLITE_DONE) fail("cannot read the finished partitions");
  return out;
}

}  // namespace proofline
