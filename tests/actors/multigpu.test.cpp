// Several devices of one host, on fake devices under CAF's deterministic
// scheduler: partitions spread over the devices in priority order, an idle
// device is served while work it can do is queued, a device that fails (its
// GPU worker dies, or its backend starts throwing) gives its partitions to
// the others (what it held without a retry, what failed on it as counted,
// placed retries), and a key that fits only some devices is proved by those and
// prepared on each of them first.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <set>

#include "actors/detail/scheduler_state.hpp"
#include "actors/detail/retry_policy.hpp"
#include "actors/scheduler.hpp"
#include "tests/actors/fixture.hpp"
#include "tests/support/partitions.hpp"

using namespace proofline;
using namespace proofline::test;
using strings = std::vector<std::string>;

namespace {

/// Room for `partitions` fake partitions at once; 2 synthesizers, 1 finalizer.
runtime_config room_for(uint64_t partitions) {
  runtime_config rc;
  rc.memory_budget = partitions * fake_partition_bytes;
  rc.synthesizers = 2;
  rc.finalizers = 1;
  return rc;
}

/// Witness names w<job>_<i> for `n` partitions.
strings witnesses(const std::string& job, int n) {
  strings out;
  for (int i = 0; i < n; ++i) out.push_back(job + std::to_string(i) + ".wtns");
  return out;
}

/// Every witness of `specs`, each proved exactly once over all devices.
void check_each_proved_once(const fake_world& world, const std::vector<job_spec>& specs) {
  for (const auto& s : specs)
    for (const auto& w : s.witnesses) {
      INFO(w);
      CHECK(world.proofs_of(w) == 1);
    }
}

/// Every "prove d key w" comes after a "prepare d key".
void check_prepared_before_proved(const fake_world& world) {
  std::set<std::string> prepared;
  for (const auto& e : world.device_events) {
    std::istringstream in(e);
    std::string what, device, key;
    in >> what >> device >> key;
    if (what == "prepare") prepared.insert(device + " " + key);
    if (what == "prove") {
      INFO(e);
      CHECK(prepared.count(device + " " + key) == 1);
    }
  }
}

/// Successful proofs per device.
std::map<int, int> proofs_per_device(const fake_world& world) {
  std::map<int, int> out;
  for (const auto& e : world.device_events)
    if (e.compare(0, 6, "prove ") == 0) ++out[std::stoi(e.substr(6))];
  return out;
}

}  // namespace

TEST_CASE_FIXTURE(det_fixture, "partitions spread over three devices in priority order") {
  start(room_for(16), 3);
  std::vector<job_spec> specs{
      make_job("a", witnesses("a", 4), priority::normal),
      make_job("b", witnesses("b", 3), priority::high),
      make_job("c", witnesses("c", 2), priority::low),
      make_job("d", witnesses("d", 2), priority::critical),
      make_job("e", witnesses("e", 3), priority::normal),
  };
  auto seqs = submit_all(specs);
  for (auto seq : seqs) CHECK(report(seq).state == job_state::done);

  // Handed out (and, on synchronous fakes, started) in the global order.
  const strings expected{"d0.wtns", "d1.wtns", "b0.wtns", "b1.wtns", "b2.wtns",
                         "a0.wtns", "a1.wtns", "a2.wtns", "a3.wtns", "e0.wtns",
                         "e1.wtns", "e2.wtns", "c0.wtns", "c1.wtns"};
  CHECK(world->events_of("prove") == expected);
  check_each_proved_once(*world, specs);
  check_prepared_before_proved(*world);
  // Every device took a share: 14 partitions over 3 devices, 4 to 5 each.
  auto per = proofs_per_device(*world);
  for (int d = 0; d < 3; ++d) {
    INFO("device " << d);
    CHECK(per[d] >= 4);
    CHECK(per[d] <= 5);
  }
  auto m = memory();
  CHECK(m.reserved == 0);
  CHECK(m.reservations == 0);
}

TEST_CASE_FIXTURE(det_fixture, "every device prepares a key before it proves with it") {
  start(room_for(8), 2);
  auto seqs = submit_all({make_job("x", witnesses("x", 3)),
                          make_job("y", witnesses("y", 3), priority::normal, "other.zkey")});
  for (auto seq : seqs) CHECK(report(seq).state == job_state::done);
  check_prepared_before_proved(*world);
  strings prepares;
  for (const auto& e : world->device_events)
    if (e.compare(0, 8, "prepare ") == 0) prepares.push_back(e);
  std::sort(prepares.begin(), prepares.end());
  CHECK(prepares == strings{"prepare 0 circuit.zkey", "prepare 0 other.zkey",
                            "prepare 1 circuit.zkey", "prepare 1 other.zkey"});
}

