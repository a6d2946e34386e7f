// observe/report: the run report's figures and JSON, from a hand-built record
// whose busy time, gaps and rates are worked out in each case.
#include "observe/report.hpp"
#include "tests/support/job_reports.hpp"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "observe/summary.hpp"

using namespace proofline;
using namespace proofline::observe;
using namespace proofline::test;
using json = nlohmann::json;

namespace {

/// Two partitions on one CUDA GPU: 10..20 (upload 10..12, kernels 12..20) and
/// 18..30 (upload 18..21 under the first one's compute, kernels 21..30), then
/// a third after idle time: kernels 34..40. Union 10..30 + 34..40 = 26 ms over
/// a 30 ms window; kernel gaps: 21 - 20 = 1 ms, 34 - 30 = 4 ms.
run_record two_lane_record() {
  partition_report failed;
  failed.index = 3;
  failed.state = partition_state::failed;
  failed.error = {"w3.wtns", "w3.wtns: 1520 witness values, circuit.zkey expects 1521"};
  job_report j = job_with("batch", job_state::done, {});
  j.partitions = {
      proved(0, 0, 0, {{"upload", 10, 12}, {"ntt_a", 12, 15}, {"msm_h", 15, 20}}),
      proved(1, 0, 1, {{"upload", 18, 21}, {"ntt_a", 21, 25}, {"msm_h", 25, 30}}, 12, 22),
      proved(2, 0, 0, {{"ntt_a", 34, 37}, {"msm_h", 37, 40}}), failed};
  return one_gpu_run(2000, 3, 2, 2, 2, {j});
}

}  // namespace

TEST_CASE("the report counts proofs and failures and gives proofs per second of wall time") {
  auto r = build_report(two_lane_record());
  CHECK(r.jobs == 1);
  CHECK(r.partitions == 4);
  CHECK(r.proofs == 3);
  CHECK(r.failed == 1);
  CHECK(r.proofs_per_s == doctest::Approx(1.5));  // 3 proofs in 2 s
  CHECK(r.backend == "cuda");
}

TEST_CASE("GPU busy is the union of device spans over the first-to-last span window") {
  auto r = build_report(two_lane_record());
  REQUIRE(r.gpus.size() == 1);
  const auto& g = r.gpus[0];
  CHECK(g.device == 0);
  CHECK(g.cuda_device == 3);
  CHECK(g.util.partitions == 3);
  CHECK(g.util.busy_ms == doctest::Approx(26));
  CHECK(g.util.wall_ms == doctest::Approx(30));
  CHECK(g.util.busy_fraction == doctest::Approx(26.0 / 30.0));
  REQUIRE(g.util.gaps_ms.size() == 2);
  CHECK(g.util.gap_max_ms == doctest::Approx(4));
  CHECK(g.util.gap_p50_ms == doctest::Approx(1));
  CHECK_FALSE(g.nvml_busy_fraction.has_value());
}

TEST_CASE("NVML's busy fraction is the mean of its samples inside the span window") {
  auto rec = two_lane_record();
  rec.nvml_available = true;
  rec.nvml_devices = {{0, "Other GPU", "GPU-0"}, {3, "NVIDIA H200", "GPU-3"}};
  // Device 3 inside [10, 40]: 90 and 100 -> 0.95; the samples at 5 and 50 ms
  // lie outside the window and device 0's belong to another GPU.
  rec.nvml_samples = {
      {5, 3, 0, 0, 0}, {15, 3, 90, 0, 0}, {25, 3, 100, 0, 0}, {50, 3, 0, 0, 0}, {25, 0, 10, 0, 0}};
  auto r = build_report(rec);
  REQUIRE(r.gpus.size() == 1);
  REQUIRE(r.gpus[0].nvml_busy_fraction.has_value());
  CHECK(*r.gpus[0].nvml_busy_fraction == doctest::Approx(0.95));
  CHECK(r.gpus[0].nvml_samples == 2);
  CHECK(r.gpus[0].name == "NVIDIA H200");  // NVML's name beats the backend's description
}

