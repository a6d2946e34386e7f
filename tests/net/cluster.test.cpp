// Remote control and clusters at the actor level, under CAF's deterministic
// scheduler with the fake world of tests/actors: the registry's unique live
// ids, cancel and watch; the cluster dispatcher's leases (order, a result
// accepted once, a lost node's partitions queued again, cancel, a node's
// proofs that fail the check never written and proved elsewhere, a node
// taken out of service); the control actor before and after it is wired;
// the path policy.
#include <doctest/doctest.h>

#include <caf/actor_cast.hpp>
#include <caf/after.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "actors/cluster_dispatcher.hpp"
#include "actors/control.hpp"
#include "tests/actors/fixture.hpp"

namespace proofline::test {

namespace {

namespace fs = std::filesystem;

/// A node as the dispatcher sees it: assigns and cancels go to the test's
/// inbox; credit and results the test hands it go to the dispatcher, so
/// their sender is the node.
using fake_node_actor = node_actor::extend<caf::reacts_to<credit_atom, uint64_t, uint32_t>,
                                           caf::reacts_to<result_atom, partition_result>>;

struct fake_node_state {
  cluster_actor dispatcher;
  caf::actor inbox;
};

fake_node_actor::behavior_type fake_node(fake_node_actor::stateful_pointer<fake_node_state> self,
                                         cluster_actor dispatcher, caf::actor inbox) {
  self->state.dispatcher = dispatcher;
  self->state.inbox = inbox;
  return {
      [=](assign_atom a, const remote_partition& rp) { caf::anon_send(self->state.inbox, a, rp); },
      [=](cancel_atom c, uint64_t seq) { caf::anon_send(self->state.inbox, c, seq); },
      [=](credit_atom c, uint64_t id, uint32_t n) { self->send(self->state.dispatcher, c, id, n); },
      [=](result_atom r, const partition_result& res) {
        self->send(self->state.dispatcher, r, res);
      },
  };
}

/// Submits `sub` to control; the text of its refusal, empty if accepted.
std::string refusal_of(det_fixture& f, const control_admin_actor& ctl, const job_submission& sub) {
  f.self->send(ctl, submit_atom::value, sub);
  f.sched.run();
  std::string refusal;
  f.self->receive([](std::vector<submitted_job>&) {},
                  [&](caf::error& e) { refusal = error_text(f.sys, e); });
  return refusal;
}

struct cluster_fixture : det_fixture {
  cluster_actor dispatcher;
  std::vector<fake_node_actor> nodes;

  ~cluster_fixture() {
    for (auto& n : nodes) caf::anon_send_exit(n, caf::exit_reason::user_shutdown);
    if (dispatcher) caf::anon_send_exit(dispatcher, caf::exit_reason::user_shutdown);
    sched.run();
  }

  /// A runtime that proves nothing itself, and a dispatcher over it whose
  /// proof check fails every proof text containing "corrupt".
  void start_coordinator(uint32_t max_bad_proofs = 3) {
    runtime_config rc;
    rc.memory_budget = 1 << 20;
    rc.synthesizers = 0;
    start(rc);
    cluster_config kc;
    kc.memory = rt->memory();
    kc.scheduler = rt->scheduler();
    kc.registry = rt->registry();
    kc.write_file = world->ops().write_file;
    kc.read_file = [](const std::string&) { return std::vector<uint8_t>{1, 2, 3}; };
    kc.spool_dir = "/spool";
    kc.check_proof = [](const zk::groth16::key_ptr&, const std::string& proof,
                        const std::string&, const std::string& proof_name, const std::string&) {
      return proof.find("corrupt") != std::string::npos
                 ? proof_name + ": the pairing equation does not hold"
                 : std::string();
    };
    kc.detach = false;
    kc.max_bad_proofs = max_bad_proofs;
    dispatcher = spawn_cluster_dispatcher(sys, kc);
    sched.run();
  }

  /// A fake node that has joined; returns its handle and sets `id`.
  fake_node_actor join(uint64_t& id, const std::string& name) {
    auto node = sys.spawn(fake_node, dispatcher, caf::actor_cast<caf::actor>(self));
    nodes.push_back(node);
    node_info info;
    info.name = name;
    info.slots = 4;
    self->send(dispatcher, join_atom::value, info, caf::actor_cast<node_actor>(node));
    sched.run();
    id = fetch<uint64_t>();
    return node;
  }

