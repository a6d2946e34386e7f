// The whole pipeline under CAF's deterministic scheduler with a fake backend:
// the order in which partitions get memory and reach the backend, failures
// that stay inside their job, and result.json.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <set>

#include <nlohmann/json.hpp>

#include "actors/detail/job_entry.hpp"
#include "tests/actors/fixture.hpp"

using namespace proofline;
using namespace proofline::test;
using strings = std::vector<std::string>;

namespace {

/// Index of the first event equal to `e`, or -1.
long position(const strings& events, const std::string& e) {
  auto it = std::find(events.begin(), events.end(), e);
  return it == events.end() ? -1 : static_cast<long>(it - events.begin());
}

runtime_config two_partition_budget() {
  runtime_config rc;
  rc.memory_budget = 2 * fake_partition_bytes;  // room for exactly two partitions
  rc.synthesizers = 2;
  rc.finalizers = 2;
  rc.pacing = 1;  // just in time: one granted partition ahead of the GPU worker
  return rc;
}

}  // namespace

TEST_CASE_FIXTURE(det_fixture,
                  "jobs of mixed priority get memory and reach the backend by priority, then age") {
  start(two_partition_budget());
  auto seqs = submit_all({
      make_job("a", {"a0.wtns", "a1.wtns", "a2.wtns"}, priority::normal),
      make_job("b", {"b0.wtns", "b1.wtns"}, priority::high),
      make_job("c", {"c0.wtns"}, priority::low),
      make_job("d", {"d0.wtns"}, priority::normal),
      make_job("e", {"e0.wtns"}, priority::critical),
  });
  for (auto seq : seqs) CHECK(report(seq).state == job_state::done);

  const strings expected{"e0.wtns", "b0.wtns", "b1.wtns", "a0.wtns",
                         "a1.wtns", "a2.wtns", "d0.wtns", "c0.wtns"};
  CHECK(world->events_of("grant") == expected);
  CHECK(world->events_of("prove") == expected);
  CHECK(world->key_loads == 1);  // one key, loaded once for all five jobs
  CHECK(world->grants_over_budget == 0);

  // Synthesis runs just in time: b0 gets memory once e0 starts proving. With
  // room for two partitions, the third grant waits until the first partition
  // is finalized (its proof written), and so on down the line.
  auto ev = world->events;
  CHECK(position(ev, "grant b0.wtns") > position(ev, "prove e0.wtns"));
  CHECK(position(ev, "grant b1.wtns") > position(ev, "write out/e/proof.json"));
  CHECK(position(ev, "grant a0.wtns") > position(ev, "write out/b/proof_0.json"));
  CHECK(position(ev, "grant a0.wtns") < position(ev, "write out/b/proof_1.json"));
  CHECK(position(ev, "grant c0.wtns") > position(ev, "write out/a/proof_2.json"));

  // Everything reserved came back.
  auto m = memory();
  CHECK(m.reserved == 0);
  CHECK(m.reservations == 0);
  CHECK(m.queued == 0);
  CHECK(m.grants == 8);
  CHECK(m.peak_reserved == 2 * fake_partition_bytes);
  CHECK(m.purges == 8);
}

TEST_CASE_FIXTURE(det_fixture,
                  "a partition released in steps frees its bulk when the backend has its inputs") {
  // Room for the second partition only once the first has given back its
  // bulk: the second grant comes right after inputs_consumed, before the first
  // partition is finalized.
  runtime_config rc;
  rc.memory_budget = 2 * fake_partition_bytes - fake_bulk_bytes;
  rc.synthesizers = 1;
  start(rc);
  auto seq = submit(make_job("p", {"p0.wtns", "p1.wtns"}));
  CHECK(report(seq).state == job_state::done);
  auto ev = world->events;
  CHECK(position(ev, "grant p1.wtns") > position(ev, "prove p0.wtns"));
  CHECK(position(ev, "grant p1.wtns") < position(ev, "write out/p/proof_0.json"));
}

