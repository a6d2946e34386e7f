// Retries placed on another backend (actors/detail/retry_policy.hpp): the same
// backend first, then another GPU or the fallback backend, then failure
// naming the partition and the backend; a lost device's partitions go
// elsewhere at once. Deterministic pipeline on fake backends, with the
// fault-injection decorator (engine/fault_inject.hpp) as the bad backend.
#include <doctest/doctest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "actors/detail/result_file.hpp"
#include "actors/detail/retry_policy.hpp"
#include "engine/fault_inject.hpp"
#include "tests/actors/fixture.hpp"

using namespace proofline;
using namespace proofline::test;
using strings = std::vector<std::string>;

namespace {

runtime_config small_runtime() {
  runtime_config rc;
  rc.memory_budget = 4 * fake_partition_bytes;
  rc.synthesizers = 2;
  rc.finalizers = 2;
  return rc;
}

std::shared_ptr<gpu::backend> corrupting(const std::shared_ptr<gpu::backend>& b) {
  return engine::with_faults({b}, engine::parse_faults("corrupt:all")).front();
}

long count(const strings& v, const std::string& x) { return std::count(v.begin(), v.end(), x); }

}  // namespace

TEST_CASE("retries go to the same backend, then another GPU or the fallback, then stop") {
  const retry_targets one{1, false}, one_cpu{1, true}, two{2, false}, two_cpu{2, true};
  SUBCASE("first retry: the same backend") {
    auto p = next_placement(two_cpu, 0, 1, false);
    REQUIRE(p);
    CHECK(p->device == 1);
    CHECK_FALSE(p->avoid);
  }
  SUBCASE("second retry: another GPU when there is one, else the fallback") {
    auto other = next_placement(two_cpu, 1, 1, false);
    REQUIRE(other);
    CHECK(other->device == 1);
    CHECK(other->avoid);
    CHECK(other->admits(0, 2));
    CHECK_FALSE(other->admits(1, 2));
    CHECK_FALSE(other->admits(2, 2));
    auto cpu = next_placement(one_cpu, 1, 0, false);
    REQUIRE(cpu);
    CHECK(cpu->device == 1);
    CHECK(cpu->admits(1, 1));
    CHECK_FALSE(cpu->admits(0, 1));
  }
  SUBCASE("a lost device skips the retry on itself") {
    auto p = next_placement(one_cpu, 0, 0, true);
    REQUIRE(p);
    CHECK(p->device == 1);  // the fallback
  }
  SUBCASE("then the partition fails") {
    CHECK_FALSE(next_placement(two_cpu, 2, 0, false));
    CHECK_FALSE(next_placement(one_cpu, 1, 1, false));  // the fallback itself failed
    CHECK_FALSE(next_placement(one, 1, 0, false));      // nowhere else to go
    CHECK_FALSE(next_placement(two, 2, 1, false));
  }
  SUBCASE("a first placement admits every primary backend and not the fallback") {
    placement any;
    CHECK(any.admits(0, 2));
    CHECK(any.admits(1, 2));
    CHECK_FALSE(any.admits(2, 2));
  }
}

TEST_CASE_FIXTURE(det_fixture,
                  "a backend that corrupts every proof: the CPU fallback proves each partition") {
  auto rc = small_runtime();
  rc.fallback = world->backend("cpu");
  auto r = prove_job(rc, {corrupting(world->backend("cuda"))},
                     make_job("j", {"j0.wtns", "j1.wtns", "j2.wtns"}));

  CHECK(r.state == job_state::done);
  REQUIRE(r.partitions.size() == 3);
  auto ran = world->events_of("ran");
  for (const auto& p : r.partitions) {
    CHECK(p.state == partition_state::done);
    CHECK(p.retries == 2);  // once more on the same GPU, then the fallback
    CHECK(p.verified == false);  // the fake self-check only marks bad proofs
    CHECK(p.spans.backend == "cpu:fallback");
    CHECK(p.spans.gpu == 1);
    const std::string w = "j" + std::to_string(p.index) + ".wtns";
    CHECK(count(ran, "cuda " + w) == 2);
    CHECK(count(ran, "cpu " + w) == 1);
  }
  CHECK(world->file("out/j/proof_1.json") == "{\"witness\": \"j1.wtns\"}");
  auto j = nlohmann::json::parse(result_json(r));
  CHECK(j["partitions"][0]["backend"] == "cpu:fallback");
  CHECK(j["partitions"][0]["retries"] == 2);
  CHECK(memory().reserved == 0);
}

TEST_CASE("a witness is at fault once two backends, or the only one twice, fail its proofs") {
  CHECK_FALSE(witness_at_fault({"cuda:0"}, false));
  CHECK_FALSE(witness_at_fault({"cuda:0", "cuda:0"}, false));  // one GPU may be faulty
  CHECK(witness_at_fault({"cuda:0", "cuda:0", "cpu:fallback"}, false));
  CHECK(witness_at_fault({"cuda:0", "cuda:1"}, false));
  CHECK_FALSE(witness_at_fault({"cpu:0"}, true));
  CHECK(witness_at_fault({"cpu:0", "cpu:0"}, true));
}

