// The baseline engine (bench/baseline) with a fake prover: every partition is
// proved once and written where `proofline run` writes it, failures stay in
// their partition, the trim runs once per finalized partition, and it runs
// under the one tracker lock, so GPU workers wait for it.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "bench/baseline/engine.hpp"
#include "bench/baseline/report.hpp"
#include "memory/arena.hpp"
#include "tests/support/jobs.hpp"
#include "zk/curves.hpp"

using namespace proofline;
using namespace proofline::bench::baseline;
using namespace proofline::test;
using curve = zk::bn254;

namespace {

double now_us() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// A prover that does no maths: it remembers which witness each partition
/// came from, and which files were written. Keys with "missing" in their
/// path fail to load; witnesses with "bad" fail synthesis; witnesses in
/// fail_prove make the backend throw.
struct fake_world {
  std::mutex mu;
  std::map<const gpu::partition_base*, std::string> witness_of;
  std::map<std::string, std::string> files;
  std::set<std::string> fail_prove;
  std::vector<std::string> proved;
  std::chrono::milliseconds prove_time{1};
  std::atomic<int> proving{0};
  std::atomic<int> most_proving{0};
  int key_loads = 0;

  std::string witness(const gpu::partition_ptr& p) {
    std::lock_guard<std::mutex> held(mu);
    return witness_of.at(p.get());
  }

  prover_ops ops() {
    prover_ops o;
    o.load_key = [this](const std::string& path) -> zk::groth16::key_ptr {
      if (path.find("missing") != std::string::npos)
        throw std::runtime_error(path + ": no such file");
      std::lock_guard<std::mutex> held(mu);
      ++key_loads;
      auto k = std::make_shared<zk::groth16::proving_key_base>();
      k->path = path;
      k->info.curve = zk::curve_id::bn254;
      k->info.n8r = 32;
      k->info.n_vars = 8;
      k->info.n_public = 1;
      k->info.domain_size = 16;
      k->info.log_domain = 4;
      return k;
    };
    o.synthesize = [this](const zk::groth16::key_ptr& key, const synthesis_request& req,
                          synthesis_timing&) -> gpu::partition_ptr {
      const std::string& w = req.witness.name;
      const memory::source& src = req.buffers;
      if (w.find("bad") != std::string::npos) throw std::runtime_error(w + ": not a wtns file");
      auto p = std::make_shared<gpu::partition<curve>>();
      p->witness = memory::buffer<curve::scalar>(key->info.n_vars, src);
      p->a = memory::buffer<curve::fr>(key->info.domain_size, src);
      p->b = memory::buffer<curve::fr>(key->info.domain_size, src);
      p->c = memory::buffer<curve::fr>(key->info.domain_size, src);
      std::lock_guard<std::mutex> held(mu);
      witness_of[p.get()] = w;
      return p;
    };
    o.finalize = [this](const zk::groth16::key_ptr&, const gpu::partition_ptr& part,
                        const gpu::result_ptr&) {
      finalized_files f;
      f.proof_json = "proof of " + witness(part);
      f.public_json = "public of " + witness(part);
      return f;
    };
    o.write_file = [this](const std::string& path, std::string_view text) {
      std::lock_guard<std::mutex> held(mu);
      files[path] = std::string(text);
    };
    return o;
  }

  /// A backend of `lanes` lanes whose prove() takes prove_time and reports
  /// an upload span and a kernel span.
  struct backend final : gpu::backend {
    fake_world& world;
    unsigned n_lanes;
    backend(fake_world& w, unsigned l) : world(w), n_lanes(l) {}
    const char* kind() const override { return "fake"; }
    std::string describe() const override { return "fake device"; }
    unsigned lanes() const override { return n_lanes; }
    gpu::result_ptr prove(const zk::groth16::key_ptr&, const gpu::partition_ptr& part,
                          const gpu::prove_hooks& hooks) override {
      int now = ++world.proving;
      int seen = world.most_proving.load();
      while (now > seen && !world.most_proving.compare_exchange_weak(seen, now)) {
      }
      std::string w = world.witness(part);
      double t0 = now_us();
      std::this_thread::sleep_for(world.prove_time);
      double t1 = now_us();
      --world.proving;
      if (hooks.spans) {
        hooks.spans->push_back({"upload", t0, t0 + 1});
        hooks.spans->push_back({"msm_h", t0 + 1, t1});
      }
      {
        std::lock_guard<std::mutex> held(world.mu);
        world.proved.push_back(w);
      }
      if (world.fail_prove.count(w)) throw gpu::backend_error("device fell over");
      return std::make_shared<gpu::result<curve>>();
    }
  };

  std::vector<device_backend> devices(unsigned lanes) {
    return {device_backend{std::make_shared<backend>(*this, lanes), lanes}};
  }
};

}  // namespace

TEST_CASE("the baseline runs on glibc malloc, not jemalloc") {
  CHECK_FALSE(memory::jemalloc_available());
}

TEST_CASE("a CUDA backend's description gives the device name the report shows") {
  CHECK(device_name("CUDA device 0: NVIDIA H200 (132 SMs, 143 GiB, limit 128 GiB)") ==
        "NVIDIA H200");
  CHECK(device_name("CUDA device 3: NVIDIA H200") == "NVIDIA H200");
  CHECK(device_name("CPU backend, 16 threads") == "CPU backend, 16 threads");
}

