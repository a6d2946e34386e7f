#include "bench/baseline/engine.hpp"

#include <malloc.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "bench/baseline/channel.hpp"
#include "memory/estimate.hpp"
#include "memory/process.hpp"

namespace proofline::bench::baseline {

namespace {

/// A partition between synthesis and proving.
struct ready_partition {
  std::size_t p = 0;  ///< index into the tracker's partition records
  gpu::partition_ptr data;
};

/// A partition between proving and finalizing.
struct proved_partition {
  std::size_t p = 0;
  gpu::partition_ptr data;
  gpu::result_ptr result;
};

/// The pinned pool shared by the synthesizers (take) and whichever thread
/// drops a partition's last buffer (give back), behind a mutex of its own.
class shared_pool {
 public:
  shared_pool(std::size_t capacity, const memory::pinner& pin) : pool_(capacity, pin) {}

  /// A block of `bytes`, or null when no free range fits (the caller then
  /// uses the heap).
  memory::block_ptr take(std::size_t bytes) {
    std::lock_guard<std::mutex> held(mu_);
    return pool_.take(bytes, [this](std::size_t offset) {
      std::lock_guard<std::mutex> again(mu_);
      pool_.give_back(offset);
    });
  }
  const memory::pinned_pool& pool() const { return pool_; }