TEST_CASE_FIXTURE(det_fixture,
                  "proofs of one witness that fail their check on the GPU and the fallback fail "
                  "the job as an input error naming the witness, and lose no device") {
  auto rc = small_runtime();
  rc.fallback = world->backend("cpu");
  world->bad_proofs["u0.wtns"] = 100;  // no backend proves it: it does not satisfy the circuit
  auto r = prove_job(rc, {world->backend("cuda")}, make_job("u", {"u0.wtns", "u1.wtns"}));

  CHECK(r.state == job_state::failed);
  REQUIRE(r.partitions.size() == 2);
  const auto& bad = r.partitions[0];
  CHECK(bad.state == partition_state::failed);
  CHECK(bad.error.file == "u0.wtns");
  CHECK(bad.error.message.find("u0.wtns: the witness does not satisfy the circuit of") !=
        std::string::npos);
  CHECK(bad.error.message.find("on cuda:0, cuda:0 and cpu:fallback") != std::string::npos);
  CHECK(r.error.file == "u0.wtns");
  // The GPU stays in service: the good witness is proved there, first time.
  CHECK(r.partitions[1].state == partition_state::done);
  CHECK(r.partitions[1].spans.backend == "cuda:0");
  CHECK(r.partitions[1].retries == 0);
  auto ran = world->events_of("ran");
  CHECK(count(ran, "cuda u0.wtns") == 2);
  CHECK(count(ran, "cpu u0.wtns") == 1);
  CHECK(memory().reserved == 0);
}

TEST_CASE_FIXTURE(det_fixture,
                  "a fallback that fails too fails the job, naming the partition and the backend") {
  auto rc = small_runtime();
  rc.fallback = engine::with_faults({world->backend("cpu")}, engine::parse_faults("throw:all")).front();
  auto r = prove_job(rc, {corrupting(world->backend("cuda"))},
                     make_job("k", {"k0.wtns", "k1.wtns"}));

  CHECK(r.state == job_state::failed);
  REQUIRE(r.partitions.size() == 2);
  for (const auto& p : r.partitions) {
    CHECK(p.state == partition_state::failed);
    CHECK(p.retries == 2);
    CHECK(p.spans.backend == "cpu:fallback");
  }
  const auto& msg = r.partitions[1].error.message;
  CHECK(msg.find("k1.wtns: ") == 0);  // the witness it was proving, though not at fault
  CHECK(r.partitions[1].error.file.empty());
  CHECK(msg.find("(partition 1 on cpu:fallback, after 2 retries)") != std::string::npos);
  CHECK(world->file("out/k/proof_0.json").empty());  // a bad proof is never written
  CHECK(count(world->events_of("ran"), "cuda k0.wtns") == 2);
  CHECK(memory().reserved == 0);
}

TEST_CASE_FIXTURE(det_fixture, "a proof that fails on one GPU is proved again on the other") {
  auto rc = small_runtime();
  auto r = prove_job(rc, {corrupting(world->backend("gpu0")), world->backend("gpu1")},
                     make_job("m", {"m0.wtns", "m1.wtns", "m2.wtns", "m3.wtns"}));

  CHECK(r.state == job_state::done);
  auto ran = world->events_of("ran");
  for (const auto& p : r.partitions) {
    CHECK(p.state == partition_state::done);
    CHECK(p.spans.backend == "gpu1:1");
    const std::string w = "m" + std::to_string(p.index) + ".wtns";
    // Proved on gpu0 first: once more there, then on gpu1.
    const long on0 = count(ran, "gpu0 " + w);
    CHECK((on0 == 0 || on0 == 2));
    CHECK(p.retries == static_cast<uint32_t>(on0));
    CHECK(count(ran, "gpu1 " + w) == 1);
  }
  CHECK(count(ran, "gpu0 m0.wtns") + count(ran, "gpu0 m1.wtns") + count(ran, "gpu0 m2.wtns") +
            count(ran, "gpu0 m3.wtns") >
        0);  // the bad GPU took its share
}

TEST_CASE_FIXTURE(det_fixture,
                  "a lost device stops taking partitions; the fallback proves them at once") {
  auto rc = small_runtime();
  rc.fallback = world->backend("cpu");
  world->lost_kinds.insert("cuda");
  auto r = prove_job(rc, {world->backend("cuda")},
                     make_job("l", {"l0.wtns", "l1.wtns", "l2.wtns", "l3.wtns"}));

  CHECK(r.state == job_state::done);
  auto ran = world->events_of("ran");
  for (const auto& p : r.partitions) {
    CHECK(p.state == partition_state::done);
    CHECK(p.spans.backend == "cpu:fallback");
    const std::string w = "l" + std::to_string(p.index) + ".wtns";
    CHECK(count(ran, "cpu " + w) == 1);
    // No retry on the lost device itself: at most the attempt that found it lost.
    CHECK(count(ran, "cuda " + w) <= 1);
    CHECK(p.retries == static_cast<uint32_t>(count(ran, "cuda " + w)));
  }
  // Once lost, the device takes nothing more: with its look-ahead of one,
  // at most the partition proving and the one held reached it.
  long on_cuda = 0;
  for (const auto& e : ran) on_cuda += e.rfind("cuda ", 0) == 0;
  CHECK(on_cuda >= 1);
  CHECK(on_cuda <= 2);
}

TEST_CASE_FIXTURE(det_fixture, "a lost device without another backend fails its jobs, not hangs") {
  world->lost_kinds.insert("cuda");
  auto r = prove_job(small_runtime(), {world->backend("cuda")},
                     make_job("n", {"n0.wtns", "n1.wtns"}));
  CHECK(r.state == job_state::failed);
  // n0 met the loss (a counted retry, with nowhere left to go); n1, if the
  // worker already held it, moved without one. Both fail naming the loss.
  REQUIRE(r.partitions.size() == 2);
  CHECK(r.partitions[0].retries == 1);
  for (const auto& p : r.partitions) {
    CHECK(p.state == partition_state::failed);
    CHECK(p.retries <= 1);
    CHECK(p.error.message.find("no GPU is left to prove it (gpu 0: ") != std::string::npos);
    CHECK(p.error.message.find("cudaErrorIllegalAddress") != std::string::npos);
  }
  CHECK(memory().reserved == 0);
}
