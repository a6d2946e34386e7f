#include "app/serve_stop.hpp"

#include <pthread.h>

#include <chrono>
#include <optional>
#include <vector>

#include <caf/after.hpp>
#include <caf/scoped_actor.hpp>
#include <spdlog/spdlog.h>

namespace proofline::app {

sigset_t block_stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

void drain_runtime(caf::actor_system& sys, const job_registry_actor& registry,
                   const sigset_t& signals, int sig, unsigned timeout_s, bool journal) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  spdlog::info("serve: {} received: draining (no new jobs; partitions in flight finish within "
               "{} s; a second signal stops at once)",
               sig == SIGINT ? "SIGINT" : "SIGTERM", timeout_s);
  caf::scoped_actor waiter{sys};
  waiter->send(registry, drain_atom::value);
  std::optional<std::vector<job_status>> left;
  const auto deadline = start + std::chrono::seconds(timeout_s);
  while (!left && clock::now() < deadline) {
    waiter->receive([&](std::vector<job_status>& jobs) { left = std::move(jobs); },
                    caf::after(std::chrono::milliseconds(100)) >> [] {});
    const timespec now{0, 0};
    if (!left && sigtimedwait(&signals, nullptr, &now) > 0) {
      spdlog::warn("serve: a second signal: stopping without waiting for partitions in flight");
      return;
    }
  }
  const double s = std::chrono::duration<double>(clock::now() - start).count();
  if (!left) {
    spdlog::warn("serve: drain timed out after {:.1f} s (--drain-timeout {}); partitions still "
                 "in flight are abandoned{}",
                 s, timeout_s, journal ? " and proved again at the next start" : "");
    return;
  }
  uint64_t parts = 0;
  for (const auto& j : *left) parts += j.total - j.done - j.failed;
  if (journal)
    spdlog::info("serve: drained in {:.1f} s; {} job(s) with {} partition(s) to prove stay in "
                 "the journal for the next start",
                 s, left->size(), parts);
  else if (!left->empty())
    spdlog::warn("serve: drained in {:.1f} s; dropped {} queued job(s) with {} partition(s) "
                 "to prove (without --state a stopped daemon forgets its queue)",
                 s, left->size(), parts);
  else
    spdlog::info("serve: drained in {:.1f} s; no job was left", s);
}

}  // namespace proofline::app
