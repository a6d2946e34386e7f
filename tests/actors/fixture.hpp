// Deterministic actor-system fixture: CAF's `testing` scheduler policy (no
// worker threads; sched.run() runs every actor until nothing is left to do),
// the whole pipeline undetached on a fake world, and a hidden scoped_actor
// that sends requests and collects the replies without blocking.
#pragma once

#include <doctest/doctest.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/after.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <caf/scoped_actor.hpp>

#include <chrono>
#include <optional>

#include "actors/runtime.hpp"
#include "tests/actors/fakes.hpp"
#include "tests/support/actor_system.hpp"
#include "tests/support/jobs.hpp"

namespace proofline::test {

struct det_fixture {
  caf::actor_system_config cfg;
  caf::actor_system sys;
  caf::scoped_actor self;
  caf::scheduler::test_coordinator& sched;
  std::shared_ptr<fake_world> world = std::make_shared<fake_world>();
  std::optional<runtime> rt;

  det_fixture()
      : sys(deterministic(cfg)),
        self(sys, true),
        sched(dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler())) {}

  ~det_fixture() {
    if (rt) rt->shutdown();
    sched.run();
    rt.reset();
    sched.run();
  }

  /// Starts the pipeline undetached with one fake backend, or with
  /// `devices` fake devices (world->backend(d)).
  void start(runtime_config rc, int devices = 0) {
    std::vector<std::shared_ptr<gpu::backend>> backends;
    if (devices == 0) backends.push_back(world->backend());
    for (int d = 0; d < devices; ++d) backends.push_back(world->backend(d));
    start(std::move(rc), std::move(backends));
  }

  /// Starts the pipeline undetached on these backends (rc.fallback too, if set).
  void start(runtime_config rc, std::vector<std::shared_ptr<gpu::backend>> backends) {
    rc.detach = false;
    if (!rc.on_grant) rc.on_grant = world->grant_logger(rc.memory_budget);
    if (!rc.identify) rc.identify = world->identify();
    rt.emplace(sys, rc, world->ops(), std::move(backends));
    sched.run();
  }

  /// Takes one message of type T from self's mailbox; fails if there is none.
  template <class T>
  T fetch() {
    T result{};
    bool got = false;
    self->receive(
        [&](T& x) {
          result = std::move(x);
          got = true;
        },
        caf::after(std::chrono::seconds(0)) >> [] {});
    REQUIRE(got);
    return result;
  }

  /// Submits a job and returns its sequence number (runs the scheduler).
  uint64_t submit(const job_spec& spec) {
    self->send(rt->registry(), submit_atom::value, spec);
    sched.run();
    return fetch<uint64_t>();
  }

  /// Submits every job before any actor runs, so all of them wait for the
  /// same key load and reach the memory manager together.
  std::vector<uint64_t> submit_all(const std::vector<job_spec>& specs) {
    for (const auto& s : specs) self->send(rt->registry(), submit_atom::value, s);
    sched.run();
    std::vector<uint64_t> seqs;
    for (size_t i = 0; i < specs.size(); ++i) seqs.push_back(fetch<uint64_t>());
    return seqs;
  }

  /// The report of a finished job (runs the scheduler first).
  job_report report(uint64_t seq) {
    sched.run();
    self->send(rt->registry(), await_atom::value, seq);
    sched.run();
    return fetch<job_report>();
  }

  /// Starts the pipeline on `backends`, submits `spec` and returns the
  /// report of the finished job.
  job_report prove_job(runtime_config rc, std::vector<std::shared_ptr<gpu::backend>> backends,
                       const job_spec& spec) {
    start(std::move(rc), std::move(backends));
    return report(submit(spec));
  }

  memory_stats memory() {
    self->send(rt->memory(), stats_atom::value);
    sched.run();
    return fetch<memory_stats>();
  }
};

}  // namespace proofline::test
