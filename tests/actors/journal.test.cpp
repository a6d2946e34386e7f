// The state journal (serve --state): the SQLite store on its own (damage to
// the files of a journal caught as a crash left them refused, paths under a
// moved state directory), and the journal actor with the registry under the
// deterministic scheduler: a submission is answered only once recorded,
// finished jobs leave the journal for its bounded table of finished ones,
// which a restart answers for again, and recovery re-queues journaled jobs
// without proving again the partitions whose proofs check, and removes
// their spooled witnesses once they finish.
#include <doctest/doctest.h>

#include <caf/binary_serializer.hpp>

#include <filesystem>
#include <fstream>
#include <set>

#include <sqlite3.h>
#include <unistd.h>

#include "actors/journal.hpp"
#include "tests/actors/fixture.hpp"

using namespace proofline;
using namespace proofline::test;
namespace fs = std::filesystem;

namespace {

/// A fresh directory under the system's temporary directory, removed after.
struct temp_dir {
  fs::path path;
  temp_dir() {
    path = fs::temp_directory_path() /
           ("proofline-journal-test-" + std::to_string(::getpid()) + "-" +
            std::to_string(counter()++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  static int& counter() {
    static int n = 0;
    return n;
  }
};

std::set<std::string> ids_of(const std::vector<journaled_job>& jobs) {
  std::set<std::string> out;
  for (const auto& j : jobs) out.insert(j.spec.id);
  return out;
}

/// The files of a journal as a crash of its process would leave them: the
/// store `live` stays open while its directory is copied to `to`.
void copy_as_crashed(const fs::path& from, const fs::path& to) {
  fs::create_directories(to);
  for (const char* name : {"journal.sqlite", "journal.sqlite-wal", "journal.sqlite-shm"})
    if (fs::exists(from / name)) fs::copy_file(from / name, to / name);
}

/// The message of opening a journal in `dir`; empty when it opens.
std::string refusal(const fs::path& dir) {
  try {
    journal_store store(dir.string());
    return {};
  } catch (const std::runtime_error& e) {
    return e.what();
  }
}

void resize(const fs::path& file, uintmax_t size) { fs::resize_file(file, size); }

/// The pipeline with a journal, as serve --state starts: recover() spawns
/// the journal, starts the runtime with it and has it re-queue the jobs its
/// store holds; the journal stops with the fixture.
struct recovery_fixture : det_fixture {
  journal_actor j;

  ~recovery_fixture() {
    if (j) self->send_exit(j, caf::exit_reason::user_shutdown);
  }

  void recover(journal_config jc) {
    j = spawn_journal(sys, std::move(jc));
    runtime_config rc;
    rc.memory_budget = 4 * fake_partition_bytes;
    rc.journal = j;
    start(rc);
    self->send(j, replay_atom::value, rt->registry(), rt->keys());
    sched.run();
  }

  /// Every job the registry answers for.
  std::vector<job_status> statuses() {
    self->send(rt->registry(), status_atom::value);
    sched.run();
    return fetch<std::vector<job_status>>();
  }
};

}  // namespace

TEST_CASE("the journal store keeps jobs and finished partitions across reopening") {
  temp_dir dir;
  std::vector<int64_t> jids;
  {
    journal_store store(dir.path.string());
    auto a = make_job("a", {"/w/a0.wtns", "/w/a1.wtns", "/w/a2.wtns"}, priority::high, "/k.zkey");
    auto b = make_job("b", {"/w/b0.wtns"}, priority::low, "/k.zkey");
    jids = store.add_jobs({a, b});
    REQUIRE(jids.size() == 2);
    store.mark_done(jids[0], 2);
    store.mark_done(jids[0], 0);
    store.mark_done(jids[0], 0);  // twice is once
  }
  journal_store again(dir.path.string());
  auto jobs = again.pending();
  REQUIRE(jobs.size() == 2);
  CHECK(jobs[0].spec.id == "a");
  CHECK(jobs[0].spec.prio == priority::high);
  CHECK_FALSE(jobs[0].spec.single);
  CHECK(jobs[0].spec.witnesses == std::vector<std::string>{"/w/a0.wtns", "/w/a1.wtns", "/w/a2.wtns"});
  CHECK(jobs[0].done == std::vector<uint32_t>{0, 2});
  CHECK(jobs[1].spec.id == "b");
  CHECK(jobs[1].spec.single);
  CHECK(jobs[1].done.empty());
  again.remove_job(jids[0]);
  CHECK(ids_of(again.pending()) == std::set<std::string>{"b"});
}

TEST_CASE("a job's generator, r1cs and keep-witness flag are kept across reopening") {
  temp_dir dir;
  {
    journal_store store(dir.path.string());
    auto g = make_job("g", {"/in/i0.json", "/in/i1.json"}, priority::normal, "/k.zkey");
    g.witness_generator = "/c/circuit.so";
    g.keep_witness = true;
    g.r1cs = "/c/circuit.r1cs";
    store.add_jobs({g, make_job("plain", {"/w/p.wtns"})});
  }
  journal_store again(dir.path.string());
  auto jobs = again.pending();
  REQUIRE(jobs.size() == 2);
  CHECK(jobs[0].spec.witness_generator == "/c/circuit.so");
  CHECK(jobs[0].spec.keep_witness);
  CHECK(jobs[0].spec.r1cs == "/c/circuit.r1cs");
  CHECK(jobs[0].spec.witnesses == std::vector<std::string>{"/in/i0.json", "/in/i1.json"});
  CHECK(jobs[1].spec.witness_generator.empty());
  CHECK_FALSE(jobs[1].spec.keep_witness);
  CHECK(jobs[1].spec.r1cs.empty());
}

TEST_CASE("a journal of format 2, without job options, is read and upgraded in place") {
  temp_dir dir;
  const std::string file = (dir.path / "journal.sqlite").string();
  {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(file.c_str(), &db) == SQLITE_OK);
    const char* v2 =
        "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "INSERT INTO meta VALUES('format', 'proofline-journal 2'), ('session', 'closed');"
        "CREATE TABLE jobs(jid INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL, "
        "zkey TEXT NOT NULL, out TEXT NOT NULL, single INTEGER NOT NULL, prio INTEGER NOT NULL, "
        "witnesses TEXT NOT NULL);"
        "INSERT INTO jobs(id, zkey, out, single, prio, witnesses) "
        "VALUES('old', '/k.zkey', '/o', 1, 1, '[\"/w/old.wtns\"]');";
    REQUIRE(sqlite3_exec(db, v2, nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(db);
  }
  {
    journal_store store(dir.path.string());
    auto jobs = store.pending();
    REQUIRE(jobs.size() == 1);
    CHECK(jobs[0].spec.id == "old");
    CHECK(jobs[0].spec.witnesses == std::vector<std::string>{"/w/old.wtns"});
    CHECK(jobs[0].spec.witness_generator.empty());
    auto g = make_job("new", {"/in/i.json"});
    g.witness_generator = "/c/circuit.so";
    store.add_jobs({g});
  }
  journal_store again(dir.path.string());
  auto jobs = again.pending();
  REQUIRE(jobs.size() == 2);
  CHECK(jobs[1].spec.witness_generator == "/c/circuit.so");
}

TEST_CASE("the journal store keeps the newest finished jobs' records within its bounds") {
  temp_dir dir;
  {
    journal_store store(dir.path.string());
    auto jids = store.add_jobs({make_job("a", {"/w/a.wtns"}, priority::normal, "/k.zkey"),
                                make_job("b", {"/w/b.wtns"}, priority::normal, "/k.zkey"),
                                make_job("c", {"/w/c.wtns"}, priority::normal, "/k.zkey")});
    REQUIRE(jids.size() == 3);
    store.mark_done(jids[0], 0);
    store.finish_job(jids[0], "a", "AAAA", 2, 0);
    store.finish_job(jids[1], "b", "BBBB", 2, 0);
    CHECK(ids_of(store.pending()) == std::set<std::string>{"c"});
    CHECK(store.finished() == std::vector<std::string>{"AAAA", "BBBB"});
    store.finish_job(jids[2], "c", std::string("C\0C", 3), 2, 0);  // past 2: a is forgotten
    CHECK(store.pending().empty());
    CHECK(store.finished() == std::vector<std::string>{"BBBB", std::string("C\0C", 3)});
  }
  journal_store again(dir.path.string());  // kept across reopening
  CHECK(again.finished() == std::vector<std::string>{"BBBB", std::string("C\0C", 3)});
  // By bytes: the newest whose records total at most 10 bytes, the newest always.
  again.finish_job(0, "d", "DDDDDDD", 0, 10);
  CHECK(again.finished() == std::vector<std::string>{std::string("C\0C", 3), "DDDDDDD"});
  again.finish_job(0, "e", std::string(20, 'E'), 0, 10);
  CHECK(again.finished() == std::vector<std::string>{std::string(20, 'E')});
}

TEST_CASE("a journal file that is not SQLite is refused, naming the file") {
  temp_dir dir;
  {
    std::ofstream f(dir.path / "journal.sqlite", std::ios::binary);
    f << std::string(4096, '\x5a');
  }
  try {
    journal_store store(dir.path.string());
    FAIL("a garbage journal was opened");
  } catch (const std::runtime_error& e) {
    std::string what = e.what();
    CHECK(what.find((dir.path / "journal.sqlite").string()) != std::string::npos);
    CHECK(what.find("not a database") != std::string::npos);
  }
}

TEST_CASE("a crashed journal whose files were damaged is refused, naming the file and the way out") {
  temp_dir dir;
  const fs::path live = dir.path / "live";
  journal_store store(live.string());
  for (int i = 0; i < 5; ++i)
    store.add_jobs({make_job("j" + std::to_string(i), {"/w/" + std::to_string(i) + ".wtns"})});
  // Partitions recorded after the last job: frames of the log after its
  // last checkpoint (every record of jobs is checkpointed).
  for (int64_t jid = 1; jid <= 4; ++jid) store.mark_done(jid, 0);
  auto crashed = [&](const std::string& name) {
    auto to = dir.path / name;
    copy_as_crashed(live, to);
    REQUIRE(fs::file_size(to / "journal.sqlite-wal") > 32);
    return to;
  };
  const std::string way_out = "move journal.sqlite, journal.sqlite-wal and journal.sqlite-shm away";
  SUBCASE("as the crash left it, every job is there") {
    auto to = crashed("intact");
    journal_store again(to.string());
    CHECK(again.pending().size() == 5);
  }
  SUBCASE("the write-ahead log deleted") {
    auto to = crashed("no-wal");
    fs::remove(to / "journal.sqlite-wal");
    auto why = refusal(to);
    CHECK(why.find((to / "journal.sqlite-wal").string() + " is missing") != std::string::npos);
    CHECK(why.find(way_out) != std::string::npos);
    CHECK_FALSE(fs::exists(to / "journal.sqlite-wal"));  // as found: refused again next time
    CHECK(refusal(to) == why);
  }
  SUBCASE("the write-ahead log's header corrupted") {
    auto to = crashed("bad-header");
    {
      std::fstream f(to / "journal.sqlite-wal", std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(16);
      f.write("\x01\x02\x03\x04", 4);  // a salt: the header's checksum no longer matches
    }
    auto why = refusal(to);
    CHECK(why.find((to / "journal.sqlite-wal").string() + ": the journal's write-ahead log is "
                   "damaged: its header is damaged") == 0);
    CHECK(why.find(way_out) != std::string::npos);
  }
  SUBCASE("the write-ahead log truncated inside a frame") {
    auto to = crashed("truncated");
    resize(to / "journal.sqlite-wal", fs::file_size(to / "journal.sqlite-wal") * 15 / 100 + 1);
    auto why = refusal(to);
    CHECK(why.find((to / "journal.sqlite-wal").string()) == 0);
    CHECK(why.find("truncated") != std::string::npos);
  }
  SUBCASE("a frame of the write-ahead log damaged, with frames after it") {
    auto to = crashed("bad-frame");
    std::string bytes;
    {
      std::ifstream in(to / "journal.sqlite-wal", std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    REQUIRE(bytes.size() >= 32 + 2 * (24 + 4096));
    bytes[32 + 24 + 100] ^= 0x40;  // inside the first frame's page
    std::ofstream(to / "journal.sqlite-wal", std::ios::binary | std::ios::trunc) << bytes;
    CHECK(refusal(to).find("frame 1 is damaged") != std::string::npos);
  }
  SUBCASE("journal.sqlite truncated to 0 bytes") {
    auto to = crashed("emptied");
    resize(to / "journal.sqlite", 0);
    auto why = refusal(to);
    CHECK(why.find((to / "journal.sqlite").string() + ": ") == 0);
    CHECK(why.find(way_out) != std::string::npos);
  }
}

TEST_CASE("after a clean close journal.sqlite alone is the whole journal") {
  temp_dir dir;
  {
    journal_store store((dir.path / "a").string());
    store.add_jobs({make_job("a", {"/w/a.wtns"}), make_job("b", {"/w/b.wtns"})});
    store.mark_done(1, 0);
  }
  CHECK_FALSE(fs::exists(dir.path / "a" / "journal.sqlite-wal"));
  fs::create_directories(dir.path / "b");
  fs::copy_file(dir.path / "a" / "journal.sqlite", dir.path / "b" / "journal.sqlite");
  journal_store copy((dir.path / "b").string());
  auto jobs = copy.pending();
  CHECK(ids_of(jobs) == std::set<std::string>{"a", "b"});
  CHECK(jobs.at(0).done == std::vector<uint32_t>{0});
}

TEST_CASE("witnesses spooled under the state directory are found where the directory moved") {
  temp_dir dir;
  const fs::path first = dir.path / "state";
  fs::create_directories(first / "spool/7/submission-1");
  const std::string canonical = fs::canonical(first).string();
  {
    journal_store store(first.string());
    store.add_jobs({make_job("in", {canonical + "/spool/7/submission-1/1.wtns", "/data/w.wtns"})});
  }
  const fs::path moved = dir.path / "elsewhere";
  fs::rename(first, moved);
  journal_store store(moved.string());
  auto jobs = store.pending();
  REQUIRE(jobs.size() == 1);
  CHECK(jobs[0].spec.witnesses ==
        std::vector<std::string>{fs::canonical(moved).string() + "/spool/7/submission-1/1.wtns",
                                 "/data/w.wtns"});
}

TEST_CASE_FIXTURE(det_fixture, "a submission is answered once the journal has it, and leaves it when done") {
  temp_dir dir;
  auto store = std::make_shared<journal_store>(dir.path.string());
  journal_config jc;
  jc.store = store;
  auto j = spawn_journal(sys, jc);
  runtime_config rc;
  rc.memory_budget = 4 * fake_partition_bytes;
  rc.journal = j;
  start(rc);

  self->send(rt->registry(), submit_atom::value,
             std::vector<job_spec>{make_job("a", {"a0.wtns", "a1.wtns"}), make_job("b", {"b0.wtns"})});
  // One step at a time: the answer comes after the journal's record.
  bool answered_before_record = false;
  for (int i = 0; i < 10000 && store->pending().size() < 2; ++i) {
    sched.run_once();
    self->receive([&](const std::vector<uint64_t>&) { answered_before_record = true; },
                  caf::after(std::chrono::seconds(0)) >> [] {});
  }
  CHECK_FALSE(answered_before_record);
  CHECK(ids_of(store->pending()) == std::set<std::string>{"a", "b"});
  sched.run();
  auto seqs = fetch<std::vector<uint64_t>>();
  REQUIRE(seqs.size() == 2);
  for (auto seq : seqs) CHECK(report(seq).state == job_state::done);
  sched.run();
  CHECK(store->pending().empty());
  self->send_exit(j, caf::exit_reason::user_shutdown);
}

TEST_CASE_FIXTURE(recovery_fixture,
                  "recovery re-queues journaled jobs and proves only partitions without a good proof") {
  temp_dir dir;
  auto store = std::make_shared<journal_store>(dir.path.string());
  auto jids = store->add_jobs({make_job("a", {"a0.wtns", "a1.wtns", "a2.wtns", "a3.wtns"}),
                               make_job("b", {"b0.wtns"}), make_job("c", {"c0.wtns", "c1.wtns"})});
  store->mark_done(jids[0], 1);
  store->mark_done(jids[0], 3);  // its proof does not check: proved again
  store->mark_done(jids[2], 0);
  store->mark_done(jids[2], 1);  // every partition of c is done

  std::vector<std::string> checked;
  journal_config jc;
  jc.store = store;
  jc.check_proof = [&](const zk::groth16::key_ptr&, const std::string& proof, const std::string&) {
    checked.push_back(proof);
    return proof.find("proof_3") != std::string::npos ? std::string("bad proof") : std::string();
  };
  recover(jc);

  // c completes at once: nothing to prove, and it leaves the journal.
  INFO("events: " << [&] {
    std::string all;
    for (const auto& e : world->events) all += e + "; ";
    return all;
  }());
  CHECK(world->events_of("prove") == std::vector<std::string>{"a0.wtns", "a2.wtns", "a3.wtns", "b0.wtns"});
  CHECK(checked.size() == 4);  // a1, a3, c0, c1
  CHECK(ids_of(store->pending()).empty());
  auto all = statuses();
  REQUIRE(all.size() == 3);
  for (const auto& s : all) {
    CHECK(s.state == job_state::done);
    CHECK(s.done == s.total);
  }
}

TEST_CASE_FIXTURE(recovery_fixture, "jobs the journal holds as finished are answered for after a restart") {
  temp_dir dir;
  auto store = std::make_shared<journal_store>(dir.path.string());
  auto record = [&](job_report r) {
    std::vector<char> buf;
    caf::binary_serializer sink{sys, buf};
    REQUIRE_FALSE(sink(r));
    return std::string(buf.begin(), buf.end());
  };
  auto finished = [](const std::string& id, job_state state, std::vector<partition_state> parts) {
    job_report r;
    r.id = id;
    r.out = "/out/" + id;
    r.state = state;
    for (uint32_t i = 0; i < parts.size(); ++i) {
      partition_report p;
      p.index = i;
      p.state = parts[i];
      if (p.state == partition_state::done) p.proof_file = "proof_" + std::to_string(i) + ".json";
      r.partitions.push_back(p);
    }
    return r;
  };
  store->finish_job(0, "s0", record(finished("s0", job_state::done, {partition_state::done})), 0, 0);
  store->finish_job(0, "c0",
                    record(finished("c0", job_state::cancelled,
                                    {partition_state::done, partition_state::cancelled,
                                     partition_state::cancelled})),
                    0, 0);
  journal_config jc;
  jc.store = store;
  recover(jc);

  auto all = statuses();
  REQUIRE(all.size() == 2);
  CHECK(all[0].id == "s0");
  CHECK(all[0].state == job_state::done);
  CHECK(all[0].done == 1);
  CHECK(all[1].id == "c0");
  CHECK(all[1].state == job_state::cancelled);
  CHECK(all[1].done == 1);
  CHECK(all[1].total == 3);
  auto r = report(all[1].seq);  // await answers at once, as before the restart
  CHECK(r.state == job_state::cancelled);
  CHECK(r.out == "/out/c0");
  REQUIRE(r.partitions.size() == 3);
  CHECK(r.partitions[0].proof_file == "proof_0.json");
  CHECK(r.partitions[2].state == partition_state::cancelled);
  CHECK(world->events_of("prove").empty());  // nothing is proved for them
}

TEST_CASE_FIXTURE(recovery_fixture,
                  "spooled witnesses of recovered jobs are removed once no unfinished job names "
                  "them") {
  temp_dir dir;
  const fs::path sub = dir.path / "spool/9/submission-1";
  fs::create_directories(sub);
  const std::string spool = fs::canonical(sub).string();
  for (const char* name : {"1.wtns", "2.wtns", "3.wtns", "4.wtns"})
    std::ofstream(sub / name) << "w";
  auto store = std::make_shared<journal_store>(dir.path.string());
  // a and b share 1.wtns (one submission); the second "dup" cannot be
  // recovered beside the first (the same id), so its 4.wtns stays.
  store->add_jobs({make_job("a", {spool + "/1.wtns", spool + "/2.wtns"}),
                   make_job("b", {spool + "/1.wtns"}), make_job("dup", {spool + "/3.wtns"}),
                   make_job("dup", {spool + "/4.wtns"})});
  journal_config jc;
  jc.store = store;
  recover(jc);
  auto all = statuses();
  REQUIRE(all.size() == 3);
  for (const auto& st : all) CHECK(st.state == job_state::done);
  CHECK_FALSE(fs::exists(sub / "1.wtns"));
  CHECK_FALSE(fs::exists(sub / "2.wtns"));
  CHECK_FALSE(fs::exists(sub / "3.wtns"));
  CHECK(fs::exists(sub / "4.wtns"));
  CHECK(ids_of(store->pending()) == std::set<std::string>{"dup"});
}

TEST_CASE("spool directories of earlier runs that no journaled job needs are removed") {
  temp_dir dir;
  fs::create_directories(dir.path / "spool/1/submission-1");
  fs::create_directories(dir.path / "spool/2/submission-1");
  std::ofstream(dir.path / "spool/1/submission-1/1.wtns") << "w";
  std::ofstream(dir.path / "spool/2/submission-1/1.wtns") << "w";
  // Named relative to the working directory: the spool is found all the same.
  const auto cwd = fs::current_path();
  fs::current_path(dir.path);
  journal_store store("./");
  fs::current_path(cwd);
  journaled_job kept;
  kept.spec = make_job("k", {store.dir() + "/spool/2/submission-1/1.wtns"});
  CHECK(remove_stale_spools(store, {kept}) == 1);
  CHECK_FALSE(fs::exists(dir.path / "spool/1"));
  CHECK(fs::exists(dir.path / "spool/2/submission-1/1.wtns"));
}

TEST_CASE("partly written files are removed and finished ones kept") {
  temp_dir dir;
  std::ofstream(dir.path / "proof_0.json") << "{}";
  std::ofstream(dir.path / "proof_1.json.tmp-42-7") << "{";
  std::ofstream(dir.path / "result.json.tmp-42-8") << "";
  CHECK(remove_partial_files(dir.path.string()) == 2);
  CHECK(fs::exists(dir.path / "proof_0.json"));
  CHECK(remove_partial_files((dir.path / "absent").string()) == 0);
}
