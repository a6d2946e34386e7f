// The key cache under the deterministic scheduler: keys stay warm across
// submissions (no second load, no second prepare), a changed file is loaded
// again, and idle keys are evicted least recently used first when the memory
// budget needs room.
#include <doctest/doctest.h>

#include <algorithm>

#include "tests/actors/fixture.hpp"

using namespace proofline;
using namespace proofline::test;
using strings = std::vector<std::string>;

namespace {

runtime_config warm_config(uint64_t budget = 1 << 20) {
  runtime_config rc;
  rc.memory_budget = budget;
  rc.synthesizers = 1;
  rc.finalizers = 1;
  rc.keep_keys = true;
  return rc;
}

/// Bytes of a fake key with `points` H points (BN254 affine G1: 64 bytes each).
constexpr uint64_t key_bytes(size_t points) { return 64 * points; }

std::vector<warm_key> warm_keys(det_fixture& f) {
  f.sched.run();
  f.self->send(f.rt->keys(), warm_keys_atom::value);
  f.sched.run();
  return f.fetch<std::vector<warm_key>>();
}

// The key cache's start-up records, once what is pending has run.
std::vector<key_startup> startup_history(det_fixture& f) {
  f.sched.run();
  f.self->send(f.rt->keys(), startup_atom::value);
  f.sched.run();
  return f.fetch<std::vector<key_startup>>();
}

strings paths(const std::vector<warm_key>& keys) {
  strings out;
  for (const auto& k : keys) out.push_back(k.path);
  return out;
}

}  // namespace

TEST_CASE_FIXTURE(det_fixture,
                  "a second submission of a warm key neither loads nor prepares it again") {
  start(warm_config());
  CHECK(report(submit(make_job("a", {"a0.wtns", "a1.wtns"}))).state == job_state::done);
  CHECK(report(submit(make_job("b", {"b0.wtns"}))).state == job_state::done);
  CHECK(world->key_loads == 1);
  CHECK(world->events_of("prepare") == strings{"circuit.zkey"});
  CHECK(world->events_of("evict").empty());
  auto keys = warm_keys(*this);
  REQUIRE(keys.size() == 1);
  CHECK(keys[0].path == "circuit.zkey");
  CHECK(keys[0].users == 0);
}

TEST_CASE_FIXTURE(det_fixture, "without keep_keys (run) a key is dropped after its last job") {
  auto rc = warm_config();
  rc.keep_keys = false;
  start(rc);
  CHECK(report(submit(make_job("a", {"a0.wtns"}))).state == job_state::done);
  CHECK(warm_keys(*this).empty());
  CHECK(report(submit(make_job("b", {"b0.wtns"}))).state == job_state::done);
  CHECK(world->key_loads == 2);
  CHECK(memory().keys == 0);
}

TEST_CASE_FIXTURE(det_fixture, "a key whose file changed is loaded again and the old one forgotten") {
  start(warm_config());
  CHECK(report(submit(make_job("a", {"a0.wtns"}))).state == job_state::done);
  {
    std::lock_guard<std::mutex> g(world->mtx);
    world->file_versions["circuit.zkey"] = 2;  // the file on disk changed
  }
  CHECK(report(submit(make_job("b", {"b0.wtns"}))).state == job_state::done);
  CHECK(world->key_loads == 2);
  CHECK(world->events_of("prepare") == strings{"circuit.zkey", "circuit.zkey"});
  CHECK(world->events_of("evict") == strings{"circuit.zkey"});  // the first version's device state
  CHECK(report(submit(make_job("c", {"c0.wtns"}))).state == job_state::done);
  CHECK(world->key_loads == 2);  // unchanged since: warm
  CHECK(warm_keys(*this).size() == 1);
}

TEST_CASE_FIXTURE(det_fixture,
                  "a key whose file changed while in use stays with its user; the next gets the new one") {
  start(warm_config());
  auto ask = [&] {
    self->send(rt->keys(), key_atom::value, std::string("circuit.zkey"));
    sched.run();
    return fetch<key_load_result>();
  };
  auto first = ask();
  {
    std::lock_guard<std::mutex> g(world->mtx);
    world->file_versions["circuit.zkey"] = 7;
  }
  auto second = ask();
  REQUIRE(first.key);
  REQUIRE(second.key);
  CHECK(first.key != second.key);
  CHECK(world->key_loads == 2);
  CHECK(world->events_of("evict").empty());  // the first is still in use
  CHECK(warm_keys(*this).size() == 2);
  self->send(rt->keys(), key_users_atom::value, first.key, int32_t{-1});
  auto keys = warm_keys(*this);
  REQUIRE(keys.size() == 1);
  CHECK(keys[0].users == 1);  // the second, still held
  CHECK(world->events_of("evict") == strings{"circuit.zkey"});
  CHECK(ask().key == second.key);
}

