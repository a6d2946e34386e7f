// The state journal (serve --state): the SQLite store on its own, and the
// journal actor with the registry under the deterministic scheduler: a
// submission is answered only once recorded, finished jobs leave the
// journal, and recovery re-queues journaled jobs without proving again the
// partitions whose proofs check.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>

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

TEST_CASE_FIXTURE(det_fixture, "a submission is answered once the journal has it, and leaves it when done") {
  temp_dir dir;
  auto store = std::make_shared<journal_store>(dir.path.string());
  journal_config jc;
  jc.store = store;
  auto j = sys.spawn(journal, jc);
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

TEST_CASE_FIXTURE(det_fixture,
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
  auto j = sys.spawn(journal, jc);
  runtime_config rc;
  rc.memory_budget = 4 * fake_partition_bytes;
  rc.journal = j;
  start(rc);
  self->send(j, recover_atom::value, rt->registry(), rt->keys());
  sched.run();

  // c completes at once: nothing to prove, and it leaves the journal.
  INFO("events: " << [&] {
    std::string all;
    for (const auto& e : world->events) all += e + "; ";
    return all;
  }());
  CHECK(world->events_of("prove") == std::vector<std::string>{"a0.wtns", "a2.wtns", "a3.wtns", "b0.wtns"});
  CHECK(checked.size() == 4);  // a1, a3, c0, c1
  CHECK(ids_of(store->pending()).empty());
  self->send(rt->registry(), status_atom::value);
  sched.run();
  auto all = fetch<std::vector<job_status>>();
  REQUIRE(all.size() == 3);
  for (const auto& s : all) {
    CHECK(s.state == job_state::done);
    CHECK(s.done == s.total);
  }
  self->send_exit(j, caf::exit_reason::user_shutdown);
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