TEST_CASE("stage times are nearest-rank percentiles of the partitions' stage spans") {
  auto r = build_report(two_lane_record());
  // Synthesis lasts 4 ms and finalization 2 ms in every proved partition;
  // proving is 11, 13 and 7 ms (device extent + 1 ms).
  CHECK(r.synthesize.count == 3);
  CHECK(r.synthesize.p50_ms == doctest::Approx(4));
  CHECK(r.finalize.max_ms == doctest::Approx(2));
  CHECK(r.prove.p50_ms == doctest::Approx(11));
  CHECK(r.prove.max_ms == doctest::Approx(13));
  CHECK(r.prove.total_ms == doctest::Approx(31));
}

TEST_CASE("the report JSON has the documented keys and values") {
  auto rec = two_lane_record();
  memory_stats m;
  m.budget = 8ull << 30;
  m.peak_reserved = 3ull << 30;
  m.peak_rss = 5ull << 30;
  m.purges_run = 7;
  m.purges = 9;
  m.purge_ms_total = 12.5;
  m.purge_threads = {"pl.memory"};
  rec.memory = m;
  rec.nvml_why = "libnvidia-ml.so.1: cannot open shared object file";
  rec.queues = {{0, 0, 4, 0, 0}, {100, 2, 1, 1 << 20, 2 << 20}};
  auto j = json::parse(report_json(build_report(rec)));
  CHECK(j["proofs"] == 3);
  CHECK(j["wall_s"].get<double>() == doctest::Approx(2.0));
  CHECK(j["proofs_per_s"].get<double>() == doctest::Approx(1.5));
  REQUIRE(j["gpus"].size() == 1);
  const auto& g = j["gpus"][0];
  CHECK(g["device"] == 0);
  CHECK(g["name"] == "CUDA device 3: Test GPU");
  CHECK(g["gpu_busy_fraction"].get<double>() == doctest::Approx(26.0 / 30.0));
  CHECK(g["nvml_busy_fraction"].is_null());
  CHECK(g["handoff_gap_ms"]["max"].get<double>() == doctest::Approx(4));
  CHECK(g["handoff_gap_ms"]["count"] == 2);
  CHECK(j["memory"]["budget_bytes"] == (8ull << 30));
  CHECK(j["memory"]["peak_reserved_bytes"] == (3ull << 30));
  CHECK(j["memory"]["peak_rss_bytes"] == (5ull << 30));
  CHECK(j["purge"]["count"] == 7);
  CHECK(j["purge"]["total_ms"].get<double>() == doctest::Approx(12.5));
  CHECK(j["purge"]["threads"] == json::array({"pl.memory"}));
  CHECK(j["nvml"]["available"] == false);
  CHECK(j["nvml"]["reason"] == "libnvidia-ml.so.1: cannot open shared object file");
  REQUIRE(j["queues"].size() == 2);
  CHECK(j["queues"][1]["t_s"].get<double>() == doctest::Approx(0.1));
  CHECK(j["queues"][1]["ready_partitions"] == 2);
  CHECK(j["queues"][0]["waiting_for_memory"] == 4);
}

TEST_CASE("a backend that proved nothing still has its entry, idle") {
  auto rec = two_lane_record();
  rec.backends.push_back({"cuda", "CUDA device 5: Idle GPU", 5, 2});
  auto r = build_report(rec);
  REQUIRE(r.gpus.size() == 2);
  CHECK(r.gpus[1].device == 1);
  CHECK(r.gpus[1].cuda_device == 5);
  CHECK(r.gpus[1].util.partitions == 0);
  CHECK(r.gpus[1].util.busy_fraction == 0);
}

