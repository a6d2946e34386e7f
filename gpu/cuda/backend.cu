// The CUDA backend (gpu/cuda/cuda_backend.hpp): the backend interface over
// its parts, each in gpu/cuda/backend/:
//   lanes.hpp         lanes (stream + scratch + pinned staging per concurrent
//                     prove() call) and the device clock of their spans;
//   budget.hpp        the device-memory limit and the LRU eviction of keys;
//   residency.hpp     proving keys uploaded once and found again;
//   table_builds.hpp  window tables built in the background, switched in
//                     between partitions;
//   domains.hpp       the NTT tables of each domain;
//   pipeline.hpp      transfers and the partition pipeline with its spans.
// One lock, the backend's, guards bookkeeping only (the budget, the
// entries' fields, the compute order): no upload, table build or wait for
// the device happens under it, so one key's preparation never stalls the
// partitions of a key that is ready. Device memory is one budget: resident
// keys (and tables being built) + NTT tables + lane scratch.
#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "gpu/cuda/backend/budget.hpp"
#include "gpu/cuda/backend/domains.hpp"
#include "gpu/cuda/backend/lanes.hpp"
#include "gpu/cuda/backend/pipeline.hpp"
#include "gpu/cuda/backend/residency.hpp"
#include "gpu/cuda/backend/table_builds.hpp"
#include "gpu/cuda/cuda_backend.hpp"
#include "gpu/device_lost.hpp"

namespace proofline::gpu::cuda {

namespace {

using namespace detail;

class cuda_backend final : public backend {
 public:
  cuda_backend(int device, const backend_options& opt) : device_(device), opt_(opt) {
    std::string why;
    int count = device_count(&why);
    if (device < 0 || device >= count)
      throw backend_error("CUDA device " + std::to_string(device) + " is not available (" +
                          (count ? std::to_string(count) + " visible" : why) + ")");
    device_guard g(device_);
    cudaDeviceProp prop{};
    CUDA_OK(cudaGetDeviceProperties(&prop, device_));
    std::size_t free_bytes = 0, total = 0;
    CUDA_OK(cudaMemGetInfo(&free_bytes, &total));
    int pools = 0;
    CUDA_OK(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, device_));
    const std::size_t limit = opt_.memory_limit ? opt_.memory_limit : free_bytes / 10 * 9;
    name_ = "CUDA device " + std::to_string(device_) + ": " + prop.name + " (" +
            std::to_string(prop.multiProcessorCount) + " SMs, " + mib(total) + ", limit " + mib(limit) + ")";
    if (opt_.lanes == 0) opt_.lanes = 1;
    // The parts' streams are created here, with the device current.
    budget_ = std::make_unique<device_budget>(limit, pools != 0);
    clock_ = std::make_unique<device_clock>();
    tables_ = std::make_unique<table_builds>(*budget_, *clock_, opt_.tables, opt_.lanes);
    const std::size_t staging = std::max<std::size_t>(opt_.staging_bytes, 2 << 20) & ~std::size_t(4095);
    lanes_ = std::make_unique<lane_pool>(opt_.lanes, staging);
    domains_ = std::make_unique<device_domains>(mu_, *budget_);
    residency_ = std::make_unique<key_residency>(mu_, *budget_, *tables_, opt_);
    pipeline_parts parts;
    parts.device = device_;
    parts.mu = &mu_;
    parts.lanes = lanes_.get();
    parts.clock = clock_.get();
    parts.budget = budget_.get();
    parts.domains = domains_.get();
    parts.residency = residency_.get();
    parts.tables = tables_.get();
    pipeline_ = std::make_unique<partition_pipeline>(parts);
  }

  ~cuda_backend() override {
    try {
      device_guard g(device_);
      lanes_->synchronize();
      tables_->synchronize();  // no table build writes into memory freed below
    } catch (...) {
      // nothing to report to: the buffers are freed either way
    }
  }

  const char* kind() const override { return "cuda"; }
  std::string describe() const override { return name_; }
  unsigned lanes() const override { return opt_.lanes; }

  result_ptr prove(const key_ptr& key, const partition_ptr& part, const prove_hooks& hooks) override {
    if (!key || !part) throw backend_error("cuda backend: prove() needs a key and a partition");
    if (lost_.load(std::memory_order_acquire)) throw device_lost(lost_message());
    if (part->curve != key->info.curve)
      throw backend_error("cuda backend: partition is on " + std::string(zk::to_string(part->curve)) +
                          ", key " + key->path + " is on " + zk::to_string(key->info.curve));
    try {
      return zk::visit_curve(key->info.curve, [&](auto curve) -> result_ptr {
        using C = decltype(curve);
        return pipeline_->prove<C>(key, zk::groth16::typed<C>(*key), static_cast<const partition<C>&>(*part),
                                   hooks);
      });
    } catch (const sticky_error& e) {
      throw device_lost(mark_lost("cuda backend (" + key->path + "): " + e.what()));
    } catch (const backend_error& e) {
      throw backend_error("cuda backend (" + key->path + "): " + e.what());
    } catch (const std::exception& e) {
      throw backend_error("cuda backend (" + key->path + "): " + e.what());
    }
  }

