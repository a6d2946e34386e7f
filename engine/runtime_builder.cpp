#include "engine/runtime_builder.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>

#include <spdlog/spdlog.h>

#include "engine/fault_inject.hpp"
#include "zk/groth16/synthesis_model.hpp"

namespace proofline::engine {

namespace {

zk::groth16::synthesis_model model_of(const std::string& name) {
  auto model = zk::groth16::parse_synthesis_model(name);
  if (!model)
    throw std::invalid_argument("--synthesis-model " + name + ": expected plain, lc or lc-keep");
  return *model;
}

}  // namespace

runtime_builder::runtime_builder(runtime_settings settings, runtime_role role, run_clock clock)
    : settings_(std::move(settings)), role_(role), faults_(fault_spec_from_env()) {
  const auto model = model_of(settings_.synthesis_model);
  ops_ = real_prover_ops(settings_.cpu_threads, !settings_.no_verify, model);
  config_.clock = clock;
  config_.synthesis_shares_threads = zk::groth16::uses_granted_threads(model);
}

std::string runtime_builder::choose() {
  const runtime_settings& s = settings_;
  choice_ = choose_backends(
      backend_request{s.backend, s.gpus, s.gpu_memory, s.gpu_lanes, s.cpu_threads});
  if (!choice_.error.empty()) return choice_.error;
  if (choice_.cuda()) {
    // a, b, c on the GPUs: synthesis reads only the witness of a key whose
    // A and B every GPU holds (the CPU fallback computes them itself).
    ops_.synthesize = [inner = ops_.synthesize, backends = choice_.backends](
                          const zk::groth16::key_ptr& key, const synthesis_request& req, synthesis_timing& t) {
      synthesis_request r = req;
      r.abc = !std::all_of(backends.begin(), backends.end(),
                           [&](const std::shared_ptr<gpu::backend>& b) { return b->computes_abc(*key); });
      return inner(key, r, t);
    };
  }
  runtime_config& rc = config_;
  rc.memory_budget = s.memory_budget ? s.memory_budget : default_memory_budget();
  synthesizers_ = s.synthesizers ? s.synthesizers : default_synthesizers(choice_, s.finalizers);
  rc.synthesizers = role_.local_proving ? synthesizers_ : 0;
  rc.finalizers = s.finalizers;
  rc.pacing = s.synthesis_ahead;  // 0: the runtime's default
  rc.max_pacing = s.synthesis_ahead_max;
  rc.fallback = choice_.fallback;  // retries the GPUs could not prove
  rc.keep_keys = role_.keep_keys;
  rc.keep_finished = role_.keep_finished;
  rc.keep_finished_bytes = role_.keep_finished_bytes;
  configure_memory(rc, choice_, synthesizers_, (role_.pinned_pool || role_.resident_pool) && role_.local_proving,
                   role_.pinned_pool);
  return {};
}

std::unique_ptr<runtime> runtime_builder::start(caf::actor_system& sys) const {
  if (choice_.backends.empty())
    throw std::invalid_argument("runtime_builder: start() before choose() found backends");
  if (faults_.empty()) return std::make_unique<runtime>(sys, config_, ops_, choice_.backends);
  // Test-only: the primary backends only; the fallback stays as it is.
  const auto faults = parse_faults(faults_);
  spdlog::warn("PROOFLINE_FAULT_INJECT={}: the backends corrupt or fail proofs on purpose (tests only)",
               faults_);
  return std::make_unique<runtime>(sys, config_, ops_, with_faults(choice_.backends, faults));
}

}  // namespace proofline::engine