 private:
  std::mutex mu_;
  memory::pinned_pool pool_;
};

/// Everything the threads share; lives on run_engine's stack until they are joined.
struct shared_run {
  explicit shared_run(const prover_ops& o) : ops(o) {}
  const prover_ops& ops;
  run_clock clock;
  std::vector<std::shared_ptr<job_context>> jobs;  ///< per job; key null when it failed to load
  std::vector<std::size_t> order;                  ///< partitions in start order
  std::vector<std::string> witness;                ///< per partition record
  std::vector<std::size_t> pinnable;               ///< per job: pool block bytes
  std::unique_ptr<job_tracker> tracker;
  std::unique_ptr<shared_pool> pool;
  std::unique_ptr<slots> in_flight;
  channel<ready_partition> ready;
  channel<proved_partition> proved;
  std::atomic<std::size_t> next{0};
  std::atomic<unsigned> synthesizers_left{0};
  std::atomic<unsigned> workers_left{0};
  std::vector<std::size_t> job_of;  ///< per partition record: its job
  std::vector<uint32_t> index_of;   ///< per partition record: index in its job
  bool heap_stats = false;
  std::mutex heap_mu;  ///< guards the heap samples below
  glibc_heap heap_peak;
  uint64_t heap_samples = 0;
  double heap_read_ms = 0;
  std::atomic<uint64_t> trim_returned{0};
  std::vector<double> ready_ms;  ///< per partition record: synthesized (one writer each)
};

void synthesizer_thread(shared_run& run, unsigned id) {
  memory::set_thread_name("bl.synth" + std::to_string(id));
  for (;;) {
    std::size_t k = run.next.fetch_add(1);
    if (k >= run.order.size()) break;
    const std::size_t p = run.order[k];
    const job_context& job = *run.jobs[run.job_of[p]];
    if (!job.key) continue;  // failed with its key at load time
    run.in_flight->acquire();
    memory::block_ptr block;
    if (run.pool) block = run.pool->take(run.pinnable[run.job_of[p]]);
    gpu::partition_ptr data;
    try {
      synthesis_request req;
      req.witness.name = run.witness[p];
      req.buffers = block ? block->buffers() : memory::heap_source();
      synthesis_timing timing;
      data = run.ops.synthesize(job.key, req, timing);
      if (!data) throw std::runtime_error("synthesis produced no partition");
    } catch (const std::exception& e) {
      block.reset();
      std::string msg = e.what();
      if (msg.rfind(run.witness[p], 0) != 0) msg = run.witness[p] + ": " + msg;
      run.tracker->failed(p, std::move(msg), role::synthesizer);
      run.in_flight->release();
      continue;
    }
    block.reset();  // the buffers carved from it keep it alive
    run.ready_ms[p] = run.clock.now_ms();
    run.ready.push(ready_partition{p, std::move(data)});
  }
  if (run.synthesizers_left.fetch_sub(1) == 1) run.ready.close();
}

void gpu_worker_thread(shared_run& run, gpu::backend& backend, int device, int lane) {
  memory::set_thread_name("bl.gpu" + std::to_string(device) + "." + std::to_string(lane));
  while (auto item = run.ready.pop()) {
    const std::size_t p = item->p;
    const job_context& job = *run.jobs[run.job_of[p]];
    run.tracker->proving(p, device, lane);
    std::vector<gpu::span> spans;
    gpu::prove_hooks hooks;
    hooks.spans = &spans;
    gpu::result_ptr result;
    std::string problem;
    try {
      result = backend.prove(job.key, item->data, hooks);
      if (!result) problem = "the backend returned no result";
    } catch (const std::exception& e) {
      problem = e.what();
    }
    if (!result) {
      item->data.reset();
      run.tracker->failed(p, run.witness[p] + ": " + backend.describe() + ": " + problem,
                          role::gpu_worker);
      run.in_flight->release();
      continue;
    }
    run.tracker->proved(p, std::move(spans));
    run.proved.push(proved_partition{p, std::move(item->data), std::move(result)});
  }
  if (run.workers_left.fetch_sub(1) == 1) run.proved.close();
}

void finalizer_thread(shared_run& run, unsigned id) {
  memory::set_thread_name("bl.final" + std::to_string(id));
  while (auto item = run.proved.pop()) {
    const std::size_t p = item->p;
    const job_context& job = *run.jobs[run.job_of[p]];
    const uint32_t index = run.index_of[p];
    std::string error;
    try {
      auto files = run.ops.finalize(job.key, item->data, item->result);
      run.ops.write_file(job.out_path(job.proof_name(index)), files.proof_json);
      run.ops.write_file(job.out_path(job.public_name(index)), files.public_json);
    } catch (const std::exception& e) {
      error = e.what();
    }
    item->data.reset();  // the partition's buffers go back to malloc (or the pool) here
    item->result.reset();
    if (run.heap_stats) {
      auto h = read_glibc_heap();
      std::lock_guard<std::mutex> held(run.heap_mu);
      ++run.heap_samples;
      run.heap_read_ms += h.read_ms;
      if (h.arena_bytes >= run.heap_peak.arena_bytes) run.heap_peak = h;
    }
    if (error.empty())
      run.tracker->finalized(p);  // malloc_trim(0) under the lock
    else
      run.tracker->failed(p, std::move(error), role::finalizer);
    run.in_flight->release();
  }
}

}  // namespace

engine_result run_engine(const std::vector<job_spec>& jobs, const prover_ops& ops,
                         const std::vector<device_backend>& devices, const engine_config& cfg) {
  if (devices.empty()) throw std::invalid_argument("baseline: no prover backend");
  if (cfg.synthesizers == 0 || cfg.finalizers == 0)
    throw std::invalid_argument("baseline: needs at least one synthesizer and one finalizer");
  shared_run run(ops);
  if (cfg.clock) run.clock = *cfg.clock;
  engine_result out;
  out.run_epoch_us =
      std::chrono::duration<double, std::micro>(run.clock.epoch().time_since_epoch()).count();

  // 1. Jobs, partition records, and the start order: priority (highest
  //    first), then job order, then partition index, as proofline grants.
  std::vector<job_record> job_records;
  std::vector<partition_record> records;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    auto ctx = std::make_shared<job_context>();
    ctx->seq = j + 1;
    ctx->spec = jobs[j];
    run.jobs.push_back(ctx);
    job_records.push_back({jobs[j].id, jobs[j].witnesses.size(), 0, 0, -1});
    for (uint32_t i = 0; i < jobs[j].witnesses.size(); ++i) {
      partition_record r;
      r.job = j;
      r.index = i;
      records.push_back(r);
      run.job_of.push_back(j);
      run.index_of.push_back(i);
      run.witness.push_back(jobs[j].witnesses[i]);
    }
  }
  run.order.resize(records.size());
  run.ready_ms.assign(records.size(), -1.0);
  for (std::size_t p = 0; p < records.size(); ++p) run.order[p] = p;
  std::stable_sort(run.order.begin(), run.order.end(), [&](std::size_t x, std::size_t y) {
    return jobs[run.job_of[x]].prio > jobs[run.job_of[y]].prio;
  });
  std::function<void()> trim;
  if (cfg.trim && cfg.trim_hook)
    trim = cfg.trim_hook;
  else if (cfg.trim)
    trim = [&run] {  // every glibc arena, as the replaced prover does
      const uint64_t before = memory::current_rss();
      malloc_trim(0);
      const uint64_t after = memory::current_rss();
      if (before > after) run.trim_returned += before - after;
    };
  run.heap_stats = cfg.heap_stats;
  run.tracker = std::make_unique<job_tracker>(std::move(job_records), std::move(records),
                                              std::move(trim), run.clock);