TEST_CASE_FIXTURE(det_fixture,
                  "a failed partition fails only its own job and keeps its siblings' proofs") {
  start(two_partition_budget());
  world->fail_prove.insert("z1.wtns");
  auto seqs = submit_all({
      make_job("x", {"x0.wtns", "x1-bad.wtns", "x2.wtns"}),
      make_job("y", {"y0.wtns"}),
      make_job("z", {"z0.wtns", "z1.wtns"}),
  });
  auto x = report(seqs[0]);
  auto y = report(seqs[1]);
  auto z = report(seqs[2]);

  CHECK(y.state == job_state::done);
  CHECK_FALSE(y.has_error);

  REQUIRE(x.partitions.size() == 3);
  CHECK(x.state == job_state::failed);
  CHECK(x.error.file == "x1-bad.wtns");
  CHECK(x.error.message == "x1-bad.wtns: 1520 witness values, circuit.zkey expects 8");
  CHECK(x.partitions[0].state == partition_state::done);
  CHECK(x.partitions[1].state == partition_state::failed);
  CHECK(x.partitions[2].state == partition_state::done);
  CHECK(x.partitions[2].proof_file == "proof_2.json");
  CHECK(world->file("out/x/proof_0.json") == "{\"witness\": \"x0.wtns\"}");
  CHECK(world->file("out/x/proof_2.json") == "{\"witness\": \"x2.wtns\"}");
  CHECK(world->file("out/x/proof_1.json").empty());

  CHECK(z.state == job_state::failed);
  CHECK(z.partitions[0].state == partition_state::done);
  CHECK(z.partitions[1].state == partition_state::failed);
  CHECK(z.error.file.empty());  // a backend fault: no input file is at fault
  // A backend fault is retried once, then fails the partition.
  CHECK(z.error.message ==
        "z1.wtns: fake backend: injected device fault (partition 1 on fake:0, after 1 retry)");
  CHECK(z.partitions[1].retries == 1);
  CHECK(z.partitions[1].spans.prove.recorded());

  auto m = memory();
  CHECK(m.reserved == 0);
  CHECK(m.reservations == 0);
}

TEST_CASE_FIXTURE(det_fixture, "a key that does not load fails every job using it and no other") {
  start(two_partition_budget());
  auto seqs = submit_all({
      make_job("m1", {"m0.wtns", "m1.wtns"}, priority::normal, "missing.zkey"),
      make_job("ok", {"ok.wtns"}),
      make_job("m2", {"n0.wtns"}, priority::high, "missing.zkey"),
  });
  auto m1 = report(seqs[0]);
  auto ok = report(seqs[1]);
  auto m2 = report(seqs[2]);
  CHECK(ok.state == job_state::done);
  for (const auto& r : {m1, m2}) {
    CHECK(r.state == job_state::failed);
    CHECK(r.error.file == "missing.zkey");
    CHECK(r.error.message == "missing.zkey: cannot open: No such file or directory");
    for (const auto& p : r.partitions) CHECK(p.state == partition_state::failed);
  }
  CHECK(world->key_loads == 2);  // missing.zkey once for both jobs, circuit.zkey once
  CHECK(world->events_of("synth") == strings{"ok.wtns"});
  auto m1_json = nlohmann::json::parse(world->file("out/m1/result.json"));
  CHECK(m1_json["status"] == "failed");
  CHECK(m1_json["error"]["file"] == "missing.zkey");
}

TEST_CASE_FIXTURE(det_fixture,
                  "a partition larger than the whole budget fails at once with the sizes") {
  start(two_partition_budget());
  auto seqs = submit_all({
      make_job("big", {"big.wtns"}, priority::critical, "huge.zkey"),
      make_job("small", {"s.wtns"}),
  });
  auto big = report(seqs[0]);
  CHECK(big.state == job_state::failed);
  CHECK(big.error.file == "huge.zkey");
  // 2 * 8*32 + 7 * 2^20 * 32 bytes = 224.0005 MiB; budget 2 * 4096 bytes = 8 KiB.
  CHECK(big.error.message == "huge.zkey: partition needs 224 MiB, the memory budget is 8 KiB");
  CHECK(report(seqs[1]).state == job_state::done);
  CHECK(world->events_of("synth") == strings{"s.wtns"});
}