TEST_CASE("synthesizer and finalizer lanes are numbered by actor id, in spawn order") {
  auto parts = partitions_of(two_lane_record());
  REQUIRE(parts.size() == 4);
  CHECK(parts[0].synthesizer == 0);   // actor 11
  CHECK(parts[1].synthesizer == 1);   // actor 12
  CHECK(parts[1].finalizer == 1);     // actor 22
  CHECK(parts[3].synthesizer == -1);  // failed before any stage ran
  CHECK(parts[3].job == "batch");
}

TEST_CASE("long queue series are thinned to the deepest value of each stretch") {
  std::vector<queue_sample> q;
  for (int i = 0; i < 10; ++i)
    q.push_back({i * 100.0, static_cast<uint64_t>(i == 7 ? 9 : 1), 0, 0, 0});
  auto thin = thin_queue_samples(q, 5);
  REQUIRE(thin.size() == 5);
  CHECK(thin[0].t_ms == 0);
  CHECK(thin[3].t_ms == 600);
  CHECK(thin[3].ready == 9);  // samples 6 and 7: the deeper one wins
  CHECK(thin[4].ready == 1);
  CHECK(thin_queue_samples(q, 20).size() == 10);
}

TEST_CASE("NVML samples whose averaging period reaches back before the window are left out") {
  // Window [0, 1000]: the sample at 50 ms still averages idle time from
  // before the first span; those at 500 and 800 lie wholly inside.
  std::vector<gpu::nvml_sample> s{{50, 0, 10, 0, 0}, {500, 0, 100, 0, 0}, {800, 0, 98, 0, 0}};
  uint64_t n = 0;
  CHECK(nvml_busy_fraction(s, 0, 0, 1000, &n, nvml_lookback_ms).value() == doctest::Approx(0.99));
  CHECK(n == 2);
  CHECK(nvml_busy_fraction(s, 0, 0, 1000, &n).value() == doctest::Approx(208.0 / 300));
  CHECK(n == 3);
  // A window shorter than the lookback keeps its samples rather than none.
  CHECK(nvml_busy_fraction(s, 0, 0, 100, &n, nvml_lookback_ms).value() == doctest::Approx(0.10));
  CHECK(n == 1);
}

TEST_CASE("NVML's mean over a window with no samples is absent, not zero") {
  std::vector<gpu::nvml_sample> s{{5, 0, 50, 0, 0}};
  uint64_t n = 99;
  CHECK_FALSE(nvml_busy_fraction(s, 0, 10, 20, &n).has_value());
  CHECK(n == 0);
  CHECK(nvml_busy_fraction(s, 0, 0, 20).value() == doctest::Approx(0.5));
}

TEST_CASE("the summary prints each GPU's busy fraction beside NVML's, and its gaps") {
  auto rec = two_lane_record();
  rec.nvml_available = true;
  rec.nvml_devices = {{3, "NVIDIA H200", "GPU-3"}};
  rec.nvml_samples = {{15, 3, 90, 0, 0}, {25, 3, 100, 0, 0}};
  std::ostringstream out;
  print_gpu_figures(out, build_report(rec));
  CHECK(out.str() ==
        "GPU 0 (NVIDIA H200): busy 86.7% of 0.030 s (NVML 95.0% over 2 samples), 3 partitions; "
        "hand-off gap p50 1.000 ms, p99 4.000 ms, max 4.000 ms (2 gaps)\n");
}

TEST_CASE("the summary says why a CUDA run has no NVML figure") {
  auto rec = two_lane_record();
  rec.nvml_why = "libnvidia-ml.so.1: cannot open shared object file";
  std::ostringstream out;
  print_gpu_figures(out, build_report(rec));
  CHECK(out.str().find("busy 86.7% of 0.030 s, 3 partitions") != std::string::npos);
  CHECK(out.str().find("NVML: no samples (libnvidia-ml.so.1: cannot open shared object file)\n") !=
        std::string::npos);
}