  // 2. Keys: each zkey once, before anything runs; a key that fails to load
  //    fails the partitions of every job that names it.
  std::map<std::string, zk::groth16::key_ptr> keys;
  std::map<std::string, std::string> key_errors;
  for (const auto& spec : jobs) {
    if (keys.count(spec.zkey) || key_errors.count(spec.zkey)) continue;
    try {
      keys[spec.zkey] = ops.load_key(spec.zkey);
      spdlog::info("loaded {} at {:.1f} ms", spec.zkey, run.clock.now_ms());
    } catch (const std::exception& e) {
      key_errors[spec.zkey] = e.what();
      spdlog::error("{}", e.what());
    }
  }
  out.load_ms = run.clock.now_ms();
  std::size_t largest_block = 0;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    auto k = keys.find(jobs[j].zkey);
    std::size_t bytes = 0;
    if (k != keys.end()) {
      run.jobs[j]->key = k->second;
      const auto& info = k->second->info;
      bytes = memory::estimate_partition(info.n_vars, info.domain_size, info.n8r, {}).pinnable;
    }
    run.pinnable.push_back(bytes);
    largest_block = std::max(largest_block, bytes);
  }
  for (std::size_t p = 0; p < run.job_of.size(); ++p)
    if (!run.jobs[run.job_of[p]]->key)
      run.tracker->failed(p, key_errors[jobs[run.job_of[p]].zkey], role::synthesizer);

  // 3. Bounds and the optional pool.
  unsigned lanes = 0;
  for (const auto& d : devices) lanes += std::max(1u, d.lanes);
  out.in_flight = cfg.in_flight ? cfg.in_flight : cfg.synthesizers + 3 * lanes;
  run.in_flight = std::make_unique<slots>(out.in_flight);
  if (cfg.pinned_pool && largest_block > 0) {
    run.pool = std::make_unique<shared_pool>(largest_block * out.in_flight, cfg.pinner);
    out.pool_bytes = run.pool->pool().capacity();
    out.pool_pinned = run.pool->pool().pinned();
    out.pool_error = run.pool->pool().pin_error();
    std::string pinned = out.pool_pinned ? "pinned" : "not pinned";
    if (!out.pool_error.empty()) pinned += " (" + out.pool_error + ")";
    spdlog::info("pool: {} bytes for {} partitions, {}", out.pool_bytes, out.in_flight, pinned);
  }

  // 4. The threads: synthesizers -> GPU workers (one per lane) -> finalizers.
  run.synthesizers_left = cfg.synthesizers;
  run.workers_left = lanes;
  std::vector<std::thread> threads;
  for (unsigned i = 0; i < cfg.finalizers; ++i)
    threads.emplace_back(finalizer_thread, std::ref(run), i);
  for (std::size_t d = 0; d < devices.size(); ++d)
    for (unsigned l = 0; l < std::max(1u, devices[d].lanes); ++l)
      threads.emplace_back(gpu_worker_thread, std::ref(run), std::ref(*devices[d].backend),
                           static_cast<int>(d), static_cast<int>(l));
  for (unsigned i = 0; i < cfg.synthesizers; ++i)
    threads.emplace_back(synthesizer_thread, std::ref(run), i);
  for (auto& t : threads) t.join();
  out.wall_ms = run.clock.now_ms();

  out.tracker = run.tracker->summarize();
  for (const auto& r : out.tracker.parts) {
    out.proofs += r.state == part_state::done;
    out.failed += r.state == part_state::failed;
  }
  out.peak_rss = memory::peak_rss();
  out.trim_returned_bytes = run.trim_returned;
  out.heap_peak = run.heap_peak;
  out.heap_samples = run.heap_samples;
  out.heap_read_ms = run.heap_read_ms;
  out.heap_end = read_glibc_heap();
  out.ready_ms = std::move(run.ready_ms);
  return out;
}

}  // namespace proofline::bench::baseline
