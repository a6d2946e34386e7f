#include "actors/journal_store.hpp"

#include <sqlite3.h>

#include <filesystem>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace proofline {

namespace {

constexpr const char* journal_format = "proofline-journal 1";
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

}  // namespace

journal_store::journal_store(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error(dir + ": cannot create the state directory: " + ec.message());
  path_ = (fs::path(dir) / file_name).string();
  // A constructor that throws runs no destructor: close the handle here, or
  // every refused journal leaks its connection (SQLite allocates one even
  // when opening fails).
  try {
    open_and_check();
  } catch (...) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw;
  }
}

void journal_store::open_and_check() {
  if (sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK)
    fail("cannot open the journal");
  sqlite3_busy_timeout(db_, 5000);
  // The first statement that reads the file finds out whether it is SQLite.
  exec("PRAGMA journal_mode=WAL");
  exec("PRAGMA synchronous=FULL");
  {
    statement check(db_, "PRAGMA quick_check");
    if (!check || sqlite3_step(check.get()) != SQLITE_ROW) fail("cannot check the journal");
    auto verdict = column_text(check.get(), 0);
    if (verdict != "ok") fail("the journal is damaged (" + verdict + ")");
  }
  exec("BEGIN IMMEDIATE");
  exec("CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)");
  exec("CREATE TABLE IF NOT EXISTS jobs(jid INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL, "
       "zkey TEXT NOT NULL, out TEXT NOT NULL, single INTEGER NOT NULL, prio INTEGER NOT NULL, "
       "witnesses TEXT NOT NULL)");
  exec("CREATE TABLE IF NOT EXISTS parts(jid INTEGER NOT NULL, idx INTEGER NOT NULL, "
       "PRIMARY KEY(jid, idx))");
  {
    statement get(db_, "SELECT value FROM meta WHERE key = 'format'");
    if (!get) fail("cannot read the journal's format");
    int rc = sqlite3_step(get.get());
    if (rc == SQLITE_ROW) {
      auto format = column_text(get.get(), 0);
      if (format != journal_format)
        fail("a journal of format \"" + format + "\", this proofline reads \"" + journal_format +
             "\"");
    } else if (rc == SQLITE_DONE) {
      statement put(db_, "INSERT INTO meta(key, value) VALUES('format', ?1)");
      if (!put) fail("cannot write the journal's format");
      bind_text(put.get(), 1, journal_format);
      if (sqlite3_step(put.get()) != SQLITE_DONE) fail("cannot write the journal's format");
    } else {
      fail("cannot read the journal's format");
    }
  }
  exec("COMMIT");
}

journal_store::~journal_store() { sqlite3_close(db_); }

void journal_store::exec(const char* sql) const {
  char* msg = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &msg) == SQLITE_OK) return;
  std::string text = msg ? msg : sqlite3_errmsg(db_);
  sqlite3_free(msg);
  sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  throw std::runtime_error(path_ + ": " + text +
                           " (not a proofline journal, or damaged: move it away to start with "
                           "an empty journal)");
}

void journal_store::fail(const std::string& what) const {
  std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
  if (db_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  throw std::runtime_error(path_ + ": " + what + ": " + why);
}

std::vector<int64_t> journal_store::add_jobs(const std::vector<job_spec>& specs) {
  std::vector<int64_t> jids;
  exec("BEGIN IMMEDIATE");
  {
    statement put(db_,
                  "INSERT INTO jobs(id, zkey, out, single, prio, witnesses) "
                  "VALUES(?1, ?2, ?3, ?4, ?5, ?6)");
    if (!put) fail("cannot record jobs");
    for (const auto& s : specs) {
      sqlite3_reset(put.get());
      bind_text(put.get(), 1, s.id);
      bind_text(put.get(), 2, s.zkey);
      bind_text(put.get(), 3, s.out);
      sqlite3_bind_int(put.get(), 4, s.single ? 1 : 0);
      sqlite3_bind_int(put.get(), 5, static_cast<int>(s.prio));
      bind_text(put.get(), 6, nlohmann::json(s.witnesses).dump());
      if (sqlite3_step(put.get()) != SQLITE_DONE) fail("cannot record job \"" + s.id + "\"");
      jids.push_back(sqlite3_last_insert_rowid(db_));
    }
  }
  exec("COMMIT");
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
  for (const char* sql : {"DELETE FROM parts WHERE jid = ?1", "DELETE FROM jobs WHERE jid = ?1"}) {
    statement del(db_, sql);
    if (!del) fail("cannot forget a finished job");
    sqlite3_bind_int64(del.get(), 1, jid);
    if (sqlite3_step(del.get()) != SQLITE_DONE) fail("cannot forget a finished job");
  }
  exec("COMMIT");
}

std::vector<journaled_job> journal_store::pending() const {
  std::vector<journaled_job> out;
  statement jobs(db_, "SELECT jid, id, zkey, out, single, prio, witnesses FROM jobs ORDER BY jid");
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
      if (!x.is_string()) fail("job \"" + j.spec.id + "\": a witness path is not a string");
      j.spec.witnesses.push_back(x.get<std::string>());
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
