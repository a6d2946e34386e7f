// The backlog runs of `proofline bench memory`: the real pipeline over
// synthetic keys and partitions, measuring the GPU's hand-off gaps with
// arenas purged by message or trimmed under a lock.
#include "bench/memory_bench_detail.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <thread>

#include <spdlog/spdlog.h>

#include "actors/runtime.hpp"
#include "actors/detail/system_setup.hpp"
#include "gpu/cuda/factory.hpp"
#include "gpu/footprint.hpp"
#include "gpu/pinning.hpp"
#include "gpu/synthetic.hpp"
#include "memory/arena.hpp"
#include "memory/estimate.hpp"
#include "memory/pinned_pool.hpp"
#include "memory/process.hpp"
#include "memory/size.hpp"
#include "zk/curves.hpp"

namespace proofline::bench::memory_detail {

namespace {


using curve = zk::bn254;

/// What the fake backend saw, shared with the bench.
struct backlog_log {
  std::mutex mtx;  // the bench's own bookkeeping; actors/ and memory/ stay lock-free
  std::vector<std::pair<clock_type::time_point, clock_type::time_point>> kernels;
  uint64_t gpu_thread = 0;
  std::string gpu_thread_name;
  double inline_purge_ms = 0;
  double inline_purge_max_ms = 0;
};

/// A timed stand-in for a prover backend: host-side preparation as a real
/// backend does it (cpu-like: the CPU backend's working copies; cuda-upload:
/// the upload of witness and a, b, c), then --prove-ms of "kernels".
class timed_backend final : public gpu::backend {
 public:
  timed_backend(std::shared_ptr<backlog_log> log, bool upload, bool inline_purge,
                std::chrono::milliseconds kernels, std::unique_ptr<gpu::upload_channel> channel)
      : log_(std::move(log)),
        upload_(upload),
        inline_purge_(inline_purge),
        kernels_(kernels),
        channel_(std::move(channel)) {}

  const char* kind() const override { return upload_ ? "cuda-upload" : "cpu-like"; }
  std::string describe() const override { return kind(); }

  gpu::result_ptr prove(const zk::groth16::key_ptr& key, const gpu::partition_ptr& part,
                        const gpu::prove_hooks& hooks) override {
    const auto& p = static_cast<const gpu::partition<curve>&>(*part);
    std::vector<memory::buffer<curve::fr>> work;
    if (upload_) {
      bool ok = channel_->copy(p.witness.data(), p.witness.bytes()) &&
                channel_->copy(p.a.data(), p.a.bytes()) && channel_->copy(p.b.data(), p.b.bytes()) &&
                channel_->copy(p.c.data(), p.c.bytes());
      if (!ok) throw gpu::backend_error("cuda-upload: cudaMemcpy failed");
    } else {
      for (int i = 0; i < 4; ++i) {  // the CPU backend's footprint: a, b, c copies and h
        work.emplace_back(key->info.domain_size);
        std::memcpy(work.back().data(), p.a.data(), p.a.bytes());
      }
    }
    if (hooks.inputs_consumed) hooks.inputs_consumed();
    auto k0 = clock_type::now();
    std::this_thread::sleep_for(kernels_);
    auto k1 = clock_type::now();
    work.clear();
    double purge_ms = 0;
    if (inline_purge_) purge_ms = time_ms([] { memory::purge_all_arenas(); });
    {
      std::lock_guard<std::mutex> g(log_->mtx);
      log_->kernels.emplace_back(k0, k1);
      log_->gpu_thread = memory::thread_id();
      log_->gpu_thread_name = memory::thread_name();
      log_->inline_purge_ms += purge_ms;
      log_->inline_purge_max_ms = std::max(log_->inline_purge_max_ms, purge_ms);
    }
    return std::make_shared<gpu::result<curve>>();
  }