TEST_CASE_FIXTURE(det_fixture, "result.json records every partition with its files and spans") {
  start(two_partition_budget());
  auto seqs = submit_all({make_job("multi", {"m0.wtns", "m1.wtns"}), make_job("one", {"o.wtns"})});
  auto r = report(seqs[0]);
  REQUIRE(r.state == job_state::done);

  auto j = nlohmann::ordered_json::parse(world->file("out/multi/result.json"));
  CHECK(j["id"] == "multi");
  CHECK(j["status"] == "done");
  CHECK(j["error"].is_null());
  REQUIRE(j["partitions"].size() == 2);
  std::vector<std::string> keys;
  for (auto& [k, v] : j.items()) keys.push_back(k);
  CHECK(keys == strings{"id", "status", "error", "partitions", "spans_ms"});
  double prev_end = 0;
  for (int i = 0; i < 2; ++i) {
    auto p = j["partitions"][i];
    CHECK(p["index"] == i);
    CHECK(p["status"] == "done");
    CHECK(p["proof"] == "proof_" + std::to_string(i) + ".json");
    CHECK(p["public"] == "public_" + std::to_string(i) + ".json");
    CHECK_FALSE(p.contains("error"));
    auto s = p["spans_ms"];
    // Queued at the memory manager once the key is loaded, granted before synthesis.
    double m0 = s["memory"][0], m1 = s["memory"][1];
    CHECK(m0 >= j["spans_ms"]["total"][0].get<double>());
    CHECK(m0 <= m1);
    double s0 = s["synthesize"][0], s1 = s["synthesize"][1];
    CHECK(m1 <= s0);
    double p0 = s["prove"][0], p1 = s["prove"][1];
    double f0 = s["finalize"][0], f1 = s["finalize"][1];
    CHECK(s0 <= s1);
    CHECK(s1 <= p0);
    CHECK(p0 <= p1);
    CHECK(p1 <= f0);
    CHECK(f0 <= f1);
    CHECK(p0 >= prev_end);  // one backend: proves do not overlap
    prev_end = p1;
    CHECK(s0 >= j["spans_ms"]["total"][0].get<double>());
    CHECK(f1 <= j["spans_ms"]["total"][1].get<double>());
  }
  CHECK(world->file("out/multi/public_1.json") == "[\"1\", \"42\"]");  // w[1..2]: tag 1, 42

  auto one = nlohmann::json::parse(world->file("out/one/result.json"));
  CHECK(one["partitions"][0]["proof"] == "proof.json");
  CHECK(one["partitions"][0]["public"] == "public.json");
  CHECK_FALSE(world->file("out/one/proof.json").empty());
  CHECK_FALSE(world->file("out/one/public.json").empty());
}

TEST_CASE_FIXTURE(det_fixture,
                  "a proof that fails its check is proved again once; failing twice on the "
                  "only backend, it fails its partition as a witness that does not satisfy the "
                  "circuit") {
  start(two_partition_budget());
  world->bad_proofs["a1.wtns"] = 1;  // bad once: the retry is good
  world->bad_proofs["b0.wtns"] = 5;  // always bad
  auto seqs = submit_all({make_job("a", {"a0.wtns", "a1.wtns", "a2.wtns"}),
                          make_job("b", {"b0.wtns"})});
  auto a = report(seqs[0]);
  auto b = report(seqs[1]);

  CHECK(a.state == job_state::done);
  REQUIRE(a.partitions.size() == 3);
  CHECK(a.partitions[0].retries == 0);
  CHECK(a.partitions[1].retries == 1);
  CHECK(a.partitions[1].verified);
  CHECK(a.partitions[2].retries == 0);
  CHECK(world->file("out/a/proof_1.json") == "{\"witness\": \"a1.wtns\"}");
  CHECK(world->events_of("prove").size() == 6);  // a0, a1 twice, a2, b0 twice

  CHECK(b.state == job_state::failed);
  CHECK(b.partitions[0].retries == 1);
  CHECK_FALSE(b.partitions[0].verified);
  CHECK(b.error.file == "b0.wtns");  // the input at fault, not the proof never written
  CHECK(b.error.message.find("b0.wtns: the witness does not satisfy the circuit of") !=
        std::string::npos);
  CHECK(b.error.message.find("failed the pairing check on fake:0 and fake:0") !=
        std::string::npos);
  CHECK(b.error.message.find("(partition 0 on fake:0, after 1 retry)") != std::string::npos);
  CHECK(world->file("out/b/proof.json").empty());  // a bad proof is never written
}