TEST_CASE_FIXTURE(det_fixture,
                  "a device whose backend starts throwing gives its partitions to the others") {
  start(room_for(12), 3);
  world->fails_after[1] = 1;  // device 1 proves one partition, then every call throws
  std::vector<job_spec> specs{make_job("a", witnesses("a", 6)),
                              make_job("b", witnesses("b", 6), priority::high)};
  auto seqs = submit_all(specs);
  uint32_t retries = 0;
  for (auto seq : seqs) {
    auto r = report(seq);
    CHECK(r.state == job_state::done);
    for (const auto& p : r.partitions) {
      CHECK(p.retries <= max_placed_retries);
      retries += p.retries;
    }
  }
  check_each_proved_once(*world, specs);
  auto per = proofs_per_device(*world);
  CHECK(per[1] == 1);
  CHECK(per[0] + per[2] == 11);
  // Each failure on device 1 was one counted retry; what it held and had not
  // tried when it was taken out moved without one.
  CHECK(retries == static_cast<uint32_t>(world->prove_calls[1] - per[1]));
  // Taken out of service after device_failure_limit failures in a row; the
  // partition it already held as look-ahead may fail there once more.
  CHECK(world->prove_calls[1] >= 1 + static_cast<int>(device_failure_limit));
  CHECK(world->prove_calls[1] <= 2 + static_cast<int>(device_failure_limit));
  auto m = memory();
  CHECK(m.reserved == 0);
  CHECK(m.reservations == 0);
}

TEST_CASE_FIXTURE(det_fixture, "a GPU worker that dies has its partitions proved by the others") {
  start(room_for(12), 3);
  std::vector<job_spec> specs{make_job("a", witnesses("a", 8)),
                              make_job("b", witnesses("b", 4), priority::low)};
  for (const auto& s : specs) self->send(rt->registry(), submit_atom::value, s);
  // Run until device 2 has proved a partition and holds another one.
  auto& st =
      static_cast<scheduler_state::pointer>(caf::actor_cast<caf::abstract_actor*>(rt->scheduler()))->state;
  auto holds = [&] {  // partitions device 2 holds and has not proved
    unsigned n = 0;
    for (const auto& [addr, w] : st.workers)
      if (w.device == 2)
        for (const auto& [order, p] : w.in_flight) n += world->proofs_of(p.part.witness()) == 0;
    return n;
  };
  for (int steps = 0; steps < 10000 && (proofs_per_device(*world)[2] == 0 || holds() == 0);
       ++steps)
    sched.run_once();
  REQUIRE(proofs_per_device(*world)[2] == 1);
  REQUIRE(holds() >= 1);
  caf::anon_send_exit(rt->workers()[2], caf::exit_reason::kill);
  sched.run();
  std::vector<uint64_t> seqs{fetch<uint64_t>(), fetch<uint64_t>()};
  for (auto seq : seqs) {
    auto r = report(seq);
    CHECK(r.state == job_state::done);
    for (const auto& p : r.partitions) CHECK(p.retries == 0);  // moved, not retried
  }
  check_each_proved_once(*world, specs);
  CHECK(proofs_per_device(*world)[2] == 1);  // nothing after it died
  auto m = memory();
  CHECK(m.reserved == 0);
  CHECK(m.reservations == 0);
}

TEST_CASE_FIXTURE(det_fixture, "with every device lost a job fails instead of waiting forever") {
  start(room_for(4), 1);
  caf::anon_send_exit(rt->workers()[0], caf::exit_reason::kill);
  sched.run();
  auto r = report(submit(make_job("x", witnesses("x", 2))));
  CHECK(r.state == job_state::failed);
  CHECK(r.error.file == "x0.wtns");
  CHECK(r.error.message.find("x0.wtns: no GPU is left to prove it (gpu 0: its GPU worker failed") ==
        0);
  CHECK(world->prove_calls[0] == 0);
  auto m = memory();
  CHECK(m.reserved == 0);
  CHECK(m.reservations == 0);
}