  /// Every assign waiting in the inbox, in arrival order.
  std::vector<remote_partition> assigns() {
    std::vector<remote_partition> out;
    for (bool more = true; more;) {
      more = false;
      self->receive([&](assign_atom, remote_partition& rp) { out.push_back(rp), more = true; },
                    caf::after(std::chrono::seconds(0)) >> [] {});
    }
    return out;
  }

  partition_result result_for(uint64_t node, const remote_partition& rp) {
    partition_result r;
    r.node = node;
    r.lease = rp.lease;
    r.ok = true;
    r.proof_json = "proof " + rp.job_id + " " + std::to_string(rp.index);
    r.public_json = "public " + std::to_string(rp.index);
    return r;
  }

  partition_result corrupt_for(uint64_t node, const remote_partition& rp) {
    auto r = result_for(node, rp);
    r.proof_json = "corrupt " + r.proof_json;
    return r;
  }

  node_metrics node_named(const std::string& name) {
    self->send(dispatcher, metrics_atom::value);
    sched.run();
    for (auto& n : fetch<std::vector<node_metrics>>())
      if (n.info.name == name) return n;
    FAIL("no node " << name);
    return {};
  }

  size_t writes_of(const std::string& path) {
    auto w = world->events_of("write");
    return static_cast<size_t>(std::count(w.begin(), w.end(), path));
  }
};

std::vector<uint32_t> indices(const std::vector<remote_partition>& rps) {
  std::vector<uint32_t> out;
  for (const auto& rp : rps) out.push_back(rp.index);
  return out;
}

}  // namespace

TEST_CASE_FIXTURE(det_fixture, "a second live job with an id in use is refused until the first completes") {
  runtime_config rc;
  rc.memory_budget = 1 << 20;
  start(rc);
  // Both arrive before the first can finish: the second is refused.
  self->send(rt->registry(), submit_atom::value, make_job("a", {"w0.wtns", "w1.wtns"}));
  self->send(rt->registry(), submit_atom::value, make_job("a", {"w2.wtns"}));
  sched.run();
  auto first = fetch<uint64_t>();
  std::string refusal;
  self->receive([&](uint64_t) {},
                [&](caf::error& e) { refusal = error_text(sys, e); });
  CHECK(refusal.find("job \"a\": the id is already used by a live job (#" +
                     std::to_string(first)) == 0);
  CHECK(report(first).state == job_state::done);
  // Completed: the id is free again.
  CHECK(submit(make_job("a", {"w2.wtns"})) > first);
}

TEST_CASE_FIXTURE(det_fixture, "a submission of several jobs is accepted whole or not at all") {
  runtime_config rc;
  rc.memory_budget = 1 << 20;
  start(rc);
  std::vector<job_spec> twice{make_job("x", {"w0.wtns"}), make_job("x", {"w1.wtns"})};
  self->send(rt->registry(), submit_atom::value, twice);
  sched.run();
  std::string refusal;
  self->receive([&](std::vector<uint64_t>&) {}, [&](caf::error& e) { refusal = error_text(sys, e); });
  CHECK(refusal == "job \"x\": the id is given twice");
  std::vector<job_spec> pair{make_job("y", {"w0.wtns"}), make_job("z", {"w1.wtns"})};
  self->send(rt->registry(), submit_atom::value, pair);
  sched.run();
  auto seqs = fetch<std::vector<uint64_t>>();
  REQUIRE(seqs.size() == 2);
  CHECK(seqs[1] == seqs[0] + 1);  // the refused submission took no sequence number
  CHECK(report(seqs[0]).state == job_state::done);
  CHECK(report(seqs[1]).state == job_state::done);
}

TEST_CASE_FIXTURE(det_fixture, "cancel mid-way drops the rest of a job, releases its memory and lets others finish") {
  runtime_config rc;
  rc.memory_budget = 1 << 20;
  start(rc);
  std::vector<std::string> ws;
  for (int i = 0; i < 8; ++i) ws.push_back("c" + std::to_string(i) + ".wtns");
  self->send(rt->registry(), submit_atom::value, make_job("big", ws));
  self->send(rt->registry(), submit_atom::value, make_job("after", {"a0.wtns"}, priority::low));
  // Step until the first partition of big is proved, then cancel.
  while (world->events_of("prove").empty() && sched.try_run_once()) {
  }
  auto big = fetch<uint64_t>();
  auto after = fetch<uint64_t>();
  self->send(rt->registry(), cancel_atom::value, big);
  sched.run();
  auto status = fetch<job_status>();
  CHECK(status.state == job_state::cancelled);
  auto r = report(big);
  CHECK(r.state == job_state::cancelled);
  size_t cancelled = 0;
  for (const auto& p : r.partitions) cancelled += p.state == partition_state::cancelled;
  CHECK(cancelled >= 6);  // at most the partitions already in flight got through
  size_t proofs = 0;
  for (const auto& w : world->events_of("write")) proofs += w.rfind("out/big/proof_", 0) == 0;
  CHECK(proofs == 8 - cancelled);  // nothing written for a cancelled partition
  CHECK(world->events_of("prove").size() < 8);  // the rest never reached the backend
  auto j = nlohmann::json::parse(world->file("out/big/result.json"));
  CHECK(j["status"] == "cancelled");
  CHECK(report(after).state == job_state::done);
  auto m = memory();
  CHECK(m.queued == 0);
  CHECK(m.reservations == 0);
  CHECK(m.reserved == m.keys + m.pool + m.fixed);
  // A finished job cannot be cancelled.
  self->send(rt->registry(), cancel_atom::value, big);
  sched.run();
  std::string refusal;
  self->receive([&](job_status&) {}, [&](caf::error& e) { refusal = error_text(sys, e); });
  CHECK(refusal == "job \"big\" already finished (cancelled)");
}

TEST_CASE_FIXTURE(det_fixture, "a watch answers at once with news, else when its job moves or its wait runs out") {
  runtime_config rc;
  rc.memory_budget = 1 << 20;
  rc.synthesizers = 0;  // nothing is proved: a job stays queued until cancelled
  start(rc);
  // Control parks watches; the registry tells it of news.
  auto ctl = spawn_control(sys, control_config{});
  self->send(ctl, attach_atom::value, control_wiring{rt->registry(), rt->memory(), {}, {}});
  sched.run();
  auto seq = submit(make_job("w", {"w0.wtns", "w1.wtns"}));
  // No news: the watch parks until its wait runs out, then answers empty.
  self->send(ctl, watch_atom::value, std::vector<watch_cursor>{{seq, 0}}, uint32_t{500});
  sched.run();
  bool early = false;
  self->receive([&](std::vector<job_progress>&) { early = true; },
                caf::after(std::chrono::seconds(0)) >> [] {});
  CHECK_FALSE(early);
  REQUIRE(sched.has_pending_timeout());
  sched.advance_time(std::chrono::milliseconds(500));
  sched.run();
  auto idle = fetch<std::vector<job_progress>>();
  REQUIRE(idle.size() == 1);
  CHECK(idle[0].finished.empty());
  CHECK(idle[0].seen == 0);
  CHECK_FALSE(idle[0].complete);
  CHECK(idle[0].status.state == job_state::queued);
  // A parked watch answers as soon as the job moves (here: cancelled).
  self->send(ctl, watch_atom::value, std::vector<watch_cursor>{{seq, 0}}, uint32_t{60000});
  sched.run();
  self->send(rt->registry(), cancel_atom::value, seq);
  sched.run();
  auto news = fetch<std::vector<job_progress>>();
  (void)fetch<job_status>();
  REQUIRE(news.size() == 1);
  CHECK(news[0].finished.size() == 2);
  CHECK(news[0].finished[0].state == partition_state::cancelled);
  CHECK(news[0].seen == 2);
  CHECK(news[0].complete);
  CHECK(news[0].report.state == job_state::cancelled);
  // A cursor past everything of a complete job still answers at once.
  self->send(ctl, watch_atom::value, std::vector<watch_cursor>{{seq, 2}}, uint32_t{60000});
  sched.run();
  auto again = fetch<std::vector<job_progress>>();
  CHECK(again.at(0).finished.empty());
  CHECK(again.at(0).complete);
  // An unknown job is an error.
  self->send(ctl, watch_atom::value, std::vector<watch_cursor>{{999, 0}}, uint32_t{10});
  sched.run();
  std::string refusal;
  self->receive([&](std::vector<job_progress>&) {}, [&](caf::error& e) { refusal = error_text(sys, e); });
  CHECK(refusal == "no job #999");
  caf::anon_send_exit(ctl, caf::exit_reason::user_shutdown);
}

TEST_CASE_FIXTURE(det_fixture, "a drain refuses submissions, starts nothing queued and answers once the partitions in flight are written") {
  runtime_config rc;
  rc.memory_budget = 1 << 20;
  start(rc);
  auto ctl = spawn_control(sys, control_config{});
  self->send(ctl, attach_atom::value, control_wiring{rt->registry(), rt->memory(), {}, {}});
  sched.run();
  self->send(rt->registry(), submit_atom::value,
             make_job("d", {"w0.wtns", "w1.wtns", "w2.wtns", "w3.wtns", "w4.wtns", "w5.wtns"}));
  // Step until the first partition is granted: the others wait for memory.
  while (world->events_of("grant").empty() && sched.try_run_once()) {
  }
  REQUIRE(world->events_of("grant").size() >= 1);
  self->send(ctl, drain_atom::value);
  self->send(rt->registry(), drain_atom::value);
  sched.run();
  auto seq = fetch<uint64_t>();
  auto left = fetch<std::vector<job_status>>();
  REQUIRE(left.size() == 1);  // what was left when the drain ended
  CHECK(left[0].seq == seq);
  CHECK(left[0].failed == 0);
  CHECK(left[0].done >= 1);
  CHECK(left[0].done < 6);
  // Every partition granted before the drain was proved and written; no
  // other one started, and nothing holds memory or waits for it.
  CHECK(world->events_of("grant").size() == left[0].done);
  size_t proofs = 0;
  for (const auto& w : world->events_of("write")) proofs += w.rfind("out/d/proof_", 0) == 0;
  CHECK(proofs == left[0].done);
  auto m = memory();
  CHECK(m.queued == 0);
  CHECK(m.reservations == 0);
  // Without a journal to keep it, the job left is cancelled, with the reason
  // in its result.json.
  const auto result = world->file("out/d/result.json");
  CHECK(result.find("\"status\": \"cancelled\"") != std::string::npos);
  CHECK(result.find("the daemon stopped before the job was proved") != std::string::npos);
  // A second drain answers at once, with nothing left; submissions are
  // refused from now on.
  self->send(rt->registry(), drain_atom::value);
  sched.run();
  CHECK(fetch<std::vector<job_status>>().empty());
  job_submission sub;
  sub.name = "/jobs.json";
  CHECK(refusal_of(*this, ctl, sub) == server_stopping_message);
  caf::anon_send_exit(ctl, caf::exit_reason::user_shutdown);
}

TEST_CASE_FIXTURE(cluster_fixture, "a node's leases follow the queue's order and each result is written once") {
  start_coordinator();
  uint64_t id = 0;
  auto node = join(id, "n1");
  CHECK(id == 1);
  auto seq = submit(make_job("j", {"w0.wtns", "w1.wtns", "w2.wtns"}));
  self->send(node, credit_atom::value, id, uint32_t{2});
  sched.run();
  auto first = assigns();
  REQUIRE(indices(first) == std::vector<uint32_t>{0, 1});
  CHECK(first[0].zkey == "circuit.zkey");
  CHECK(first[0].witness == "w0.wtns");
  CHECK(first[0].job_seq == seq);
  // A result, then the same result again: written once.
  self->send(node, result_atom::value, result_for(id, first[0]));
  self->send(node, result_atom::value, result_for(id, first[0]));
  sched.run();
  CHECK(world->file("out/j/proof_0.json") == "proof j 0");
  CHECK(world->file("out/j/public_0.json") == "public 0");
  CHECK(writes_of("out/j/proof_0.json") == 1);
  // More credit, the last partition; the job completes from results alone.
  self->send(node, credit_atom::value, id, uint32_t{1});
  sched.run();
  auto last = assigns();
  REQUIRE(indices(last) == std::vector<uint32_t>{2});
  self->send(node, result_atom::value, result_for(id, first[1]));
  self->send(node, result_atom::value, result_for(id, last[0]));
  auto r = report(seq);
  CHECK(r.state == job_state::done);
  CHECK(world->events_of("prove").empty());  // nothing was proved on the coordinator
  // Credit sent by someone else than the node is ignored.
  self->send(dispatcher, credit_atom::value, id, uint32_t{5});
  sched.run();
  self->send(dispatcher, metrics_atom::value);
  sched.run();
  auto nodes = fetch<std::vector<node_metrics>>();
  REQUIRE(nodes.size() == 1);
  CHECK(nodes[0].proved == 3);
  CHECK(nodes[0].credit == 0);
  CHECK(nodes[0].leased == 0);
}

TEST_CASE_FIXTURE(cluster_fixture, "a lost node's partitions go to another node and its late results are ignored") {
  start_coordinator();
  uint64_t a = 0, b = 0;
  auto node_a = join(a, "a");
  auto seq = submit(make_job("j", {"w0.wtns", "w1.wtns", "w2.wtns"}));
  self->send(node_a, credit_atom::value, a, uint32_t{2});
  sched.run();
  auto held = assigns();
  REQUIRE(indices(held) == std::vector<uint32_t>{0, 1});
  // Node a finishes partition 0, then its connection drops.
  self->send(node_a, result_atom::value, result_for(a, held[0]));
  sched.run();
  caf::anon_send_exit(node_a, caf::exit_reason::kill);
  sched.run();
  auto node_b = join(b, "b");
  self->send(node_b, credit_atom::value, b, uint32_t{4});
  sched.run();
  auto taken = assigns();
  CHECK(indices(taken) == std::vector<uint32_t>{1, 2});  // partition 1 again, in order
  // A's result for partition 1 arrives late (relayed): ignored.
  self->send(node_b, result_atom::value, result_for(a, held[1]));
  sched.run();
  CHECK(writes_of("out/j/proof_1.json") == 0);
  for (const auto& rp : taken) self->send(node_b, result_atom::value, result_for(b, rp));
  auto r = report(seq);
  CHECK(r.state == job_state::done);
  for (int i = 0; i < 3; ++i)
    CHECK(writes_of("out/j/proof_" + std::to_string(i) + ".json") == 1);
  self->send(dispatcher, metrics_atom::value);
  sched.run();
  auto nodes = fetch<std::vector<node_metrics>>();
  REQUIRE(nodes.size() == 1);
  CHECK(nodes[0].info.name == "b");
}

TEST_CASE_FIXTURE(cluster_fixture,
                  "a node's proof that fails the check is not written and its partition is "
                  "proved by another node") {
  start_coordinator();
  uint64_t a = 0, b = 0;
  auto node_a = join(a, "a");
  auto seq = submit(make_job("j", {"w0.wtns", "w1.wtns", "w2.wtns"}));
  self->send(node_a, credit_atom::value, a, uint32_t{2});
  sched.run();
  auto first = assigns();
  REQUIRE(indices(first) == std::vector<uint32_t>{0, 1});
  self->send(node_a, result_atom::value, corrupt_for(a, first[0]));
  sched.run();
  CHECK(writes_of("out/j/proof_0.json") == 0);
  CHECK(writes_of("out/j/public_0.json") == 0);
  auto m = node_named("a");
  CHECK(m.bad_proofs == 1);
  CHECK(m.proved == 0);
  CHECK_FALSE(m.out_of_service);
  // Partition 0 is queued again, first in order, but not for node a: a's
  // credit goes to partition 2 while 0 waits for another node.
  self->send(node_a, credit_atom::value, a, uint32_t{1});
  sched.run();
  auto third = assigns();
  REQUIRE(indices(third) == std::vector<uint32_t>{2});
  auto node_b = join(b, "b");
  self->send(node_b, credit_atom::value, b, uint32_t{2});
  sched.run();
  auto retried = assigns();
  REQUIRE(indices(retried) == std::vector<uint32_t>{0});
  self->send(node_b, result_atom::value, result_for(b, retried[0]));
  self->send(node_a, result_atom::value, result_for(a, first[1]));
  sched.run();
  for (const auto& rp : assigns()) CHECK(rp.index != 0);
  // A result for node a's ended lease of partition 0 is ignored.
  self->send(node_a, result_atom::value, result_for(a, first[0]));
  sched.run();
  CHECK(writes_of("out/j/proof_0.json") == 1);
  CHECK(world->file("out/j/proof_0.json") == "proof j 0");
  self->send(node_a, result_atom::value, result_for(a, third[0]));
  auto r = report(seq);
  CHECK(r.state == job_state::done);
  for (const auto& p : r.partitions) CHECK(p.verified);
  CHECK(r.partitions[0].retries == 1);
  for (int i = 0; i < 3; ++i)
    CHECK(writes_of("out/j/proof_" + std::to_string(i) + ".json") == 1);
  CHECK(node_named("b").proved == 1);
  CHECK(node_named("a").proved == 2);
}

TEST_CASE_FIXTURE(cluster_fixture,
                  "a node whose proofs keep failing is taken out of service and its leases go "
                  "elsewhere") {
  start_coordinator(/*max_bad_proofs=*/2);
  uint64_t a = 0, b = 0;
  auto node_a = join(a, "a");
  auto seq = submit(make_job("k", {"w0.wtns", "w1.wtns", "w2.wtns"}));
  self->send(node_a, credit_atom::value, a, uint32_t{3});
  sched.run();
  auto held = assigns();
  REQUIRE(held.size() == 3);
  self->send(node_a, result_atom::value, corrupt_for(a, held[0]));
  self->send(node_a, result_atom::value, corrupt_for(a, held[1]));
  sched.run();
  // Told to drop the job of the lease it still held.
  uint64_t told = 0;
  self->receive([&](cancel_atom, uint64_t s) { told = s; },
                caf::after(std::chrono::seconds(0)) >> [] {});
  CHECK(told == seq);
  auto m = node_named("a");
  CHECK(m.out_of_service);
  CHECK(m.bad_proofs == 2);
  CHECK(m.leased == 0);
  CHECK(m.requeued == 1);
  // Its credit is ignored from now on, and so is a result of its old lease.
  self->send(node_a, credit_atom::value, a, uint32_t{3});
  self->send(node_a, result_atom::value, result_for(a, held[2]));
  sched.run();
  CHECK(assigns().empty());
  CHECK(writes_of("out/k/proof_2.json") == 0);
  auto node_b = join(b, "b");
  self->send(node_b, credit_atom::value, b, uint32_t{4});
  sched.run();
  auto again = assigns();
  REQUIRE(indices(again) == std::vector<uint32_t>{0, 1, 2});
  for (const auto& rp : again) self->send(node_b, result_atom::value, result_for(b, rp));
  auto r = report(seq);
  CHECK(r.state == job_state::done);
  for (int i = 0; i < 3; ++i)
    CHECK(writes_of("out/k/proof_" + std::to_string(i) + ".json") == 1);
  CHECK(world->file("out/k/proof_0.json") == "proof k 0");
}

TEST_CASE_FIXTURE(cluster_fixture,
                  "a partition held for another node is queued again after the hold") {
  start_coordinator();
  uint64_t a = 0;
  auto node_a = join(a, "a");
  auto seq = submit(make_job("h", {"w0.wtns"}));
  self->send(node_a, credit_atom::value, a, uint32_t{1});
  sched.run();
  auto first = assigns();
  REQUIRE(first.size() == 1);
  self->send(node_a, result_atom::value, corrupt_for(a, first[0]));
  sched.run();
  self->send(node_a, credit_atom::value, a, uint32_t{1});
  sched.run();
  CHECK(assigns().empty());  // held: a is the only node with room
  CHECK(memory().queued == 0);
  // After the hold it is queued again (where local proving could take it),
  // pulled again and held again; nothing reaches node a.
  REQUIRE(sched.has_pending_timeout());
  sched.advance_time(std::chrono::milliseconds(1000));
  sched.run();
  CHECK(assigns().empty());
  CHECK(writes_of("out/h/proof.json") == 0);
  self->send(rt->registry(), status_atom::value, seq);
  sched.run();
  CHECK(fetch<job_status>().state != job_state::done);
}

TEST_CASE_FIXTURE(cluster_fixture, "cancelling a job revokes its leases and tells their node") {
  start_coordinator();
  uint64_t id = 0;
  auto node = join(id, "n");
  auto seq = submit(make_job("k", {"w0.wtns", "w1.wtns", "w2.wtns", "w3.wtns"}));
  self->send(node, credit_atom::value, id, uint32_t{2});
  sched.run();
  auto held = assigns();
  REQUIRE(held.size() == 2);
  self->send(rt->registry(), cancel_atom::value, seq);
  sched.run();
  (void)fetch<job_status>();
  self->send(dispatcher, cancel_atom::value, seq);
  sched.run();
  uint64_t told = 0;
  self->receive([&](cancel_atom, uint64_t s) { told = s; },
                caf::after(std::chrono::seconds(0)) >> [] {});
  CHECK(told == seq);
  self->send(node, result_atom::value, result_for(id, held[0]));
  sched.run();
  CHECK(writes_of("out/k/proof_0.json") == 0);
  CHECK(report(seq).state == job_state::cancelled);
  auto m = memory();
  CHECK(m.queued == 0);
  // The node's credit is not spent on the cancelled job's other partitions.
  self->send(node, credit_atom::value, id, uint32_t{2});
  sched.run();
  CHECK(assigns().empty());
}

TEST_CASE_FIXTURE(det_fixture, "control refuses requests until it is wired, then checks paths against its roots") {
  auto root = fs::temp_directory_path() / ("proofline-control-test-" + std::to_string(getpid()));
  fs::create_directories(root);
  control_config cc;
  cc.allowed_roots = {canonical_root(root.string())};
  cc.parse_jobs = [](const std::string& text, const std::string& name, const std::string& base) {
    if (text == "bad") throw std::runtime_error(name + ": invalid JSON");
    job_spec s = make_job("c", {base + "/" + text});
    s.zkey = base + "/circuit.zkey";
    s.out = base + "/out";
    return std::vector<job_spec>{s};
  };
  cc.spool_dir = (root / "spool").string();
  cc.write_file = world->ops().write_file;
  auto ctl = spawn_control(sys, cc);
  job_submission sub;
  sub.name = (root / "jobs.json").string();
  sub.text = "w.wtns";
  CHECK(refusal_of(*this, ctl, sub) == server_starting_message);
  std::string refusal;

  runtime_config rc;
  rc.memory_budget = 1 << 20;
  start(rc);
  self->send(ctl, attach_atom::value, control_wiring{rt->registry(), rt->memory(), {}, {}});
  sub.text = "bad";
  self->send(ctl, submit_atom::value, sub);
  sub.text = "../elsewhere/w.wtns";
  self->send(ctl, submit_atom::value, sub);
  sub.text = "w.wtns";
  self->send(ctl, submit_atom::value, sub);
  sched.run();
  std::vector<std::string> answers;
  for (int i = 0; i < 3; ++i)
    self->receive(
        [&](std::vector<submitted_job>& jobs) { answers.push_back("accepted " + jobs.at(0).id); },
        [&](caf::error& e) { answers.push_back(error_text(sys, e)); });
  REQUIRE(answers.size() == 3);
  CHECK(answers[0] == sub.name + ": invalid JSON");
  CHECK(answers[1] == "job \"c\": " + (root / "../elsewhere/w.wtns").string() +
                          ": outside the allowed roots (" + cc.allowed_roots[0] +
                          "); see serve --allow-root");
  CHECK(answers[2] == "accepted c");
  self->send(ctl, cancel_atom::value, std::string("nope"));
  sched.run();
  self->receive([&](job_status&) {}, [&](caf::error& e) { refusal = error_text(sys, e); });
  CHECK(refusal == "no job \"nope\" on this server");
  caf::anon_send_exit(ctl, caf::exit_reason::user_shutdown);
  fs::remove_all(root);
}

TEST_CASE("paths are under a root only after resolving dot-dot and symlinks") {
  auto base = fs::temp_directory_path() / ("proofline-roots-test-" + std::to_string(getpid()));
  fs::remove_all(base);
  fs::create_directories(base / "root/sub");
  fs::create_directories(base / "other");
  fs::create_symlink(base / "other", base / "root/escape");
  std::vector<std::string> roots{canonical_root((base / "root").string())};
  CHECK(under_roots((base / "root/sub/w.wtns").string(), roots));
  CHECK(under_roots((base / "root/new/dir/out").string(), roots));  // need not exist yet
  CHECK(under_roots((base / "root").string(), roots));
  CHECK_FALSE(under_roots((base / "root/../other/w.wtns").string(), roots));
  CHECK_FALSE(under_roots((base / "root/escape/w.wtns").string(), roots));
  CHECK_FALSE(under_roots((base / "rootless/w.wtns").string(), roots));  // a prefix is not a parent
  CHECK_FALSE(under_roots("", roots));
  CHECK_THROWS_AS(canonical_root((base / "missing").string()), std::runtime_error);
  fs::remove_all(base);
}

}  // namespace proofline::test