TEST_CASE("start-up: first GPU work and first proof, each key's costs, and busy with key preparation") {
  auto rec = two_lane_record();  // partitions' device work 10..30 and 34..40, first proof at 21
  key_startup k;
  k.path = "circuit.zkey";
  k.bytes = 3 << 20;
  k.read = {1, 4};
  key_preparation d;
  d.gpu = 0;
  d.prepare = {4, 9};
  d.to_device_ms = 2;
  d.tables_ms = 3;
  d.tables_bytes = 5 << 20;
  d.device_bytes = 6 << 20;
  d.spans = {{"key_upload", 4, 6}, {"key_tables", 6, 9}};
  k.devices.push_back(d);
  rec.keys.push_back(k);
  memory_stats m;
  m.pool = 64 << 20;
  m.pool_pinned = true;
  m.pool_pin_ms = 7.5;
  rec.memory = m;

  auto r = build_report(rec);
  REQUIRE(r.startup.first_gpu_work_ms.has_value());
  CHECK(*r.startup.first_gpu_work_ms == doctest::Approx(4));  // the key's upload
  REQUIRE(r.startup.first_proof_ms.has_value());
  CHECK(*r.startup.first_proof_ms == doctest::Approx(23));  // partition 0 finalized at 20 + 3
  REQUIRE(r.gpus.size() == 1);
  CHECK(r.gpus[0].util.busy_fraction == doctest::Approx(26.0 / 30.0));  // partitions only
  // With the key's 5 ms: 31 ms busy over the window 4..40.
  CHECK(r.gpus[0].busy_fraction_with_keys == doctest::Approx(31.0 / 36.0));

  auto j = json::parse(report_json(r));
  const auto& s = j["startup"];
  CHECK(s["first_gpu_work_ms"].get<double>() == doctest::Approx(4));
  CHECK(s["first_proof_ms"].get<double>() == doctest::Approx(23));
  REQUIRE(s["keys"].size() == 1);
  CHECK(s["keys"][0]["path"] == "circuit.zkey");
  CHECK(s["keys"][0]["bytes"] == (3 << 20));
  CHECK(s["keys"][0]["read_ms"].get<double>() == doctest::Approx(3));
  CHECK(s["keys"][0]["to_device_ms"].get<double>() == doctest::Approx(2));
  CHECK(s["keys"][0]["tables_ms"].get<double>() == doctest::Approx(3));
  CHECK(s["keys"][0]["tables_bytes"] == (5 << 20));
  CHECK(s["keys"][0]["device_bytes"] == (6 << 20));
  CHECK(s["pool"]["bytes"] == (64 << 20));
  CHECK(s["pool"]["pinned"] == true);
  CHECK(s["pool"]["pin_ms"].get<double>() == doctest::Approx(7.5));
  CHECK(j["gpus"][0]["gpu_busy_fraction_with_keys"].get<double>() == doctest::Approx(31.0 / 36.0));

  std::ostringstream line;
  print_startup(line, r.startup);
  CHECK(line.str() ==
        "start-up: first GPU work 4.0 ms, first proof 23.0 ms; key circuit.zkey read 3.0 ms, "
        "prepared 5.0 ms (to device 2.0 ms, tables 3.0 ms); pool 64 MiB pinned in 7.5 ms\n");
  std::ostringstream cpu_line;
  print_startup(cpu_line, r.startup, /*gpu=*/false);
  CHECK(cpu_line.str().rfind("start-up: first proving work 4.0 ms", 0) == 0);
}