TEST_CASE(
    "every partition is proved once, written under proofline's file names, and trimmed after") {
  fake_world world;
  engine_config cfg;
  cfg.synthesizers = 2;
  cfg.finalizers = 2;
  std::atomic<int> trims{0};
  cfg.trim_hook = [&] { ++trims; };
  auto r = run_engine({make_job("a", {"a0", "a1", "a2", "a3"}, priority::normal, "k.zkey"),
                       make_job("b", {"b0"}, priority::normal, "k.zkey"),
                       make_job("c", {"c0", "c1", "c2"}, priority::normal, "k2.zkey")},
                      world.ops(), world.devices(2), cfg);
  CHECK(r.proofs == 8);
  CHECK(r.failed == 0);
  CHECK(world.key_loads == 2);  // once per zkey
  CHECK(trims == 8);
  CHECK(r.tracker.trims.count == 8);
  CHECK(r.in_flight == 2 + 3 * 2);
  CHECK(world.proved.size() == 8);
  CHECK(std::set<std::string>(world.proved.begin(), world.proved.end()).size() == 8);
  CHECK(world.most_proving <= 2);
  CHECK(world.files.at("out/a/proof_3.json") == "proof of a3");
  CHECK(world.files.at("out/a/public_0.json") == "public of a0");
  CHECK(world.files.at("out/b/proof.json") == "proof of b0");
  CHECK(world.files.at("out/c/proof_2.json") == "proof of c2");
  CHECK(world.files.size() == 16);
  for (const auto& p : r.tracker.parts) {
    CHECK(p.state == part_state::done);
    CHECK(p.device == 0);
    CHECK(p.spans.size() == 2);
  }
  for (const auto& j : r.tracker.jobs) CHECK(j.finished_ms > 0);
  // The spans reach the shared utilization math on the run's clock.
  auto lines = timelines(r);
  REQUIRE(lines.size() == 8);
  auto u = observe::summarize(lines);
  REQUIRE(u.size() == 1);
  CHECK(u[0].partitions == 8);
  CHECK(u[0].gaps_ms.size() == 7);
  CHECK(u[0].first_ms >= r.load_ms);
  CHECK(u[0].last_ms <= r.wall_ms);
  CHECK(u[0].busy_ms > 0);
}

TEST_CASE("partitions start in priority order, then job order") {
  fake_world world;
  engine_config cfg;
  cfg.synthesizers = 1;
  cfg.in_flight = 1;  // one partition at a time: the prove order is the start order
  auto r =
      run_engine({make_job("low", {"l0"}, priority::low, "k.zkey"),
                  make_job("n", {"n0", "n1"}, priority::normal, "k.zkey"),
                  make_job("crit", {"c0"}, priority::critical, "k.zkey")},
                 world.ops(), world.devices(1), cfg);
  CHECK(r.proofs == 4);
  CHECK(world.proved == std::vector<std::string>{"c0", "n0", "n1", "l0"});
}

TEST_CASE("a missing key, a bad witness and a failing prove fail only their own partitions") {
  fake_world world;
  world.fail_prove = {"a2"};
  engine_config cfg;
  cfg.trim_hook = [] {};
  auto r = run_engine({make_job("a", {"a0", "a1", "a2"}, priority::normal, "k.zkey"),
                       make_job("m", {"m0", "m1"}, priority::normal, "missing.zkey"),
                       make_job("w", {"w0", "bad1"}, priority::normal, "k.zkey")},
                      world.ops(), world.devices(2), cfg);
  CHECK(r.proofs == 3);  // a0, a1, w0
  CHECK(r.failed == 4);  // a2, m0, m1, bad1
  CHECK(r.tracker.trims.count == 3);
  std::map<std::string, std::string> errors;
  for (const auto& p : r.tracker.parts)
    if (p.state == part_state::failed)
      errors[r.tracker.jobs[p.job].id + std::to_string(p.index)] = p.error;
  REQUIRE(errors.size() == 4);
  CHECK(errors["a2"] == "a2: fake device: device fell over");
  CHECK(errors["m0"] == "missing.zkey: no such file");
  CHECK(errors["m1"] == "missing.zkey: no such file");
  CHECK(errors["w1"] == "bad1: not a wtns file");
  CHECK(world.files.count("out/a/proof_1.json") == 1);
  CHECK(world.files.count("out/a/proof_2.json") == 0);
  CHECK(world.files.count("out/w/proof_0.json") == 1);
  for (const auto& j : r.tracker.jobs) CHECK(j.finished_ms > 0);  // every job reached an end
}

TEST_CASE("a GPU worker waits for the tracker lock while a finalizer trims under it") {
  // One lane with a backlog: after each prove the worker needs the lock the
  // finalizer holds for a 40 ms "trim", so the device idles between
  // partitions; without the trim it does not wait on it.
  constexpr auto trim_time = std::chrono::milliseconds(40);
  auto run = [&](bool trim) {
    fake_world world;
    world.prove_time = std::chrono::milliseconds(5);
    engine_config cfg;
    cfg.synthesizers = 2;
    cfg.finalizers = 1;
    cfg.trim = trim;
    cfg.trim_hook = [&] { std::this_thread::sleep_for(trim_time); };
    return run_engine(
        {make_job("a", {"a0", "a1", "a2", "a3", "a4", "a5"}, priority::normal, "k.zkey")},
        world.ops(), world.devices(1), cfg);
  };
  auto with = run(true);
  REQUIRE(with.proofs == 6);
  CHECK(with.tracker.trims.count == 6);
  CHECK(with.tracker.trims.total_ms >= 6 * 35.0);
  const auto& waited = with.tracker.waits[static_cast<int>(role::gpu_worker)];
  CHECK(waited.max_ms >= 20.0);
  CHECK(waited.total_ms >= 80.0);
  auto u = observe::summarize(timelines(with));
  REQUIRE(u.size() == 1);
  CHECK(u[0].gap_max_ms >= 20.0);
  CHECK(u[0].busy_fraction < 0.5);

  auto without = run(false);
  REQUIRE(without.proofs == 6);
  CHECK(without.tracker.trims.count == 0);
}