TEST_CASE_FIXTURE(det_fixture,
                  "a key that fits some devices only is proved on those that hold it") {
  start(room_for(12), 3);
  world->refuses_key[1] = {"big.zkey"};  // device 1 has no room for big.zkey
  std::vector<job_spec> specs{make_job("k", witnesses("k", 6), priority::normal, "big.zkey"),
                              make_job("s", witnesses("s", 6), priority::normal)};
  auto seqs = submit_all(specs);
  for (auto seq : seqs) {
    auto r = report(seq);
    CHECK(r.state == job_state::done);
    for (const auto& p : r.partitions) CHECK(p.retries == 0);
  }
  check_each_proved_once(*world, specs);
  check_prepared_before_proved(*world);
  for (const auto& w : specs[0].witnesses) CHECK(world->devices_of(w).count(1) == 0);
  auto per = proofs_per_device(*world);
  CHECK(per[1] >= 1);                    // device 1 still proves the key it holds
  CHECK(world->prove_calls[1] == per[1]);  // and never tried the other one
}

TEST_CASE_FIXTURE(det_fixture, "a key that fits no device fails its job naming every device") {
  start(room_for(8), 2);
  world->refuses_key[0] = {"big.zkey"};
  world->refuses_key[1] = {"big.zkey"};
  auto seqs = submit_all({make_job("k", witnesses("k", 2), priority::high, "big.zkey"),
                          make_job("s", witnesses("s", 2))});
  auto k = report(seqs[0]);
  CHECK(k.state == job_state::failed);
  CHECK(k.error.file == "big.zkey");
  CHECK(k.error.message ==
        "big.zkey: no GPU can hold this key (gpu 0: device memory: key big.zkey does not fit on "
        "fake device 0; gpu 1: device memory: key big.zkey does not fit on fake device 1)");
  CHECK(report(seqs[1]).state == job_state::done);
  CHECK(world->prove_calls[0] + world->prove_calls[1] == 2);  // s0 and s1 only
  auto m = memory();
  CHECK(m.reserved == 0);
  CHECK(m.reservations == 0);
}

// ---------------------------------------------------------------- the scheduler alone

namespace {

/// The scheduler and three workers (hidden scoped actors) on devices 0, 1, 2.
struct devices_fixture {
  caf::actor_system_config cfg;
  caf::actor_system sys;
  caf::scheduler::test_coordinator& sched;
  scheduler_actor s;
  std::vector<std::unique_ptr<caf::scoped_actor>> w;

  devices_fixture()
      : sys(deterministic(cfg)),
        sched(dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler())) {
    s = proofline::spawn_scheduler(sys, proofline::scheduler_config{});
    for (int d = 0; d < 3; ++d) w.push_back(std::make_unique<caf::scoped_actor>(sys, true));
    sched.run();
  }
  ~devices_fixture() {
    caf::anon_send_exit(s, caf::exit_reason::user_shutdown);
    sched.run();
  }
  void pull(int d) {
    (*w[d])->send(s, partition_pull_atom::value, int32_t(d));
    sched.run();
  }
  void prepared(const zk::groth16::key_ptr& key, int d, bool ok = true) {
    (*w[d])->send(s, residency_atom::value, key, int32_t(d), ok, std::string(ok ? "" : "no room"));
    sched.run();
  }
  void ready(const synthesized_partition& p) {
    caf::anon_send(s, ready_atom::value, p);
    sched.run();
  }
  /// What worker d received since the last call.
  strings got(int d) {
    strings out;
    bool more = true;
    while (more)
      (*w[d])->receive([&](synthesized_partition& p) { out.push_back(p.part.witness()); },
                       caf::after(std::chrono::seconds(0)) >> [&] { more = false; });
    return out;
  }
  scheduler_state::pointer state_holder() {
    return static_cast<scheduler_state::pointer>(caf::actor_cast<caf::abstract_actor*>(s));
  }
};

}  // namespace

TEST_CASE_FIXTURE(devices_fixture, "an idle device is served before a busy device's look-ahead") {
  auto key = fake_key("k.zkey");
  for (int d = 0; d < 3; ++d) prepared(key, d);
  pull(0);
  ready(ready_partition(key, 1, 0, 1));
  CHECK(got(0) == strings{"w1_0"});  // device 0 proves it
  pull(0);                          // ... and asks ahead for its next one
  pull(1);                          // device 1 is idle
  ready(ready_partition(key, 1, 1, 2));
  CHECK(got(0).empty());
  CHECK(got(1) == strings{"w1_1"});
  pull(2);
  ready(ready_partition(key, 1, 2, 3));
  CHECK(got(2) == strings{"w1_2"});  // idle device 2 before device 0's look-ahead
  ready(ready_partition(key, 1, 3, 4));
  CHECK(got(0) == strings{"w1_3"});  // then the look-ahead
}