TEST_CASE("each GPU reports the keys it prepared and what preparing them took") {
  auto rec = two_lane_record();
  rec.backends.push_back({"cuda", "CUDA device 1: H200", 1, 2});
  key_startup k;
  k.path = "circuit.zkey";
  key_preparation d0;
  d0.gpu = 0;
  d0.prepare = {4, 9};
  d0.to_device_ms = 2;
  key_preparation d1;
  d1.gpu = 1;
  d1.prepare = {4, 16};
  d1.to_device_ms = 7;
  k.devices = {d0, d1};
  rec.keys.push_back(k);
  key_startup other;
  other.path = "other.zkey";
  key_preparation o1;
  o1.gpu = 1;
  o1.prepare = {20, 23};
  other.devices = {o1};
  rec.keys.push_back(other);

  auto r = build_report(rec);
  REQUIRE(r.gpus.size() == 2);
  CHECK(r.gpus[0].keys_prepared == 1);
  CHECK(r.gpus[0].key_prepare_ms == doctest::Approx(5));
  CHECK(r.gpus[1].keys_prepared == 2);
  CHECK(r.gpus[1].key_prepare_ms == doctest::Approx(15));
  CHECK(r.gpus[1].key_to_device_ms == doctest::Approx(7));
  auto j = json::parse(report_json(r));
  CHECK(j["gpus"][1]["keys_prepared"] == 2);
  CHECK(j["gpus"][1]["key_prepare_ms"].get<double>() == doctest::Approx(15));
  CHECK(j["gpus"][0]["key_to_device_ms"].get<double>() == doctest::Approx(2));
  std::ostringstream out;
  print_gpu_figures(out, r);
  CHECK(out.str().find("(2 gaps); 1 key prepared in 5.0 ms\n") != std::string::npos);
  CHECK(out.str().find("GPU 1 (CUDA device 1: H200): busy 0.0% of 0.000 s, 0 partitions; "
                       "hand-off gap p50 0.000 ms, p99 0.000 ms, max 0.000 ms (0 gaps); "
                       "2 keys prepared in 15.0 ms\n") != std::string::npos);
}

TEST_CASE("the CPU time over the proving window comes from the samples, interpolated at its ends") {
  auto rec = two_lane_record();  // device spans from 10 to 40 ms, 3 partitions proved
  // CPU time 100 ms at 0, 140 at 20, 200 at 40: 120 at 10, so 80 ms over 30.
  rec.queues = {{0, 0, 0, 0, 0, 100}, {20, 0, 0, 0, 0, 140}, {40, 0, 0, 0, 0, 200}};
  auto r = build_report(rec);
  REQUIRE(r.cpu.has_value());
  CHECK(r.cpu->window_ms == doctest::Approx(30));
  CHECK(r.cpu->cpu_ms == doctest::Approx(80));
  CHECK(r.cpu->partitions == 3);
  CHECK(r.cpu->per_partition_ms == doctest::Approx(80.0 / 3));
  CHECK(r.cpu->cores == doctest::Approx(80.0 / 30));
  auto j = json::parse(report_json(r));
  CHECK(j["cpu"]["cpu_ms"].get<double>() == doctest::Approx(80));
  CHECK(j["cpu"]["cores"].get<double>() == doctest::Approx(80.0 / 30));
  CHECK(j["queues"][2]["cpu_s"].get<double>() == doctest::Approx(0.2));
  std::ostringstream out;
  print_gpu_figures(out, r);
  CHECK(out.str().find("CPU while the GPUs proved: 2.67 cores on average, 26.7 ms of CPU time a partition "
                       "(user + system, every thread, over 0.030 s)\n") != std::string::npos);

  SUBCASE("samples that end before the window does give no figure") {
    rec.queues.pop_back();
    CHECK_FALSE(build_report(rec).cpu.has_value());
  }
  SUBCASE("a sample without CPU time around an end gives no figure") {
    rec.queues[0].cpu_ms = -1;
    CHECK_FALSE(build_report(rec).cpu.has_value());
    CHECK(json::parse(report_json(build_report(rec)))["cpu"].is_null());
  }
  SUBCASE("a sample exactly at an end is taken as it is") {
    CHECK(*cpu_at(rec.queues, 20) == doctest::Approx(140));
    CHECK_FALSE(cpu_at(rec.queues, 41).has_value());
    CHECK_FALSE(cpu_at(rec.queues, -1).has_value());
  }
}
