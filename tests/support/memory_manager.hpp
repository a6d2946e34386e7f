// The memory manager actor alone under CAF's deterministic scheduler, with
// jobs and work orders to reserve: for the tests of the memory manager
// (tests/actors/memory_manager) and of the memory system around it
// (tests/actors/memory_system). A scoped actor plays the synthesizers and
// finalizers; sched.run() runs the manager until nothing is left to do.
#pragma once

#include <doctest/doctest.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/after.hpp>
#include <caf/exit_reason.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <caf/scoped_actor.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "actors/memory_manager.hpp"
#include "tests/support/actor_system.hpp"

namespace proofline::test {

/// Job `seq` ("j<seq>") of `partitions` witnesses "j<seq>_<i>" on key `zkey`.
inline job_ptr queued_job(uint64_t seq, size_t partitions, priority prio = priority::normal,
                          std::string zkey = "k.zkey") {
  auto j = std::make_shared<job_context>();
  j->seq = seq;
  j->spec.id = "j" + std::to_string(seq);
  j->spec.zkey = std::move(zkey);
  j->spec.prio = prio;
  for (size_t i = 0; i < partitions; ++i)
    j->spec.witnesses.push_back(j->spec.id + "_" + std::to_string(i));
  return j;
}

/// One work order per partition of `j`, each asking `bytes` of which `bulk`
/// may be released early, `pinnable` may come from the pinned pool and
/// `working` is the GPU worker's working memory.
inline std::vector<work_order> orders_of(const job_ptr& j, uint64_t bytes, uint64_t bulk = 0,
                                         uint64_t pinnable = 0, uint64_t working = 0) {
  std::vector<work_order> out;
  for (uint32_t i = 0; i < j->spec.witnesses.size(); ++i) {
    work_order o;
    o.part.job = j;
    o.part.index = i;
    o.bytes = bytes;
    o.bulk = bulk;
    o.pinnable = pinnable;
    o.working = working;
    out.push_back(o);
  }
  return out;
}

/// The memory manager spawned on `c`, the purges it reports collected.
struct mm_world {
  caf::actor_system_config cfg;
  caf::actor_system sys;
  caf::scoped_actor self;
  caf::scheduler::test_coordinator& sched;
  memory_manager_actor mm;
  std::vector<purge_event> purges;

  explicit mm_world(memory_manager_config c)
      : sys(deterministic(cfg)),
        self(sys, true),
        sched(dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler())) {
    c.on_purge = [this](const purge_event& e) { purges.push_back(e); };
    mm = spawn_memory_manager(sys, std::move(c));
    sched.run();
  }
  ~mm_world() {
    self->send_exit(mm, caf::exit_reason::user_shutdown);
    sched.run();
  }

  /// Grants waiting in self's mailbox, in arrival order.
  std::vector<grant> grants() {
    std::vector<grant> out;
    bool more = true;
    while (more)
      self->receive([&](grant& g) { out.push_back(std::move(g)); },
                    caf::after(std::chrono::seconds(0)) >> [&] { more = false; });
    return out;
  }
  /// The reply to a reserve request already sent and run: the refusals.
  std::vector<partition_failure> refusals() {
    std::vector<partition_failure> out;
    self->receive([&](std::vector<partition_failure>& r) { out = std::move(r); },
                  caf::after(std::chrono::seconds(0)) >> [] { FAIL("no reply to reserve"); });
    return out;
  }
  /// Reserves `o` and returns the refusals.
  std::vector<partition_failure> reserve(const std::vector<work_order>& o) {
    self->send(mm, reserve_atom::value, o);
    sched.run();
    return refusals();
  }
  /// `n` idle synthesizers ask for work.
  void pull(int n) {
    for (int i = 0; i < n; ++i) self->send(mm, grant_request_atom::value);
    sched.run();
  }
  memory_stats stats() {
    self->send(mm, stats_atom::value);
    sched.run();
    memory_stats s;
    self->receive([&](memory_stats& x) { s = x; });
    return s;
  }
};

}  // namespace proofline::test