  void prepare(const key_ptr& key) override {
    if (!key) return;
    try {
      zk::visit_curve(key->info.curve, [&](auto curve) {
        using C = decltype(curve);
        using fr = typename C::fr;
        device_guard guard(device_);
        stream own;  // not a lane: partitions of ready keys keep both lanes meanwhile
        const auto& typed = zk::groth16::typed<C>(*key);
        auto rk = residency_->acquire<C>(key, typed, own.get());
        domains_->get<fr>(C::id, key->info.log_domain, own.get());
      });
    } catch (const sticky_error& e) {
      throw device_lost(
          mark_lost("cuda backend (" + key->path + "): making the key resident: " + e.what()));
    } catch (const std::exception& e) {
      throw backend_error("cuda backend (" + key->path + "): making the key resident: " + e.what());
    }
  }

  void expect_partitions(const key_ptr& key, std::size_t partitions) override {
    if (!key) return;
    std::lock_guard<std::mutex> lk(mu_);
    residency_->expect(key, partitions);
  }

  key_prep_stats key_stats(const proving_key_base* key) override {
    std::lock_guard<std::mutex> lk(mu_);
    auto* slot = budget_->find(key);
    if (!slot || !(*slot)->ready) return {};
    resident_base& rk = **slot;
    key_prep_stats st;
    try {
      tables_->poll(rk);
      st = rk.stats;
    } catch (const std::exception& e) {
      st = rk.stats;
      st.tables_note = std::string("table build failed: ") + e.what();
    }
    st.device_bytes = rk.bytes;
    return st;
  }

  void evict(const proving_key_base* key) override {
    std::lock_guard<std::mutex> lk(mu_);
    budget_->drop(key);  // freed here, or when the last call using it returns
  }

  bool computes_abc(const proving_key_base& key) const override {
    if (!opt_.abc) return false;
    return zk::visit_curve(key.info.curve, [&](auto curve) {
      using C = decltype(curve);
      const auto& typed = zk::groth16::typed<C>(key);
      const std::size_t points = key_bytes(typed, key_shapes(key.info, C::fr::params::bits, false));
      return points + matrix_bytes(typed) <= budget_->limit();
    });
  }

 private:
  int device_;
  backend_options opt_;
  std::string name_;
  std::mutex mu_;  ///< the budget, the resident entries' fields, the announcements, the compute order
  // Declared in the order they depend on each other (destroyed in reverse).
  std::unique_ptr<device_budget> budget_;
  std::unique_ptr<device_clock> clock_;
  std::unique_ptr<table_builds> tables_;
  std::unique_ptr<lane_pool> lanes_;
  std::unique_ptr<device_domains> domains_;
  std::unique_ptr<key_residency> residency_;
  std::unique_ptr<partition_pipeline> pipeline_;

  // A sticky error poisoned the context: every later prove() fails at once
  // with the first error's words, without calling CUDA. The device is not
  // reset: the other lane may be inside a call on the same context, the
  // resident keys' memory belongs to it, and CUDA does not promise a reset
  // recovers from these errors; the runtime proves elsewhere instead.
  std::atomic<bool> lost_{false};
  std::string lost_what_;  ///< guarded by mu_

  /// Records the first sticky error; returns `what` for the exception.
  std::string mark_lost(std::string what) {
    std::lock_guard<std::mutex> lk(mu_);
    if (!lost_.load(std::memory_order_relaxed)) {
      lost_what_ = what;
      lost_.store(true, std::memory_order_release);
    }
    return what;
  }
  std::string lost_message() {
    std::lock_guard<std::mutex> lk(mu_);
    return "CUDA device " + std::to_string(device_) + " is lost after an earlier error, " +
           "partitions go to other backends: " + lost_what_;
  }
};

}  // namespace

int device_count(std::string* why) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();
    if (why) *why = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(e);
    return 0;
  }
  if (count == 0 && why) *why = "no CUDA device is visible";
  return count;
}

std::unique_ptr<backend> make_backend(int device, const backend_options& options) {
  return std::make_unique<cuda_backend>(device, options);
}

}  // namespace proofline::gpu::cuda