TEST_CASE_FIXTURE(det_fixture, "status follows a job from queued to done") {
  start(two_partition_budget());
  // The status request is in the registry's mailbox before the key loader's
  // answer, so it sees the job still waiting for its key.
  self->send(rt->registry(), submit_atom::value, make_job("s", {"s0.wtns"}));
  self->send(rt->registry(), status_atom::value);
  sched.run();
  auto seq = fetch<uint64_t>();
  auto before = fetch<std::vector<job_status>>();
  REQUIRE(before.size() == 1);
  CHECK(before[0].seq == seq);
  CHECK(before[0].state == job_state::queued);
  CHECK(before[0].total == 1);
  self->send(rt->registry(), status_atom::value, seq);
  sched.run();
  auto after = fetch<job_status>();
  CHECK(after.state == job_state::done);
  CHECK(after.done == 1);
  CHECK(after.failed == 0);
}

TEST_CASE_FIXTURE(det_fixture,
                  "a daemon forgets the oldest completed jobs past keep_finished, not their files") {
  auto rc = two_partition_budget();
  rc.keep_finished = 2;
  start(rc);
  std::vector<uint64_t> seqs;
  for (int i = 0; i < 4; ++i) {
    auto id = "k" + std::to_string(i);
    seqs.push_back(submit(make_job(id, {id + ".wtns"})));
    CHECK(report(seqs.back()).state == job_state::done);
  }
  self->send(rt->registry(), status_atom::value);
  sched.run();
  auto all = fetch<std::vector<job_status>>();
  REQUIRE(all.size() == 2);
  CHECK(all[0].seq == seqs[2]);
  CHECK(all[1].seq == seqs[3]);
  self->send(rt->registry(), status_atom::value, seqs[0]);
  sched.run();
  bool forgotten = false;
  self->receive([](const job_status&) {}, [&](caf::error&) { forgotten = true; },
                caf::after(std::chrono::seconds(0)) >> [] {});
  CHECK(forgotten);
  for (int i = 0; i < 4; ++i)
    CHECK(nlohmann::json::parse(world->file("out/k" + std::to_string(i) + "/result.json"))["status"] ==
          "done");
}

TEST_CASE_FIXTURE(det_fixture,
                  "a daemon forgets the oldest completed jobs past keep_finished_bytes and keeps "
                  "the newest whole") {
  // Failed jobs of thousands of partitions, each with its own witness path
  // and error: records of hundreds of KiB, which a count of jobs leaves
  // unbounded in bytes.
  auto big = [](const std::string& id, int parts) {
    std::vector<std::string> ws;
    for (int i = 0; i < parts; ++i)
      ws.push_back("/data/witnesses/" + id + "/partition-" + std::to_string(i) + ".wtns");
    return make_job(id, ws, priority::normal, "missing.zkey");
  };
  // One such record as the registry holds it once the key failed.
  auto sample = make_entry(1, big("b0", 2000), 0);
  for (auto& p : sample.parts)
    p.error = {"missing.zkey", "missing.zkey: cannot open: No such file or directory"};
  const std::size_t one = retained_bytes(sample);
  CHECK(one > 2000 * (sizeof(partition_report) + 40));
  auto rc = two_partition_budget();
  rc.keep_finished = 1000;
  rc.keep_finished_bytes = one * 5 / 2;  // room for two
  start(rc);
  auto statuses = [&] {
    self->send(rt->registry(), status_atom::value);
    sched.run();
    std::vector<std::string> ids;
    for (const auto& s : fetch<std::vector<job_status>>()) ids.push_back(s.id);
    return ids;
  };
  for (int i = 0; i < 4; ++i) {
    auto seq = submit(big("b" + std::to_string(i), 2000));
    CHECK(report(seq).state == job_state::failed);
  }
  CHECK(statuses() == strings{"b2", "b3"});
  // A job over the limit on its own is kept while it is the newest...
  CHECK(report(submit(big("huge", 6000))).state == job_state::failed);
  CHECK(statuses() == strings{"huge"});
  // ... and forgotten once another completes.
  CHECK(report(submit(make_job("small", {"s.wtns"}))).state == job_state::done);
  CHECK(statuses() == strings{"small"});
  for (const auto* id : {"b0", "b1", "b2", "b3", "huge"})
    CHECK(nlohmann::json::parse(world->file(std::string("out/") + id + "/result.json"))["status"] ==
          "failed");
}

TEST_CASE_FIXTURE(det_fixture, "a job without witnesses fails with a message naming the job") {
  start(two_partition_budget());
  auto spec = make_job("empty", {});
  auto r = report(submit(spec));
  CHECK(r.state == job_state::failed);
  CHECK(r.error.message == "job \"empty\": no witness");
  auto j = nlohmann::json::parse(world->file("out/empty/result.json"));
  CHECK(j["status"] == "failed");
  CHECK(j["partitions"].empty());
}

