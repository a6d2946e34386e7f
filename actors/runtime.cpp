#include "actors/runtime.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include <stdexcept>

#include "actors/finalizer.hpp"
#include "actors/gpu_worker.hpp"
#include "actors/job_registry.hpp"
#include "actors/scheduler.hpp"
#include "actors/synthesizer.hpp"

namespace proofline {

namespace {

template <class F, class Config>
auto spawn_maybe_detached(caf::actor_system& sys, bool detach, F fun, Config cfg) {
  return detach ? sys.spawn<caf::detached>(fun, std::move(cfg)) : sys.spawn(fun, std::move(cfg));
}

}  // namespace

runtime::runtime(caf::actor_system& sys, runtime_config cfg, prover_ops ops,
                 std::vector<std::shared_ptr<gpu::backend>> backends)
    : cfg_(std::move(cfg)) {
  if (backends.empty()) throw std::invalid_argument("runtime: no prover backend");
  if (cfg_.memory_budget == 0) throw std::invalid_argument("runtime: memory budget is 0");
  if (cfg_.synthesizers == 0 || cfg_.finalizers == 0)
    throw std::invalid_argument("runtime: needs at least one synthesizer and one finalizer");
  auto workers = static_cast<unsigned>(backends.size());
  uint32_t pacing = cfg_.pacing ? cfg_.pacing : workers;
  uint32_t max_pacing = cfg_.pacing ? cfg_.pacing : cfg_.synthesizers + workers;

  memory_ = sys.spawn(memory_manager, memory_manager_config{cfg_.memory_budget, pacing, max_pacing,
                                                            cfg_.on_grant});
  scheduler_ = sys.spawn(proofline::scheduler);
  registry_ = sys.spawn(job_registry,
                        job_registry_config{memory_, ops, cfg_.clock, cfg_.detach, cfg_.footprint});
  for (unsigned i = 0; i < cfg_.finalizers; ++i)
    finalizers_.push_back(spawn_maybe_detached(
        sys, cfg_.detach, finalizer,
        finalizer_config{registry_, memory_, ops.finalize, ops.write_file, cfg_.clock}));
  for (auto& b : backends)
    workers_.push_back(
        spawn_maybe_detached(sys, cfg_.detach, gpu_worker,
                             gpu_worker_config{b, scheduler_, memory_, finalizers_, registry_,
                                               cfg_.lookahead, cfg_.clock}));
  for (unsigned i = 0; i < cfg_.synthesizers; ++i)
    synthesizers_.push_back(
        spawn_maybe_detached(sys, cfg_.detach, synthesizer,
                             synthesizer_config{memory_, scheduler_, registry_, ops.synthesize,
                                                memory::heap_source(), cfg_.clock}));
}

runtime::~runtime() { shutdown(); }

void runtime::shutdown() {
  if (stopped_) return;
  stopped_ = true;
  auto stop = [](const auto& h) { caf::anon_send_exit(h, caf::exit_reason::user_shutdown); };
  for (auto& a : synthesizers_) stop(a);
  for (auto& a : workers_) stop(a);
  for (auto& a : finalizers_) stop(a);
  stop(registry_);
  stop(scheduler_);
  stop(memory_);
}

}  // namespace proofline