 private:
  std::shared_ptr<backlog_log> log_;
  bool upload_;
  bool inline_purge_;
  std::chrono::milliseconds kernels_;
  std::unique_ptr<gpu::upload_channel> channel_;
};

/// A synthetic key of 2^log_domain and partitions whose witness and a, b, c
/// are allocated from the synthesizer's source and written.
prover_ops synthetic_ops(unsigned log_domain) {
  prover_ops ops;
  ops.load_key = [log_domain](const std::string& path) -> zk::groth16::key_ptr {
    return gpu::synthetic_key(path, (uint32_t(1) << log_domain) / 2, log_domain);
  };
  ops.synthesize = [](const zk::groth16::key_ptr& key, const synthesis_request& req,
                      synthesis_timing&) -> gpu::partition_ptr {
    auto p = gpu::synthetic_partition(key, req.buffers);
    std::memset(p->witness.data(), 0, p->witness.bytes());
    for (auto* v : {&p->a, &p->b, &p->c}) std::memset(v->data(), 7, v->bytes());
    return p;
  };
  ops.finalize = [](const zk::groth16::key_ptr&, const gpu::partition_ptr&, const gpu::result_ptr&) {
    return finalized_files{"{}", "[]", false, false, 0, {}};
  };
  ops.write_file = [](const std::string&, std::string_view) {};
  return ops;
}

}  // namespace

backlog_figures run_backlog(const memory_bench_options& o, const std::string& mode, bool upload) {
  backlog_figures f;
  f.mode = mode;
  f.partitions = o.partitions;
  auto log = std::make_shared<backlog_log>();
  std::unique_ptr<gpu::upload_channel> channel;
  if (upload) {
    std::string why;
    uint64_t domain_bytes = (uint64_t(1) << o.log_domain) * 32;
    channel = gpu::upload_channel::open(domain_bytes, o.device, &why);
    if (!channel) {
      f.ok = false;
      f.error = why;
      return f;
    }
  }
  auto est = memory::estimate_partition((uint64_t(1) << o.log_domain) / 2, uint64_t(1) << o.log_domain,
                                        32, upload ? gpu::cuda_backend_footprint
                                                   : gpu::cpu_backend_footprint);
  runtime_config rc;
  rc.footprint = upload ? gpu::cuda_backend_footprint : gpu::cpu_backend_footprint;
  rc.footprint.fixed_bytes = 0;  // the fake backend holds no staging buffers
  rc.pacing = 3;                  // a backlog: three partitions ready ahead of the worker
  rc.pinned_pool = o.pool;
  if (upload && o.pool) rc.pinner = gpu::cuda_pinner();
  rc.memory_budget = o.pool + 6 * est.total();
  rc.synthesizers = 2;
  rc.finalizers = 2;
  rc.purge = mode == "message";
  std::mutex events_mtx;
  std::vector<purge_event> events;
  rc.on_purge = [&](const purge_event& e) {
    std::lock_guard<std::mutex> g(events_mtx);
    events.push_back(e);
  };
  f.budget = rc.memory_budget;

  caf::actor_system_config cfg;
  configure_actor_system(cfg);
  caf::actor_system sys(cfg);
  memory::reset_peak_rss();
  f.baseline_rss = memory::current_rss();
  auto t0 = clock_type::now();
  memory_stats stats;
  {
    auto backend = std::make_shared<timed_backend>(log, upload, mode == "inline",
                                                   std::chrono::milliseconds(o.prove_ms),
                                                   std::move(channel));
    runtime rt(sys, rc, synthetic_ops(o.log_domain), {backend});
    caf::scoped_actor self(sys);
    job_spec spec;
    spec.id = "backlog";
    spec.zkey = "synthetic.zkey";
    spec.single = false;
    spec.out = "unused";
    for (unsigned i = 0; i < o.partitions; ++i) spec.witnesses.push_back("p" + std::to_string(i));
    uint64_t seq = 0;
    auto fail = [&](caf::error& e) {
      f.ok = false;
      f.error = sys.render(e);
    };
    self->request(rt.registry(), std::chrono::seconds(60), submit_atom::value, spec)
        .receive([&](uint64_t s) { seq = s; }, fail);
    if (f.ok)
      self->request(rt.registry(), std::chrono::minutes(10), await_atom::value, seq)
          .receive(
              [&](job_report& r) {
                if (r.state != job_state::done) {
                  f.ok = false;
                  f.error = r.error.message;
                }
              },
              fail);
    f.wall_ms = ms_between(t0, clock_type::now());
    std::this_thread::sleep_for(rc.purge_delay * 4);  // the last coalesced purges
    self->request(rt.memory(), std::chrono::seconds(10), stats_atom::value)
        .receive([&](memory_stats& s) { stats = s; }, fail);
  }
  f.peak_rss = memory::peak_rss();
  f.peak_reserved = stats.peak_reserved;

  std::vector<double> gaps;
  {
    std::lock_guard<std::mutex> g(log->mtx);
    auto k = log->kernels;
    std::sort(k.begin(), k.end());
    for (std::size_t i = 1; i < k.size(); ++i) gaps.push_back(ms_between(k[i - 1].second, k[i].first));
    f.purge_on_gpu_thread_ms = log->inline_purge_ms;
    if (mode == "inline") {
      f.purges = k.size();
      f.purge_ms = log->inline_purge_ms;
      f.purge_max_ms = log->inline_purge_max_ms;
      f.threads = {log->gpu_thread_name};
    }
  }
  f.gap_p50_ms = quantile(gaps, 0.5);
  f.gap_p99_ms = quantile(gaps, 0.99);
  f.gap_max_ms = gaps.empty() ? 0 : *std::max_element(gaps.begin(), gaps.end());
  std::lock_guard<std::mutex> g(events_mtx);
  if (mode == "message") {
    f.purges = events.size();
    f.threads = stats.purge_threads;
    for (const auto& e : events) {
      f.purge_ms += e.ms;
      f.purge_max_ms = std::max(f.purge_max_ms, e.ms);
      if (e.thread_id == log->gpu_thread)
        f.purge_on_gpu_thread_ms += e.ms;
      else
        f.purge_on_manager_ms += e.ms;
    }
  }
  return f;
}

}  // namespace proofline::bench::memory_detail