TEST_CASE_FIXTURE(det_fixture, "many jobs of random shape reach the backend in the global order") {
  start(two_partition_budget());
  std::mt19937 rng(7);
  std::vector<job_spec> specs;
  struct expected_part {
    int prio;
    size_t job;
    size_t index;
    std::string witness;
  };
  std::vector<expected_part> good;
  std::set<std::string> failing_jobs;
  for (size_t j = 0; j < 25; ++j) {
    auto prio = static_cast<priority>(rng() % 4);
    std::vector<std::string> ws;
    size_t n = 1 + rng() % 4;
    for (size_t i = 0; i < n; ++i) {
      bool bad = rng() % 10 == 0;
      std::string w =
          "j" + std::to_string(j) + "_" + std::to_string(i) + (bad ? "-bad" : "") + ".wtns";
      ws.push_back(w);
      if (bad)
        failing_jobs.insert("j" + std::to_string(j));
      else
        good.push_back({static_cast<int>(prio), j, i, w});
    }
    specs.push_back(make_job("j" + std::to_string(j), ws, prio));
  }
  REQUIRE_FALSE(failing_jobs.empty());  // the seed gives some bad witnesses
  auto seqs = submit_all(specs);
  for (size_t j = 0; j < seqs.size(); ++j) {
    auto r = report(seqs[j]);
    CHECK(r.state == (failing_jobs.count(r.id) ? job_state::failed : job_state::done));
  }
  std::stable_sort(good.begin(), good.end(), [](const expected_part& x, const expected_part& y) {
    if (x.prio != y.prio) return x.prio > y.prio;
    if (x.job != y.job) return x.job < y.job;
    return x.index < y.index;
  });
  strings order;
  for (const auto& g : good) order.push_back(g.witness);
  CHECK(world->events_of("prove") == order);
  CHECK(world->grants_over_budget == 0);
  auto m = memory();
  CHECK(m.reserved == 0);
  CHECK(m.reservations == 0);
}

TEST_CASE_FIXTURE(det_fixture,
                  "a job in memory reads its witnesses from bytes and returns its proofs, "
                  "writing nothing") {
  runtime_config rc = two_partition_budget();
  start(rc);
  auto bytes = std::make_shared<const std::vector<std::string>>(
      std::vector<std::string>{"first witness", "second witness"});
  auto payload = std::make_shared<job_payload>();
  for (const auto& b : *bytes) payload->witnesses.push_back({b.data(), b.size()});
  payload->owner = bytes;
  payload->return_outputs = true;
  local_job job;
  job.spec = make_job("mem", {"w0", "w1"});
  job.spec.out.clear();
  job.payload = payload;
  std::weak_ptr<const void> owner = bytes;
  bytes.reset();
  payload.reset();
  self->send(rt->registry(), submit_atom::value, job);
  job = {};
  sched.run();
  const uint64_t seq = fetch<uint64_t>();
  auto r = report(seq);
  REQUIRE(r.state == job_state::done);
  REQUIRE(r.partitions.size() == 2);
  for (uint32_t i = 0; i < 2; ++i) {
    CHECK(r.partitions[i].proof_json == "{\"witness\": \"w" + std::to_string(i) + "\"}");
    CHECK(!r.partitions[i].public_json.empty());
    CHECK(r.partitions[i].proof_file.empty());
  }
  CHECK(world->events_of("synth") ==
        strings{"w0 from bytes first witness", "w1 from bytes second witness"});
  CHECK(world->events_of("write").empty());  // no proof, no public, no result.json
  sched.run();
  CHECK(owner.expired());  // the bytes went with the job
  CHECK(memory().reserved == 0);
}

TEST_CASE_FIXTURE(det_fixture, "a job in memory with an out directory is refused, naming it") {
  start(two_partition_budget());
  auto payload = std::make_shared<job_payload>();
  payload->return_outputs = true;
  local_job job;
  job.spec = make_job("both", {"w0"});
  job.payload = payload;
  self->send(rt->registry(), submit_atom::value, job);
  sched.run();
  auto r = report(fetch<uint64_t>());
  CHECK(r.state == job_state::failed);
  CHECK(r.error.message.find("an out directory for a job whose outputs come back in memory") !=
        std::string::npos);
}
