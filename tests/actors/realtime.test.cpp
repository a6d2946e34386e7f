// The pipeline on CAF's real scheduler with detached synthesizers, GPU workers
// and finalizers, and fake backends that take a few ms: synthesis of
// partition k+1 overlaps the proving of partition k, and three devices, one
// of which stops working, still prove every partition once.
#include <doctest/doctest.h>

#include <algorithm>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>

#include <nlohmann/json.hpp>

#include "actors/detail/retry_policy.hpp"
#include "actors/runtime.hpp"
#include "tests/actors/fakes.hpp"
#include "tests/actors/fixture.hpp"
#include "tests/support/actor_system.hpp"

using namespace proofline;
using namespace proofline::test;

namespace {

/// The detached pipeline on the real scheduler (two threads) and a fake
/// world: proves one job on `backends` and returns its report once the
/// runtime has shut down.
struct realtime_run {
  caf::actor_system_config cfg;
  caf::actor_system sys{threaded(cfg, 2)};
  std::shared_ptr<fake_world> world = std::make_shared<fake_world>();

  job_report prove(runtime_config rc, std::vector<std::shared_ptr<gpu::backend>> backends,
                   const job_spec& spec, std::chrono::seconds await_for) {
    rc.memory_budget = 64 * fake_partition_bytes;
    rc.synthesizers = 2;
    rc.detach = true;
    job_report report;
    runtime rt(sys, rc, world->ops(), std::move(backends));
    caf::scoped_actor self(sys);
    uint64_t seq = 0;
    self->request(rt.registry(), std::chrono::seconds(10), submit_atom::value, spec)
        .receive([&](uint64_t s) { seq = s; }, [&](caf::error& e) { FAIL(sys.render(e)); });
    self->request(rt.registry(), await_for, await_atom::value, seq)
        .receive([&](job_report& r) { report = std::move(r); },
                 [&](caf::error& e) { FAIL(sys.render(e)); });
    return report;
  }
};

}  // namespace

TEST_CASE_FIXTURE(realtime_run,
                  "synthesis of partition k+1 overlaps the proving of partition k on the real scheduler") {
  world->synth_delay = std::chrono::milliseconds(50);
  world->prove_delay = std::chrono::milliseconds(40);
  runtime_config rc;
  rc.pacing = 1;  // synthesize just in time: one granted partition ahead of the GPU
  job_report report = prove(rc, {world->backend()},
                            make_job("four", {"p0.wtns", "p1.wtns", "p2.wtns", "p3.wtns"}),
                            std::chrono::seconds(10));
  REQUIRE(report.state == job_state::done);

  auto j = nlohmann::json::parse(world->file("out/four/result.json"));
  REQUIRE(j["partitions"].size() == 4);
  auto span = [&](int k, const char* stage, int end) {
    return j["partitions"][k]["spans_ms"][stage][end].get<double>();
  };
  for (int k = 0; k + 1 < 4; ++k) {
    INFO("partition " << k);
    // Intervals [s, e] of synthesize(k+1) and prove(k) intersect.
    CHECK(span(k + 1, "synthesize", 0) < span(k, "prove", 1));
    CHECK(span(k, "prove", 0) < span(k + 1, "synthesize", 1));
    // One GPU worker proves one partition at a time, in order.
    CHECK(span(k + 1, "prove", 0) >= span(k, "prove", 1));
  }
  CHECK(world->events_of("prove") ==
        std::vector<std::string>{"p0.wtns", "p1.wtns", "p2.wtns", "p3.wtns"});
}

TEST_CASE_FIXTURE(realtime_run,
                  "three detached devices, one of which stops working, prove every partition once") {
  world->synth_delay = std::chrono::milliseconds(5);
  world->prove_delay = std::chrono::milliseconds(10);
  world->fails_after[2] = 2;  // device 2 proves two partitions, then throws
  std::vector<std::string> witnesses;
  for (int i = 0; i < 24; ++i) witnesses.push_back("m" + std::to_string(i) + ".wtns");
  job_report report =
      prove(runtime_config{}, {world->backend(0), world->backend(1), world->backend(2)},
            make_job("many", witnesses), std::chrono::seconds(20));
  REQUIRE(report.state == job_state::done);
  for (const auto& w : witnesses) {
    INFO(w);
    CHECK(world->proofs_of(w) == 1);
  }
  std::map<int, int> per;
  for (const auto& w : witnesses)
    for (int d : world->devices_of(w)) ++per[d];
  CHECK(per[2] <= 2);  // nothing after it stopped working
  CHECK(per[0] + per[1] + per[2] == 24);
  // Each failure on device 2 was one counted retry (placed elsewhere once it
  // was out of service); nothing else was retried.
  uint32_t retries = 0;
  for (const auto& p : report.partitions) {
    CHECK(p.retries <= max_placed_retries);
    retries += p.retries;
  }
  CHECK(retries == static_cast<uint32_t>(world->prove_calls[2] - per[2]));
}

TEST_CASE_FIXTURE(realtime_run,
                  "a job's constraints are loaded off the registry before its key and reach "
                  "every synthesis; one that cannot be read or is another circuit's fails the "
                  "job naming it") {
  job_spec spec = make_job("c", {"c0.wtns", "c1.wtns"});
  spec.r1cs = "c.r1cs";
  job_report ok = prove({}, {world->backend()}, spec, std::chrono::seconds(10));
  CHECK(ok.state == job_state::done);
  auto events = world->events_of("constraints");
  REQUIRE(events.size() == 1);
  CHECK(world->events_of("checked").size() == 2);
  // Loaded before the key was asked for.
  const auto all = world->events;
  const auto at = [&](const std::string& e) {
    return std::find(all.begin(), all.end(), e) - all.begin();
  };
  CHECK(at("constraints c.r1cs") < at("load " + spec.zkey));

  job_spec missing = make_job("m", {"m0.wtns"});
  missing.r1cs = "missing.r1cs";
  job_report m = prove({}, {world->backend()}, missing, std::chrono::seconds(10));
  CHECK(m.state == job_state::failed);
  CHECK(m.error.file == "missing.r1cs");
  CHECK(m.error.message.find("missing.r1cs: cannot open") == 0);

  job_spec wide = make_job("w", {"w0.wtns"});
  wide.r1cs = "wide.r1cs";
  job_report w = prove({}, {world->backend()}, wide, std::chrono::seconds(10));
  CHECK(w.state == job_state::failed);
  CHECK(w.error.file == "wide.r1cs");
  CHECK(w.error.message.find("9 wires") != std::string::npos);
  CHECK(w.error.message.find("not this key's circuit") != std::string::npos);
  CHECK(world->events_of("checked").size() == 2);  // neither failed job was synthesized
}
