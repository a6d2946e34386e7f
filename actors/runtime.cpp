#include "actors/runtime.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include <algorithm>
#include <stdexcept>

#include "actors/finalizer.hpp"
#include "actors/gpu_worker.hpp"
#include "actors/job_registry.hpp"
#include "actors/key_cache.hpp"
#include "actors/scheduler.hpp"
#include "actors/synthesizer.hpp"
#include "gpu/worker_arena.hpp"
#include "memory/size.hpp"

namespace proofline {

runtime::runtime(caf::actor_system& sys, runtime_config cfg, prover_ops ops,
                 std::vector<std::shared_ptr<gpu::backend>> backends)
    : cfg_(std::move(cfg)) {
  if (backends.empty()) throw std::invalid_argument("runtime: no prover backend");
  if (cfg_.memory_budget == 0) throw std::invalid_argument("runtime: memory budget is 0");
  // Synthesizers may be 0 (a cluster coordinator that only hands partitions
  // to its nodes proves nothing here); finalizers may not.
  if (cfg_.finalizers == 0) throw std::invalid_argument("runtime: needs at least one finalizer");
  // One GPU worker per lane of each backend (CUDA: 2 per GPU, so one
  // partition's upload overlaps the other's compute; CPU: 1).
  unsigned workers = 0;
  for (const auto& b : backends) workers += std::max(1u, b->lanes());
  const auto devices = static_cast<int32_t>(backends.size());
  const bool fallback = cfg_.fallback != nullptr;
  // Synthesis ahead of the GPU: by default two partitions per GPU worker, so
  // the first ones share every idle synthesizer's threads and reach the GPU
  // soon, widening (one each time a GPU worker runs dry) up to every
  // synthesizer; every synthesizer from the start when a synthesis runs on
  // one thread whatever it is granted; see runtime_config::pacing.
  uint32_t pacing = cfg_.pacing;
  uint32_t max_pacing = cfg_.max_pacing;
  if (pacing == 0) {
    const unsigned every = cfg_.synthesizers + workers;
    pacing = cfg_.synthesis_shares_threads ? std::max(1u, std::min(2 * workers, every)) : std::max(1u, every);
    if (max_pacing == 0) max_pacing = every;
  }
  max_pacing = std::max(pacing, max_pacing);

  // Memory system: the pool and the backends' fixed buffers are counted once;
  // actors that allocate own an arena each (detached: bound to their thread),
  // and the memory manager purges them on its own thread.
  memory_manager_config mm{cfg_.memory_budget, pacing, max_pacing, cfg_.on_grant};
  mm.clock = cfg_.clock;
  mm.pool_bytes = cfg_.pinned_pool;
  mm.pool_partitions = cfg_.pinned_pool_partitions;
  mm.pinner = cfg_.pinner;
  mm.fixed_bytes = cfg_.footprint.fixed_bytes * backends.size();  // per backend, all lanes
  mm.purge = cfg_.purge;
  mm.purge_delay = cfg_.purge_delay;
  mm.own_thread = cfg_.detach;
  mm.on_purge = cfg_.on_purge;
  std::vector<memory::arena_ptr> worker_arenas(workers + (fallback ? 1 : 0));
  if (cfg_.detach)  // a worker's thread is its own only when detached
    for (auto& a : worker_arenas) {
      a = memory::make_arena();
      if (a->valid()) mm.worker_arenas.push_back(a->index());
    }
  if (mm.pool_bytes + mm.fixed_bytes >= cfg_.memory_budget)
    throw std::invalid_argument(
        "the memory budget (" + memory::format_bytes(cfg_.memory_budget) +
        ") leaves nothing for partitions beside the pinned pool (" +
        memory::format_bytes(mm.pool_bytes) + ") and the backends' host buffers (" +
        memory::format_bytes(mm.fixed_bytes) + ")");
  memory_ = spawn_memory_manager(sys, std::move(mm));
  scheduler_ = spawn_scheduler(sys, scheduler_config{devices, fallback});
  // One GPU worker per device (lane 0) makes each loaded key ready on its
  // device while the key's first partitions synthesize. The list is filled
  // below, before any job can be submitted.
  auto preparers = std::make_shared<std::vector<gpu_worker_actor>>();
  key_cache_config kc;
  kc.memory = memory_;
  kc.load = ops.load_key;
  kc.clock = cfg_.clock;
  kc.detach_loaders = cfg_.detach;
  kc.keep_warm = cfg_.keep_keys;
  if (cfg_.identify) kc.identify = cfg_.identify;
  kc.key_ready = [preparers](const zk::groth16::key_ptr& key) {
    for (const auto& w : *preparers) caf::anon_send(w, prepare_atom::value, key);
  };
  // Warm keys are evicted on the backends too; without keep_keys a dropped
  // key's device state stays until the backend needs the room.
  if (cfg_.keep_keys)
    kc.key_evicted = [preparers](const zk::groth16::key_ptr& key) {
      for (const auto& w : *preparers) caf::anon_send(w, evict_key_atom::value, key);
    };
  keys_ = spawn_key_cache(sys, std::move(kc));
  caf::anon_send(memory_, attach_atom::value, keys_);
  job_registry_config jrc;
  jrc.memory = memory_;
  jrc.keys = keys_;
  jrc.ops = ops;
  jrc.clock = cfg_.clock;
  jrc.footprint = cfg_.footprint;
  jrc.journal = cfg_.journal;
  jrc.keep_finished = cfg_.keep_finished;
  jrc.keep_finished_bytes = cfg_.keep_finished_bytes;
  // Non-blocking: a backend only notes the count.
  jrc.partitions_queued = [backends](const zk::groth16::key_ptr& key, std::size_t n) {
    for (const auto& b : backends) b->expect_partitions(key, n);
  };
  jrc.retries = retry_targets{devices, fallback};
  registry_ = spawn_job_registry(sys, std::move(jrc));
  caf::anon_send(scheduler_, attach_atom::value, registry_);  // device faults it reports
  for (unsigned i = 0; i < cfg_.finalizers; ++i) {
    finalizer_config fc;
    fc.registry = registry_;
    fc.memory = memory_;
    fc.finalize = ops.finalize;
    fc.write_file = ops.write_file;
    fc.clock = cfg_.clock;
    fc.thread = {memory::make_arena(), cfg_.detach, "pl.final" + std::to_string(i)};
    finalizers_.push_back(spawn_finalizer(sys, std::move(fc)));
  }
  size_t w = 0;
  for (size_t d = 0; d < backends.size(); ++d) {
    for (unsigned lane = 0; lane < std::max(1u, backends[d]->lanes()); ++lane, ++w) {
      // Detached, the worker's own allocations go to an arena of its own.
      std::string name = "pl.gpu" + std::to_string(d) + "." + std::to_string(lane);
      auto backend = cfg_.detach ? gpu::with_worker_arena(backends[d], worker_arenas[w], name)
                                 : backends[d];
      gpu_worker_config wc{backend,    scheduler_,         memory_, finalizers_, registry_, cfg_.lookahead,
                           cfg_.clock, static_cast<int>(d), static_cast<int>(lane), keys_, /*fallback=*/false};
      wc.detached = cfg_.detach;
      workers_.push_back(spawn_gpu_worker(sys, std::move(wc)));
      if (lane == 0) preparers->push_back(workers_.back());
    }
  }
  if (fallback) {
    // Idle unless a retry is placed on it; it prepares keys on first use.
    auto backend = cfg_.detach
                       ? gpu::with_worker_arena(cfg_.fallback, worker_arenas[w], "pl.fallback")
                       : cfg_.fallback;
    gpu_worker_config wc{backend,    scheduler_, memory_,    finalizers_, registry_, cfg_.lookahead,
                         cfg_.clock, devices,    /*lane=*/0, keys_,       /*fallback=*/true};
    wc.detached = cfg_.detach;
    workers_.push_back(spawn_gpu_worker(sys, std::move(wc)));
  }
  for (unsigned i = 0; i < cfg_.synthesizers; ++i) {
    synthesizer_config sc;
    sc.memory = memory_;
    sc.scheduler = scheduler_;
    sc.registry = registry_;
    sc.synthesize = ops.synthesize;
    sc.clock = cfg_.clock;
    sc.thread = {memory::make_arena(), cfg_.detach, "pl.synth" + std::to_string(i)};
    synthesizers_.push_back(spawn_synthesizer(sys, std::move(sc)));
  }
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
  stop(keys_);
  stop(scheduler_);
  stop(memory_);
}

}  // namespace proofline