TEST_CASE_FIXTURE(devices_fixture,
                  "a device takes the next partition of a key it holds past one it cannot take") {
  auto big = fake_key("big.zkey");
  auto small = fake_key("small.zkey");
  prepared(big, 0);
  prepared(small, 0);
  prepared(small, 1);
  prepared(big, 1, false);  // device 1 cannot hold big.zkey
  ready(ready_partition(big, 1, 0, 1, priority::high));
  ready(ready_partition(small, 2, 0, 2));
  pull(1);
  CHECK(got(1) == strings{"w2_0"});
  pull(0);
  CHECK(got(0) == strings{"w1_0"});
}

TEST_CASE_FIXTURE(devices_fixture, "a key's partitions wait until a device has prepared it") {
  auto key = fake_key("k.zkey");
  pull(0);
  ready(ready_partition(key, 1, 0, 1));
  CHECK(got(0).empty());
  prepared(key, 0);
  CHECK(got(0) == strings{"w1_0"});
}

TEST_CASE_FIXTURE(devices_fixture,
                  "no parked pull waits while a partition its device can prove is ready") {
  // Random events on three devices and three keys; after each, no device
  // with a parked pull may be able to prove a partition that is free to go.
  std::vector<zk::groth16::key_ptr> keys{fake_key("a.zkey"), fake_key("b.zkey"),
                                         fake_key("c.zkey")};
  std::mt19937 rng(16);
  uint64_t ticket = 0;
  std::vector<std::vector<synthesized_partition>> held(3);
  size_t handed = 0, checks = 0;
  for (int step = 0; step < 400; ++step) {
    switch (rng() % 4) {
      case 0: {  // a partition is ready
        const auto& key = keys[rng() % keys.size()];
        ++ticket;
        ready(ready_partition(key, ticket, 0, ticket, static_cast<priority>(rng() % 4)));
        break;
      }
      case 1:
        pull(static_cast<int>(rng() % 3));
        break;
      case 2: {  // a device prepares a key, or cannot hold it
        int d = static_cast<int>(rng() % 3);
        prepared(keys[rng() % keys.size()], d, rng() % 5 != 0);
        break;
      }
      case 3: {  // a worker finishes what it holds
        int d = static_cast<int>(rng() % 3);
        for (const auto& p : held[d])
          (*w[d])->send(s, worker_done_atom::value, p.part.job->seq, p.part.index);
        held[d].clear();
        sched.run();
        break;
      }
    }
    for (int d = 0; d < 3; ++d) {
      bool more = true;
      while (more)
        (*w[d])->receive([&](synthesized_partition& p) { held[d].push_back(p); },
                         caf::after(std::chrono::seconds(0)) >> [&] { more = false; });
    }
    auto self = state_holder();
    auto& st = self->state;
    for (const auto& q : st.pulls)
      for (const auto& entry : st.ready) {
        // A named reference, not a structured binding: INFO captures it in a
        // lambda, which C++17 allows only for variables (clang rejects it).
        const auto& p = entry.second;
        if (p.part.ticket < st.next_ticket ||
            (st.workers.at(q.worker).in_flight.empty() && st.behind_own_job_only(p))) {
          ++checks;
          INFO("step " << step << ": device " << q.device << " waits while "
                       << p.part.witness() << " is ready");
          CHECK_FALSE(st.can_prove(p, q.device));
        }
      }
  }
  handed = state_holder()->state.handed;
  CHECK(handed > 50);   // the random walk did hand out work
  CHECK(checks > 100);  // and often had pulls and partitions both waiting
}

TEST_CASE_FIXTURE(det_fixture, "a key that fits no GPU is proved by the CPU fallback, not retried") {
  auto rc = room_for(8);
  rc.fallback = world->backend("cpu");
  world->refuses_key[0] = {"big.zkey"};
  world->refuses_key[1] = {"big.zkey"};
  start(rc, {world->backend(0), world->backend(1)});
  auto seqs = submit_all({make_job("k", witnesses("k", 2), priority::high, "big.zkey"),
                          make_job("s", witnesses("s", 2))});
  auto k = report(seqs[0]);
  CHECK(k.state == job_state::done);
  for (const auto& p : k.partitions) {
    CHECK(p.retries == 0);  // it did not fail anywhere: the last resort took it
    CHECK(p.spans.backend == "cpu:fallback");
  }
  auto s = report(seqs[1]);
  CHECK(s.state == job_state::done);
  for (const auto& p : s.partitions) CHECK(p.spans.backend != "cpu:fallback");
  CHECK(world->prove_calls[0] + world->prove_calls[1] == 2);  // s0 and s1 only
  auto m = memory();
  CHECK(m.reserved == 0);
  CHECK(m.reservations == 0);
}