TEST_CASE_FIXTURE(det_fixture,
                  "idle keys are evicted least recently used first when the budget needs room") {
  constexpr size_t points = 1000;
  for (auto p : {"k1.zkey", "k2.zkey", "k3.zkey"}) world->key_points[p] = points;
  // Two keys and a partition fit; a third key does not.
  start(warm_config(2 * key_bytes(points) + 3 * fake_partition_bytes));
  auto job = [](std::string id, std::string key) {
    return make_job(id, {id + ".wtns"}, priority::normal, key);
  };
  CHECK(report(submit(job("a", "k1.zkey"))).state == job_state::done);
  CHECK(report(submit(job("b", "k2.zkey"))).state == job_state::done);
  CHECK(report(submit(job("c", "k1.zkey"))).state == job_state::done);  // k1 used last
  CHECK(world->key_loads == 2);
  CHECK(paths(warm_keys(*this)) == strings{"k2.zkey", "k1.zkey"});
  CHECK(memory().keys == 2 * key_bytes(points));

  CHECK(report(submit(job("d", "k3.zkey"))).state == job_state::done);
  CHECK(world->events_of("evict") == strings{"k2.zkey"});  // least recently used, and only it
  CHECK(paths(warm_keys(*this)) == strings{"k1.zkey", "k3.zkey"});
  auto m = memory();
  CHECK(m.keys == 2 * key_bytes(points));
  CHECK(world->grants_over_budget == 0);

  CHECK(report(submit(job("e", "k1.zkey"))).state == job_state::done);  // still warm
  CHECK(world->key_loads == 3);
}

TEST_CASE_FIXTURE(det_fixture, "a preloaded key is ready before its first job and not loaded again") {
  start(warm_config());
  self->send(rt->keys(), preload_atom::value, std::string("circuit.zkey"));
  sched.run();
  auto r = fetch<key_load_result>();
  REQUIRE(r.key);
  CHECK(world->events_of("prepare") == strings{"circuit.zkey"});
  CHECK(warm_keys(*this).at(0).users == 0);
  CHECK(report(submit(make_job("a", {"a0.wtns"}))).state == job_state::done);
  CHECK(world->key_loads == 1);
  CHECK(world->events_of("prepare").size() == 1);
}

TEST_CASE_FIXTURE(det_fixture,
                  "window tables built after a key was prepared reach its start-up record") {
  world->tables_after[0] = 2;  // the fake device reports tables from its second proof on
  start(warm_config());
  CHECK(report(submit(make_job("a", {"a0.wtns", "a1.wtns", "a2.wtns"}))).state ==
        job_state::done);
  auto history = startup_history(*this);
  REQUIRE(history.size() == 1);
  // One preparation on device 0, reported first on plain points and then
  // replaced by its state with tables: not two entries.
  REQUIRE(history[0].devices.size() == 1);
  const auto& d = history[0].devices[0];
  CHECK(d.gpu == 0);
  CHECK(d.tables_ms == 3);
  CHECK(d.tables_bytes == 4096);
  REQUIRE(d.spans.size() == 2);
  CHECK(d.spans[0].name == "key_upload");
  CHECK(d.spans[1].name == "key_tables");
  CHECK(d.spans[1].end - d.spans[1].start == doctest::Approx(3));
}

TEST_CASE_FIXTURE(det_fixture, "a key that never gets tables keeps its first start-up record") {
  world->tables_after[0] = 100;
  start(warm_config());
  CHECK(report(submit(make_job("a", {"a0.wtns", "a1.wtns"}))).state == job_state::done);
  auto history = startup_history(*this);
  REQUIRE(history.size() == 1);
  REQUIRE(history[0].devices.size() == 1);
  CHECK(history[0].devices[0].tables_ms == 0);
  REQUIRE(history[0].devices[0].spans.size() == 1);
  CHECK(history[0].devices[0].spans[0].name == "key_upload");
}

TEST_CASE_FIXTURE(det_fixture,
                  "an adopted key is never read, serves jobs naming it and goes with its last user") {
  start(warm_config());
  auto key = world->ops().load_key("mine.zkey");  // loaded by its owner (the library)
  const int loads = world->key_loads;
  self->send(rt->keys(), adopt_atom::value, std::string("library key 1"), key);
  sched.run();
  CHECK(fetch<key_load_result>().key == key);
  CHECK(world->events_of("prepare") == strings{"mine.zkey"});  // made ready on the backends
  // The same name again is refused while the key is in.
  self->send(rt->keys(), adopt_atom::value, std::string("library key 1"), key);
  sched.run();
  self->receive([](const key_load_result&) { FAIL("adopted twice"); },
                [](caf::error& e) { CHECK(e.code() == static_cast<uint8_t>(caf::sec::invalid_argument)); },
                caf::after(std::chrono::seconds(0)) >> [] { FAIL("no answer"); });
  auto job = make_job("a", {"a0.wtns"}, priority::normal, "library key 1");
  CHECK(report(submit(job)).state == job_state::done);
  CHECK(world->key_loads == loads);  // never read by the cache
  CHECK(warm_keys(*this).size() == 1);
  // Its owner lets go: warm or not, nobody could name it again.
  self->send(rt->keys(), key_users_atom::value, key, int32_t{-1});
  sched.run();
  CHECK(warm_keys(*this).empty());
  CHECK(world->events_of("evict") == strings{"mine.zkey"});
}
